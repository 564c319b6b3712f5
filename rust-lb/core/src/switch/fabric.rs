//! What the path-based switch schemes (CONGA, LetFlow, ConWeave) learn about the fabric
//! at setup, as the reference's ToRs learn it: the switch's ports, which ToR every host hangs off,
//! and at a ToR the sorted set of shortest paths to every other ToR. Also the flowlet table they
//! share, keyed as the reference simulator keys it.
//!
//! Everything is filled before the first packet; per-packet lookups allocate nothing.
//!
//! Not in the reference (its fabrics never fail a link): [`Fabric::live_paths`] drops the paths
//! whose first hop routing has withdrawn, so a scheme drawing paths never draws a dead one.

use std::collections::HashMap;

use super::agent::{candidate_index, PathId, PortInfo};
use super::packet::{EgressCandidate, PacketMeta};
use super::plts_rr::TableHasher;
use crate::time::SimTime;

/// A switch's view of the fabric.
#[derive(Debug, Clone, Default)]
pub struct Fabric {
    /// This switch's node id.
    switch_id: u32,
    /// Whether any port faces a host (the switch is a ToR).
    is_tor: bool,
    /// Line rate of each port, by port index (0 = unknown).
    port_rate_bps: Vec<u64>,
    /// Host address -> node id of its ToR.
    host_tor: HashMap<u32, u32, TableHasher>,
    /// Remote ToR node id -> its slot in `paths`.
    tor_slot: HashMap<u32, usize, TableHasher>,
    /// Per remote ToR slot: its node id and the paths to it, sorted by id, no duplicates.
    paths: Vec<(u32, Vec<PathId>)>,
    /// Per remote ToR slot: the distinct first-hop ports of its paths.
    first_hops: Vec<Vec<u32>>,
}

impl Fabric {
    /// The empty view of switch `switch_id`.
    #[must_use]
    pub fn new(switch_id: u32) -> Self {
        Fabric {
            switch_id,
            ..Fabric::default()
        }
    }

    /// Learns one port.
    pub fn add_port(&mut self, port: PortInfo) {
        self.is_tor |= port.faces_host;
        let Ok(p) = usize::try_from(port.port) else {
            return;
        };
        if p >= self.port_rate_bps.len() {
            self.port_rate_bps.resize(p + 1, 0);
        }
        if let Some(r) = self.port_rate_bps.get_mut(p) {
            *r = port.rate_bps;
        }
    }

    /// Learns that `host_ip` hangs off ToR `tor`.
    pub fn add_host(&mut self, host_ip: u32, tor: u32) {
        self.host_tor.insert(host_ip, tor);
    }

    /// Learns one path to ToR `dst_tor`; returns the slot of `dst_tor` and the index the path
    /// got in its sorted list, or `None` if it was known already.
    pub fn add_path(&mut self, dst_tor: u32, path: PathId) -> Option<(usize, usize)> {
        let slot = *self.tor_slot.entry(dst_tor).or_insert_with(|| {
            self.paths.push((dst_tor, Vec::new()));
            self.first_hops.push(Vec::new());
            self.paths.len() - 1
        });
        let (_, list) = self.paths.get_mut(slot)?;
        let i = list.binary_search(&path).err()?;
        list.insert(i, path);
        if let (Some(hops), Some(port)) = (self.first_hops.get_mut(slot), path.port_at(0)) {
            if !hops.contains(&port) {
                hops.push(port);
            }
        }
        Some((slot, i))
    }

    /// This switch's node id.
    #[must_use]
    pub fn switch_id(&self) -> u32 {
        self.switch_id
    }

    /// Whether the switch is a ToR.
    #[must_use]
    pub fn is_tor(&self) -> bool {
        self.is_tor
    }

    /// The ToR of `host_ip`, if known.
    #[must_use]
    pub fn tor_of(&self, host_ip: u32) -> Option<u32> {
        self.host_tor.get(&host_ip).copied()
    }

    /// The slot of remote ToR `tor` (ToRs this ToR has paths to).
    #[must_use]
    pub fn slot_of(&self, tor: u32) -> Option<usize> {
        self.tor_slot.get(&tor).copied()
    }

    /// Remote ToR slots.
    #[must_use]
    pub fn slots(&self) -> usize {
        self.paths.len()
    }

    /// The paths to the ToR in `slot`, sorted by id. This is the reference's `std::set` order:
    /// its bytes are the ports themselves, ours the ports + 1, and all paths to one ToR have
    /// the same hop count, so the two ids compare alike.
    #[must_use]
    pub fn paths(&self, slot: usize) -> &[PathId] {
        self.paths.get(slot).map_or(&[], |(_, v)| v.as_slice())
    }

