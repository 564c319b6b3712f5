//! PLTS-RR, per-flow round robin (Dixit et al., the PLTS paper, §III-A.3): each switch
//! remembers, per flow, the next hop taken by the flow's previous packet and sends the next
//! packet to the following candidate.
//!
//! Deviations: a flow is the 4-tuple (addresses, UDP ports); its first packet starts where the
//! switch's ECMP hash would put it (the paper leaves the start open), so flows start spread.
//! The paper does not say when a switch forgets a flow; ours ages the table as a switch's
//! flow table would: an entry idle for `idle_timeout_ns` (default 10 ms, 0 = never) is removed
//! by a sweep that runs at most once per timeout, at the first packet after it is due, so a
//! flow that resumes after such a gap starts again at its ECMP position. A table entry is made
//! on a flow's first packet after a gap, never on later ones. The paper's per-prefix variant
//! is not modelled.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::Deserialize;

use super::chooser::{Chooser, EgressChoice, EgressChooser};
use super::ecmp::EcmpHash;
use super::packet::{EgressCandidate, PacketMeta};
use crate::error::{check_int, ParamError};
use crate::rng::SimRng;
use crate::scheme::{Scheme, SwitchRole};
use crate::time::SimTime;

/// Parameters of `plts-rr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PltsRrConfig {
    /// A flow idle this long is forgotten, in ns (0: never).
    pub idle_timeout_ns: u64,
}

impl Default for PltsRrConfig {
    fn default() -> Self {
        PltsRrConfig {
            idle_timeout_ns: 10_000_000,
        }
    }
}

impl PltsRrConfig {
    /// Checks the range.
    ///
    /// # Errors
    /// `idle_timeout_ns` above 10 s.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_int("idle_timeout_ns", self.idle_timeout_ns, 0, 10_000_000_000)
    }
}

/// One flow's table entry.
#[derive(Debug, Clone, Copy)]
struct FlowSlot {
    /// Candidate index of the flow's next packet.
    next: u32,
    /// When the flow's last packet passed.
    last_seen: SimTime,
}

/// The hasher of the switch's per-flow tables: a multiply-rotate word hash (the one rustc uses
/// internally, written here from its published description), fixed-keyed, so tables behave the
/// same in every run; it costs a few nanoseconds where SipHash costs tens. The tables are only
/// looked up, never iterated, so decisions never depend on the hash anyway.
#[derive(Debug, Clone, Copy, Default)]
pub struct WordHasher(u64);

impl WordHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            for (d, s) in w.iter_mut().zip(chunk) {
                *d = *s;
            }
            self.add(u64::from_le_bytes(w));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
}

/// Builds [`WordHasher`]s for the switch tables.
pub(crate) type TableHasher = BuildHasherDefault<WordHasher>;

/// Per-flow round-robin egress.
#[derive(Debug, Clone)]
pub struct PltsRr {
    ecmp: EcmpHash,
    next: HashMap<(u32, u32, u16, u16), FlowSlot, TableHasher>,
    idle_timeout_ns: u64,
    next_sweep: SimTime,
}

impl PltsRr {
    /// A table-less chooser; `ecmp` places each flow's first packet.
    #[must_use]
    pub fn new(ecmp: EcmpHash, config: &PltsRrConfig) -> Self {
        PltsRr {
            ecmp,
            next: HashMap::default(),
            idle_timeout_ns: config.idle_timeout_ns,
            next_sweep: SimTime::from_ns(config.idle_timeout_ns),
        }
    }

    /// Forgets the flows idle for the timeout or longer; runs at most once per timeout.
    fn age(&mut self, now: SimTime) {
        if self.idle_timeout_ns == 0 || now < self.next_sweep {
            return;
        }
        let timeout = self.idle_timeout_ns;
        self.next
            .retain(|_, e| now.saturating_since(e.last_seen).as_ns() < timeout);
        self.next_sweep = SimTime::from_ns(now.as_ns().saturating_add(timeout));
    }

    /// Flows in the table.
    #[must_use]
    pub fn flows(&self) -> usize {
        self.next.len()
    }
}

impl EgressChooser for PltsRr {
    const READS_PORT_LOAD: bool = false;

