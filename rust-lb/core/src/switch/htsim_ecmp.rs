//! Flow ECMP at a switch as the REPS authors' simulator runs it (htsim in
//! tommasobo/REPS_EuroSys_Artifact: `FatTreeSwitch::getNextHop`, strategy ECMP, and
//! `permute_paths`), so that a run of the REPS paper's Fig. 2 setup (§4) meets the same hash
//! collisions as the authors' run with the same seed. Host algorithms steer
//! through it exactly as through [`super::ecmp::EcmpHash`]: the entropy is the path id.
//!
//! * `index = bridge_hash(key, path, salt) % n` ([`crate::hash::bridge_hash`]):
//!   - `key`: the flow's source and destination host ids written one after the other in
//!     decimal and read back as a number (htsim's `setHashId`: hosts 18 and 694 give 18694).
//!     Data carries the flow's own order; an ACK/NACK (which travels from the destination) is
//!     keyed by the same flow, as htsim's sink is.
//!   - `path`: the entropy (data: the source port; ACK/NACK: the echoed entropy).
//!   - `salt`: the switch's own `random()` draw, made when htsim builds it.
//! * The index picks from the switch's equal-cost ports in an order shuffled on first use by
//!   a Fisher–Yates from the same `random()` stream (`random() % (n - i)`, swapped with the
//!   `n - 1 - i`-th, for `i` in `0..n`). A ToR (a switch with host ports) shuffles once for
//!   every destination; any other switch once per destination host, as htsim's aggregation
//!   switches do.
//!
//! Deviations: the stream is shared by the switches only (htsim's hosts, ECN marking and
//! drops draw from it too: the model skips the draws htsim makes before the first packet,
//! see `use_htsim_switches` in the bridge, but not those made during the run, so shuffles drawn
//! after the first packets differ from htsim's while keeping their distribution); a one-port
//! route is not looked up here, so htsim's single draw for a ToR with one uplink is not made.
//! The key wraps at 2^32 where htsim's `stoi` would fail (more than 5 digits per host id).

use super::chooser::{EgressChoice, EgressChooser};
use super::packet::{EgressCandidate, PacketKind, PacketMeta};
use crate::hash::bridge_hash;
use crate::rng::{SharedHtsimRand, SimRng};
use crate::time::SimTime;

/// The host id of a host address (the model's addressing: `(ip >> 8) & 0xffff`).
#[must_use]
pub fn host_id(ip: u32) -> u32 {
    (ip >> 8) & 0xffff
}

/// htsim's flow key: `src` and `dst` written in decimal one after the other, as a number
/// (wrapping at 2^32).
#[must_use]
pub fn flow_key(src: u32, dst: u32) -> u32 {
    let mut shift = 10_u64;
    while shift <= u64::from(dst) {
        shift *= 10;
    }
    let key = u64::from(src) * shift + u64::from(dst);
    u32::try_from(key & u64::from(u32::MAX)).unwrap_or(0)
}

/// One switch's htsim ECMP.
#[derive(Debug, Clone)]
pub struct HtsimEcmp {
    salt: u32,
    is_tor: bool,
    stream: SharedHtsimRand,
    /// A ToR's one shuffle (empty until its first multi-port route).
    tor_order: Vec<u32>,
    /// Another switch's shuffle per destination host id (empty = not drawn yet).
    dst_order: Vec<Vec<u32>>,
}

impl HtsimEcmp {
    /// The ECMP of a switch whose salt is `salt`, a ToR if `is_tor`, shuffling from `stream`.
    #[must_use]
    pub fn new(salt: u32, is_tor: bool, stream: SharedHtsimRand) -> Self {
        HtsimEcmp {
            salt,
            is_tor,
            stream,
            tor_order: Vec::new(),
            dst_order: Vec::new(),
        }
    }

    /// The hash of `pkt`, before the modulo.
    #[must_use]
    pub fn hash(&self, pkt: &PacketMeta) -> u32 {
        let (src, dst, path) = match pkt.kind {
            PacketKind::Data => (pkt.sip, pkt.dip, pkt.sport.0),
            _ => (pkt.dip, pkt.sip, pkt.dport),
        };
        bridge_hash(
            flow_key(host_id(src), host_id(dst)),
            u32::from(path),
            self.salt,
        )
    }

    /// The index among `n` candidates for `pkt` (shuffling on the first use of the route; a
    /// route of another width than the shuffle's, which fat trees never have, draws anew).
    pub fn index(&mut self, pkt: &PacketMeta, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        let h = usize::try_from(self.hash(pkt)).unwrap_or(0) % n;
        let order = if self.is_tor {
            &mut self.tor_order
        } else {
            let dst = usize::try_from(host_id(pkt.dip)).unwrap_or(0);
            if self.dst_order.len() <= dst {
                self.dst_order.resize_with(dst + 1, Vec::new);
            }
            match self.dst_order.get_mut(dst) {
                Some(o) => o,
                None => return h,
            }
        };
        if order.len() != n {
            *order = shuffle(&self.stream, n);
        }
        order.get(h).map_or(h, |&i| usize::try_from(i).unwrap_or(0))
    }

    /// The shuffle a route to `dst_host` uses, if drawn (for tests and traces).
    #[must_use]
    pub fn order(&self, dst_host: u32) -> Option<&[u32]> {
        let o = if self.is_tor {
            &self.tor_order
        } else {
            self.dst_order.get(usize::try_from(dst_host).ok()?)?
        };
        (!o.is_empty()).then_some(o.as_slice())
    }
}