    /// The paths to the ToR in `slot` that are alive: those whose first hop is among
    /// `candidates`, the switch's routes to the packet's destination. Routing withdraws a failed
    /// link's port and every route that lost its way to the destination
    /// (`RdmaSwitch::WithdrawFailedPorts`), so a path through a failed link has left them. With
    /// every first hop a candidate (a healthy fabric) this is [`Fabric::paths`] itself, in the
    /// same order: draws over it are the draws over all paths.
    #[must_use]
    pub fn live_paths<'a>(
        &'a self,
        slot: usize,
        candidates: &'a [EgressCandidate],
    ) -> LivePaths<'a> {
        let paths = self.paths(slot);
        let first_hops = self.first_hops.get(slot).map_or(0, Vec::len);
        if candidates.len() >= first_hops {
            return LivePaths {
                paths,
                candidates: None,
                len: paths.len(),
            };
        }
        let len = paths.iter().filter(|p| is_live(**p, candidates)).count();
        LivePaths {
            paths,
            candidates: Some(candidates),
            len,
        }
    }

    /// Line rate of `port` (0 if unknown).
    #[must_use]
    pub fn port_rate_bps(&self, port: u32) -> u64 {
        usize::try_from(port)
            .ok()
            .and_then(|p| self.port_rate_bps.get(p))
            .copied()
            .unwrap_or(0)
    }

    /// Port slots known (highest port index + 1).
    #[must_use]
    pub fn num_ports(&self) -> usize {
        self.port_rate_bps.len()
    }
}

/// Whether `path`'s first hop is among `candidates`.
fn is_live(path: PathId, candidates: &[EgressCandidate]) -> bool {
    path.port_at(0)
        .and_then(|p| candidate_index(candidates, p))
        .is_some()
}

/// The live paths to one ToR ([`Fabric::live_paths`]), read without allocating.
#[derive(Debug, Clone, Copy)]
pub struct LivePaths<'a> {
    paths: &'a [PathId],
    /// `None` when every path is live.
    candidates: Option<&'a [EgressCandidate]>,
    len: usize,
}

impl LivePaths<'_> {
    /// How many paths are live.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no path is live.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `i`-th live path, in the sorted order of [`Fabric::paths`].
    #[must_use]
    pub fn get(&self, i: usize) -> Option<PathId> {
        match self.candidates {
            None => self.paths.get(i).copied(),
            Some(c) => self.paths.iter().copied().filter(|p| is_live(*p, c)).nth(i),
        }
    }

    /// Whether `path` is live (a path to another ToR is not).
    #[must_use]
    pub fn contains(&self, path: PathId) -> bool {
        match self.candidates {
            None => self.paths.binary_search(&path).is_ok(),
            Some(c) => self.paths.binary_search(&path).is_ok() && is_live(path, c),
        }
    }
}

/// Where a data packet is, relative to its source and destination ToRs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Source and destination hosts share a ToR (single path in the reference, no scheme
    /// state), or a host is unknown: plain ECMP.
    Bypass,
    /// This switch is the source host's ToR; the remote ToR is in slot `dst`.
    SourceTor {
        /// Slot of the destination ToR.
        dst: usize,
    },
    /// This switch is the destination host's ToR; `src` is the source ToR's slot, if this
    /// ToR has paths to it.
    DestinationTor {
        /// Slot of the source ToR.
        src: Option<usize>,
    },
    /// Any other switch.
    Transit,
}

impl Fabric {
    /// The role of this switch for a packet from `sip` to `dip`. A source ToR without paths
    /// to the destination ToR is [`Role::Bypass`].
    #[must_use]
    pub fn role(&self, sip: u32, dip: u32) -> Role {
        let (Some(src), Some(dst)) = (self.tor_of(sip), self.tor_of(dip)) else {
            return Role::Bypass;
        };
        if src == dst {
            return Role::Bypass;
        }
        if self.is_tor && src == self.switch_id {
            return self
                .slot_of(dst)
                .filter(|&s| !self.paths(s).is_empty())
                .map_or(Role::Bypass, |dst| Role::SourceTor { dst });
        }
        if self.is_tor && dst == self.switch_id {
            return Role::DestinationTor {
                src: self.slot_of(src),
            };
        }
        Role::Transit
    }
}