    fn choose(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        candidates: &[EgressCandidate],
        _rng: &mut SimRng,
    ) -> EgressChoice {
        self.age(now);
        let n = candidates.len().max(1);
        let key = (pkt.sip, pkt.dip, pkt.sport.0, pkt.dport);
        let ecmp = &self.ecmp;
        let slot = self.next.entry(key).or_insert_with(|| FlowSlot {
            next: u32::try_from(ecmp.index(pkt, n)).unwrap_or(0),
            last_seen: now,
        });
        let i = usize::try_from(slot.next).unwrap_or(0) % n;
        slot.next = u32::try_from((i + 1) % n).unwrap_or(0);
        slot.last_seen = now;
        EgressChoice::at(i)
    }
}

impl Scheme for PltsRr {
    type Config = PltsRrConfig;

    fn validate(config: &PltsRrConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl SwitchRole for PltsRr {
    type Agent = Chooser<PltsRr>;

    fn agent(config: &PltsRrConfig, _switch_id: u32, ecmp: EcmpHash) -> Chooser<PltsRr> {
        Chooser(PltsRr::new(ecmp, config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::test_support::{cands, data};

    #[test]
    fn each_flow_cycles_through_every_candidate() {
        let mut c = PltsRr::new(EcmpHash::new(4), &PltsRrConfig::default());
        let mut rng = SimRng::new(0);
        let cs = cands(&[0, 0, 0, 0]);
        for flow in 0..3u32 {
            let first = c.choose(SimTime::ZERO, &data(flow, 0), &cs, &mut rng).index;
            assert_eq!(first, EcmpHash::new(4).index(&data(flow, 0), 4));
            for psn in 1..9 {
                let i = c
                    .choose(SimTime::ZERO, &data(flow, psn), &cs, &mut rng)
                    .index;
                assert_eq!(i, (first + psn as usize) % 4, "flow {flow} psn {psn}");
            }
        }
        assert_eq!(c.flows(), 3);
    }

    /// Sends `psns` packets of `flow` at `t_ns` and returns the candidate of each.
    fn send(c: &mut PltsRr, flow: u32, psns: std::ops::Range<u32>, t_ns: u64) -> Vec<usize> {
        let mut rng = SimRng::new(0);
        let cs = cands(&[0, 0, 0, 0]);
        psns.map(|psn| {
            c.choose(SimTime::from_ns(t_ns), &data(flow, psn), &cs, &mut rng)
                .index
        })
        .collect()
    }

    #[test]
    fn idle_flows_are_forgotten_after_the_timeout_and_restart_at_ecmp() {
        let cfg = PltsRrConfig {
            idle_timeout_ns: 1_000,
        };
        let mut c = PltsRr::new(EcmpHash::new(4), &cfg);
        let start = EcmpHash::new(4).index(&data(0, 0), 4);
        // Flow 0 sends 3 packets at t = 0, cycling on from its ECMP start.
        assert_eq!(
            send(&mut c, 0, 0..3, 0),
            [start, (start + 1) % 4, (start + 2) % 4]
        );
        // Flow 1 stays active; at 999 ns nothing is due yet: flow 0 continues its cycle.
        send(&mut c, 1, 0..1, 999);
        assert_eq!(send(&mut c, 0, 3..4, 999), [(start + 3) % 4]);
        assert_eq!(c.flows(), 2);
        // First sweep at 1,000 ns: flow 0 (last seen 999) and flow 1 (999) are kept.
        send(&mut c, 1, 1..2, 1_000);
        assert_eq!(c.flows(), 2);
        // Next sweep due at 2,000 ns: flow 0 has been idle 1,001 ns and is forgotten; flow 1
        // (seen at 1,000 ns) is exactly at the timeout and is forgotten too.
        send(&mut c, 2, 0..1, 2_000);
        assert_eq!(c.flows(), 1);
        // Flow 0 comes back: it starts again at its ECMP position.
        assert_eq!(send(&mut c, 0, 4..5, 2_000), [start]);
    }

    #[test]
    fn a_zero_timeout_never_ages() {
        let cfg = PltsRrConfig { idle_timeout_ns: 0 };
        let mut c = PltsRr::new(EcmpHash::new(4), &cfg);
        let start = EcmpHash::new(4).index(&data(0, 0), 4);
        send(&mut c, 0, 0..1, 0);
        send(&mut c, 1, 0..1, u64::MAX / 2);
        assert_eq!(c.flows(), 2);
        assert_eq!(send(&mut c, 0, 1..2, u64::MAX / 2), [(start + 1) % 4]);
    }
}