/// htsim's `permute_paths` of `0..n`, drawn from `stream`.
fn shuffle(stream: &SharedHtsimRand, n: usize) -> Vec<u32> {
    let mut order: Vec<u32> = (0..u32::try_from(n).unwrap_or(u32::MAX)).collect();
    let Ok(mut stream) = stream.lock() else {
        return order;
    };
    for i in 0..n {
        let left = u32::try_from(n - i).unwrap_or(1);
        let ix = usize::try_from(stream.random() % left).unwrap_or(0);
        order.swap(ix, n - 1 - i);
    }
    order
}

impl EgressChooser for HtsimEcmp {
    const READS_PORT_LOAD: bool = false;

    fn choose(
        &mut self,
        _now: SimTime,
        pkt: &PacketMeta,
        candidates: &[EgressCandidate],
        _rng: &mut SimRng,
    ) -> EgressChoice {
        EgressChoice::at(self.index(pkt, candidates.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::HtsimRand;
    use crate::units::Entropy;
    use std::sync::{Arc, Mutex};

    fn addr(host: u32) -> u32 {
        0x0b00_0001 + ((host / 256) << 16) + ((host % 256) << 8)
    }

    fn data(src: u32, dst: u32, entropy: u16) -> PacketMeta {
        PacketMeta {
            kind: PacketKind::Data,
            sip: addr(src),
            dip: addr(dst),
            sport: Entropy(entropy),
            size_bytes: 4150,
            ..PacketMeta::default()
        }
    }

    #[test]
    fn flow_key_concatenates_decimal_ids() {
        assert_eq!(flow_key(18, 694), 18_694);
        assert_eq!(flow_key(964, 91), 96_491);
        assert_eq!(flow_key(3, 0), 30);
        assert_eq!(flow_key(0, 5), 5);
        assert_eq!(flow_key(1023, 1022), 10_231_022);
        assert_eq!(host_id(addr(1000)), 1000);
    }

    /// The REPS artifact's Fig. 2 run (`htsim_uec -seed 42`, 32 ToRs x 32 hosts, 32 spines,
    /// ECMP, its permutation `perm_n1024_s4194304.cm`), printed from a debug build: the
    /// stream's first 64 draws salt the 32 ToRs and 32 spines, the next 3,104 go to the spines'
    /// failure draws (32), the NICs (1,024) and the connections (2 x 1,024); then the ToR of
    /// the first connection (964 -> 91, ToR 30) shuffles its uplinks at the first packet, and
    /// the ToR of the second (18 -> 694, ToR 0) next.
    #[test]
    fn reproduces_the_artifacts_first_shuffles_and_choices() {
        let stream = Arc::new(Mutex::new(HtsimRand::new(42)));
        let salts: Vec<u32> = {
            let mut s = stream.lock().unwrap();
            let v = (0..64).map(|_| s.random()).collect();
            s.skip(32 + 1024 + 2 * 1024);
            v
        };
        let mut tor30 = HtsimEcmp::new(salts[30], true, Arc::clone(&stream));
        let mut tor0 = HtsimEcmp::new(salts[0], true, Arc::clone(&stream));
        // Connection 0 (964 -> 91) carries path id 0; its hash picks slot 4 of 32.
        let p0 = data(964, 91, 0);
        assert_eq!(tor30.hash(&p0) % 32, 4);
        let up = tor30.index(&p0, 32);
        // The artifact's shuffled uplinks of ToR 30 begin with spines 21, 16, 18, 25, 27.
        let order = tor30.order(91).unwrap();
        assert_eq!(order[..5], [21, 16, 18, 25, 27]);
        assert_eq!(up, order[4] as usize);
        // ToR 0 shuffles next: spines 21, 24, 7, 17, 28, 6, ...
        let p1 = data(18, 694, 1);
        assert_eq!(tor0.hash(&p1) % 32, 30);
        tor0.index(&p1, 32);
        assert_eq!(tor0.order(694).unwrap()[..6], [21, 24, 7, 17, 28, 6]);
        // A ToR keeps one shuffle for every destination; the same flow keeps its port.
        let before = stream.lock().unwrap().clone().random();
        assert_eq!(
            tor30.index(&data(964, 500, 7), 32),
            tor30.index(&data(964, 500, 7), 32)
        );
        assert_eq!(stream.lock().unwrap().clone().random(), before);
    }

    #[test]
    fn ack_hashes_as_its_flow_and_other_switches_shuffle_per_destination() {
        let stream = Arc::new(Mutex::new(HtsimRand::new(1)));
        let mut agg = HtsimEcmp::new(77, false, Arc::clone(&stream));
        let d = data(5, 40, 9);
        let ack = PacketMeta {
            kind: PacketKind::Ack,
            sip: d.dip,
            dip: d.sip,
            sport: Entropy(3),
            dport: 9,
            ..PacketMeta::default()
        };
        assert_eq!(agg.hash(&d), agg.hash(&ack));
        let draws = |s: &SharedHtsimRand| s.lock().unwrap().clone().random();
        agg.index(&d, 4);
        let after_first = draws(&stream);
        agg.index(&data(6, 40, 1), 4);
        assert_eq!(draws(&stream), after_first, "one shuffle per destination");
        assert!(agg.order(41).is_none());
        agg.index(&data(5, 41, 9), 4);
        assert_ne!(draws(&stream), after_first, "a new destination draws");
        // Each shuffle is a permutation of the ports.
        for dst in [40, 41] {
            let mut o = agg.order(dst).unwrap().to_vec();
            o.sort_unstable();
            assert_eq!(o, [0, 1, 2, 3]);
        }
        assert_eq!(agg.index(&d, 1), 0);
    }
}