/// The flowlet key of the reference (`GetQpKey`): `dip << 32 | sport << 16 | (dport | pg)`.
/// The source address is not in it, and the priority group is OR-ed into the destination port
/// (so destination ports differing only in pg's bits share a key); both reproduced.
#[must_use]
pub fn flowlet_key(pkt: &PacketMeta) -> u64 {
    (u64::from(pkt.dip) << 32)
        | (u64::from(pkt.sport.0) << 16)
        | u64::from(pkt.dport)
        | u64::from(pkt.pg)
}

/// One flowlet: its path and when its last packet passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flowlet {
    /// The path its packets take.
    pub path: PathId,
    /// Arrival of its last packet.
    pub last: SimTime,
}

/// What [`Flowlets::lookup`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowletState {
    /// Active: its last packet is at most the timeout old; the path to keep.
    Active(PathId),
    /// Known but idle for longer than the timeout; the path it had.
    Expired(PathId),
    /// Not in the table.
    New,
}

/// The flowlet table of a source ToR (reference: `m_flowletTable`).
#[derive(Debug, Clone, Default)]
pub struct Flowlets {
    table: HashMap<u64, Flowlet, TableHasher>,
}

impl Flowlets {
    /// The state of flowlet `key` at `now`; an active flowlet's last-packet time is set to
    /// `now`. A flowlet is active iff `now - last <= timeout_ns` (the reference's `<=`).
    pub fn lookup(&mut self, key: u64, now: SimTime, timeout_ns: u64) -> FlowletState {
        match self.table.get_mut(&key) {
            Some(f) if now.saturating_since(f.last).as_ns() <= timeout_ns => {
                f.last = now;
                FlowletState::Active(f.path)
            }
            Some(f) => FlowletState::Expired(f.path),
            None => FlowletState::New,
        }
    }

    /// Starts (or restarts) flowlet `key` on `path` at `now`.
    pub fn start(&mut self, key: u64, path: PathId, now: SimTime) {
        self.table.insert(key, Flowlet { path, last: now });
    }

    /// Erases the flowlets idle for more than `aging_ns` at `now`; returns how many.
    pub fn age(&mut self, now: SimTime, aging_ns: u64) -> usize {
        let before = self.table.len();
        self.table
            .retain(|_, f| now.saturating_since(f.last).as_ns() <= aging_ns);
        before - self.table.len()
    }

    /// Flowlets in the table.
    #[must_use]
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the table is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

/// Packs a path into a tag word: id in the low 32 bits, hop count above.
#[must_use]
pub fn path_word(path: PathId) -> u64 {
    u64::from(path.id) | (u64::from(path.hops) << 32)
}

/// The path of a tag word written by [`path_word`].
#[must_use]
pub fn word_path(word: u64) -> PathId {
    PathId {
        id: u32::try_from(word & 0xffff_ffff).unwrap_or(0),
        hops: u8::try_from((word >> 32) & 0xff).unwrap_or(0),
    }
}

/// A leaf-spine fabric for the tests of the path-based schemes: `leaves` ToRs (node ids
/// 0..leaves) with `hosts` hosts each on ports `0..hosts`, and `spines` spines (node ids
/// 100..) on ToR ports `hosts..hosts+spines`; spine port `l` faces leaf `l`. Host `h` of leaf
/// `l` has address `0x0b00_0001 + (l * hosts + h) * 0x100`. All links 100 Gbps, 1 us.
#[cfg(test)]
pub(crate) mod test_fabric {
    use super::super::{EgressCandidate, PacketKind, PacketMeta, PathId, PortInfo, SwitchAgent};
    use crate::units::Entropy;

    pub const LEAVES: u32 = 2;
    pub const HOSTS: u32 = 2;
    pub const SPINES: u32 = 4;
    pub const RATE: u64 = 100_000_000_000;

    pub fn host_ip(leaf: u32, h: u32) -> u32 {
        0x0b00_0001 + (leaf * HOSTS + h) * 0x100
    }

    /// The path from leaf `src` to leaf `dst` through spine `s`.
    pub fn path(dst: u32, s: u32) -> PathId {
        PathId::from_ports(&[HOSTS + s, dst]).unwrap_or(PathId { id: 0, hops: 0 })
    }

    fn hosts(agent: &mut impl SwitchAgent) {
        for l in 0..LEAVES {
            for h in 0..HOSTS {
                agent.add_host(host_ip(l, h), l);
            }
        }
    }

    /// Sets up leaf `leaf`.
    pub fn setup_leaf(agent: &mut impl SwitchAgent, leaf: u32) {
        for port in 0..HOSTS + SPINES {
            agent.add_port(PortInfo {
                port,
                rate_bps: RATE,
                delay_ns: 1_000,
                faces_host: port < HOSTS,
            });
        }
        hosts(agent);
        for dst in (0..LEAVES).filter(|&d| d != leaf) {
            for s in 0..SPINES {
                agent.add_path(dst, path(dst, s));
            }
        }
    }

    /// Sets up a spine.
    pub fn setup_spine(agent: &mut impl SwitchAgent) {
        for port in 0..LEAVES {
            agent.add_port(PortInfo {
                port,
                rate_bps: RATE,
                delay_ns: 1_000,
                faces_host: false,
            });
        }
        hosts(agent);
    }

    /// A leaf's uplink candidates (ascending ports).
    pub fn uplinks() -> Vec<EgressCandidate> {
        (HOSTS..HOSTS + SPINES)
            .map(|port| EgressCandidate {
                port,
                queue_bytes: 0,
                tx_bytes: 0,
            })
            .collect()
    }

    /// A single candidate on `port`.
    pub fn single(port: u32) -> Vec<EgressCandidate> {
        vec![EgressCandidate {
            port,
            queue_bytes: 0,
            tx_bytes: 0,
        }]
    }

    /// A 1048-byte data packet from host (sl, sh) to host (dl, dh) with entropy `sport`.
    pub fn data(src: (u32, u32), dst: (u32, u32), sport: u16) -> PacketMeta {
        PacketMeta {
            kind: PacketKind::Data,
            sip: host_ip(src.0, src.1),
            dip: host_ip(dst.0, dst.1),
            sport: Entropy(sport),
            dport: 100,
            pg: 3,
            size_bytes: 1048,
            ..PacketMeta::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Entropy;

    #[test]
    fn paths_are_sorted_and_deduplicated_per_tor() {
        let mut f = Fabric::new(1);
        let a = PathId::from_ports(&[5, 0]).unwrap();
        let b = PathId::from_ports(&[3, 0]).unwrap();
        assert_eq!(f.add_path(9, a), Some((0, 0)));
        assert_eq!(f.add_path(9, b), Some((0, 0)));
        assert_eq!(f.add_path(9, a), None);
        assert_eq!(f.paths(0), &[b, a]);
        assert_eq!(f.slot_of(9), Some(0));
        assert_eq!(f.slot_of(8), None);
    }

    #[test]
    fn roles_follow_the_host_map() {
        let mut f = Fabric::new(1);
        f.add_port(PortInfo {
            port: 0,
            rate_bps: 1,
            delay_ns: 1,
            faces_host: true,
        });
        f.add_host(10, 1);
        f.add_host(11, 1);
        f.add_host(20, 2);
        f.add_path(2, PathId::from_ports(&[3, 0]).unwrap());
        assert_eq!(f.role(10, 11), Role::Bypass, "intra-ToR");
        assert_eq!(f.role(10, 99), Role::Bypass, "unknown host");
        assert_eq!(f.role(10, 20), Role::SourceTor { dst: 0 });
        assert_eq!(f.role(20, 10), Role::DestinationTor { src: Some(0) });
        let mut spine = f.clone();
        spine.is_tor = false;
        assert_eq!(spine.role(10, 20), Role::Transit);
    }

    #[test]
    fn flowlet_key_is_the_references() {
        let pkt = PacketMeta {
            dip: 0x0b00_0101,
            sport: Entropy(0x1234),
            dport: 100,
            pg: 3,
            sip: 77,
            ..PacketMeta::default()
        };
        assert_eq!(flowlet_key(&pkt), 0x0b00_0101_1234_0067);
        let other_src = PacketMeta { sip: 78, ..pkt };
        assert_eq!(flowlet_key(&other_src), flowlet_key(&pkt));
    }

    #[test]
    fn flowlet_expires_strictly_after_the_timeout() {
        let p = PathId::from_ports(&[2, 0]).unwrap();
        let mut t = Flowlets::default();
        assert_eq!(t.lookup(1, SimTime::ZERO, 100), FlowletState::New);
        t.start(1, p, SimTime::ZERO);
        assert_eq!(
            t.lookup(1, SimTime::from_ns(100), 100),
            FlowletState::Active(p)
        );
        assert_eq!(
            t.lookup(1, SimTime::from_ns(201), 100),
            FlowletState::Expired(p)
        );
        assert_eq!(t.age(SimTime::from_ns(200), 100), 0);
        assert_eq!(t.age(SimTime::from_ns(201), 100), 1);
        assert!(t.is_empty());
    }

    #[test]
    fn path_words_round_trip() {
        let p = PathId::from_ports(&[17, 3, 9]).unwrap();
        assert_eq!(word_path(path_word(p)), p);
    }
}
