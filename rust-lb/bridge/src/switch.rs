//! The switches' side (`ffi::SwitchLb`): one switch's agent, each call inside the panic
//! guard; packets, tags and verdicts converted between the bridge's structs and the core's.

use rdma_lb_core::switch::{self as sw};
use rdma_lb_core::{Entropy, Psn, SimTime};

use crate::guard::guard;

/// The shared structs of the switches' calls (header `rdma-lb-bridge/src/switch.rs.h`;
/// the functions that take them are declared with the opaque types in the crate root's bridge).
#[cxx::bridge(namespace = "rdmalb::bridge")]
pub mod ffi {
    /// What a packet at a switch is.
    #[derive(Debug)]
    enum PacketKind {
        /// RDMA data.
        Data,
        /// Acknowledgement.
        Ack,
        /// Negative acknowledgement.
        Nack,
        /// Congestion notification.
        Cnp,
        /// A load balancer's own control packet.
        LbControl,
    }

    /// The packet fields a switch algorithm reads.
    #[derive(Debug)]
    struct PacketInfo {
        kind: PacketKind,
        sip: u32,
        dip: u32,
        sport: u16,
        dport: u16,
        psn: u32,
        ingress_port: u32,
        size_bytes: u32,
        ecn_ce: bool,
        pg: u16,
        qpn: u16,
        seq_bytes: u32,
        ts_ns: u64,
        /// Made by this switch's own agent (`poll_transmit`), not received.
        local: bool,
    }

    /// One equal-cost egress port and its state.
    #[derive(Debug)]
    struct EgressCandidate {
        port: u32,
        queue_bytes: u64,
        tx_bytes: u64,
    }

    /// A switch scheme's opaque per-packet tag (an ns-3 packet tag on the C++ side).
    #[derive(Debug, Clone, Copy)]
    struct LbTag {
        present: bool,
        words: [u64; 5],
    }

    /// What to do with a packet.
    #[derive(Debug)]
    enum VerdictKind {
        /// Send on candidate `index`.
        Forward,
        /// Drop (blocked, or a control packet the agent consumed).
        Drop,
        /// Hold in the per-flow queue `queue` until released.
        Hold,
    }

    /// The agent's verdict on one packet.
    #[derive(Debug)]
    struct IngressDecision {
        verdict: VerdictKind,
        index: u32,
        /// Write `entropy` into the UDP source port before sending.
        rewrite_entropy: bool,
        entropy: u16,
        queue: u64,
        /// The algorithm failed (a caught panic): stop the simulation with `last_error()`.
        failed: bool,
    }

    /// Kind of a control packet an agent sends.
    #[derive(Debug)]
    enum ControlKind {
        /// An RDMA NACK as the receiver NIC would send it.
        Nack,
        /// A load balancer's own control packet (NACK format, sequence 0, `size_bytes`).
        LbControl,
    }

    /// A control packet to send (`has` false: none).
    #[derive(Debug)]
    struct ControlOut {
        has: bool,
        kind: ControlKind,
        sip: u32,
        dip: u32,
        sport: u16,
        dport: u16,
        qpn: u16,
        pg: u16,
        epsn: u32,
        echo_seq_bytes: u32,
        ts_ns: u64,
        size_bytes: u32,
        from_port: u32,
        tag: LbTag,
        failed: bool,
    }

    /// A held queue to release now (`has` false: none).
    #[derive(Debug)]
    struct ReleaseOut {
        has: bool,
        queue: u64,
        failed: bool,
    }

    /// One counter of a switch agent.
    #[derive(Debug)]
    struct Counter {
        name: String,
        value: u64,
    }

    // `rust::Vec<Counter>` (`counters`, declared in the crate root's bridge): its glue here.
    impl Vec<Counter> {}
}

/// See `ffi::SwitchLb`. Poisoned after a caught panic.
pub struct SwitchLb {
    lb: sw::SwitchLb,
    failure: Option<String>,
    armed: bool,
    scratch: Vec<sw::EgressCandidate>,
}

/// The core's view of a packet from the bridge's; `None` for an unknown kind.
fn packet_meta(pkt: &ffi::PacketInfo) -> Option<sw::PacketMeta> {
    let kind = match pkt.kind {
        ffi::PacketKind::Data => sw::PacketKind::Data,
        ffi::PacketKind::Ack => sw::PacketKind::Ack,
        ffi::PacketKind::Nack => sw::PacketKind::Nack,
        ffi::PacketKind::Cnp => sw::PacketKind::Cnp,
        ffi::PacketKind::LbControl => sw::PacketKind::LbControl,
        _ => return None,
    };
    Some(sw::PacketMeta {
        kind,
        sip: pkt.sip,
        dip: pkt.dip,
        sport: Entropy(pkt.sport),
        dport: pkt.dport,
        psn: Psn(pkt.psn),
        ingress_port: pkt.ingress_port,
        size_bytes: pkt.size_bytes,
        ecn_ce: pkt.ecn_ce,
        pg: pkt.pg,
        qpn: pkt.qpn,
        seq_bytes: pkt.seq_bytes,
        ts_ns: pkt.ts_ns,
        local: pkt.local,
    })
}

fn tag_in(t: &ffi::LbTag) -> sw::LbTag {
    sw::LbTag {
        present: t.present,
        words: t.words,
    }
}

fn tag_out(t: sw::LbTag) -> ffi::LbTag {
    ffi::LbTag {
        present: t.present,
        words: t.words,
    }
}

impl SwitchLb {
    pub(crate) fn new(lb: sw::SwitchLb) -> Self {
        SwitchLb {
            lb,
            failure: None,
            armed: false,
            scratch: Vec::new(),
        }
    }

    /// Runs `f` on the load balancer unless poisoned; a panic poisons. `None` on failure.
    fn call<T>(
        &mut self,
        f: impl FnOnce(&mut sw::SwitchLb, &mut Vec<sw::EgressCandidate>) -> T,
    ) -> Option<T> {
        if self.failure.is_some() {
            return None;
        }
        let armed = std::mem::take(&mut self.armed);
        let (lb, scratch) = (&mut self.lb, &mut self.scratch);
        match guard(|| {
            assert!(!armed, "injected test panic");
            f(lb, scratch)
        }) {
            Ok(v) => Some(v),
            Err(msg) => {
                self.failure = Some(msg);
                None
            }
        }
    }

    /// Like [`SwitchLb::call`] for a call taking a packet; an unknown packet kind poisons.
    fn call_pkt<T>(
        &mut self,
        pkt: &ffi::PacketInfo,
        f: impl FnOnce(&mut sw::SwitchLb, &mut Vec<sw::EgressCandidate>, &sw::PacketMeta) -> T,
    ) -> Option<T> {
        let Some(meta) = packet_meta(pkt) else {
            if self.failure.is_none() {
                self.failure = Some("unknown packet kind from C++".to_owned());
            }
            return None;
        };
        self.call(|lb, scratch| f(lb, scratch, &meta))
    }

    pub(crate) fn add_port(&mut self, port: u32, rate_bps: u64, delay_ns: u64, faces_host: bool) {
        // Setup, not the hot path; a failure poisons and shows at the next per-packet call.
        let _ = self.call(|lb, _| {
            lb.add_port(sw::PortInfo {
                port,
                rate_bps,
                delay_ns,
                faces_host,
            });
        });
    }

    pub(crate) fn add_host(&mut self, host_ip: u32, tor: u32) {
        let _ = self.call(|lb, _| lb.add_host(host_ip, tor));
    }

    pub(crate) fn add_path(&mut self, dst_tor: u32, path_id: u32, hops: u8) -> bool {
        let path = sw::PathId { id: path_id, hops };
        let valid = (1..=sw::PathId::MAX_HOPS).contains(&hops)
            && (0..u32::from(hops)).all(|h| path.port_at(h).is_some());
        valid && self.call(|lb, _| lb.add_path(dst_tor, path)).is_some()
    }

    pub(crate) fn uses_fabric_map(&self) -> bool {
        self.lb.uses_fabric_map()
    }

    pub(crate) fn sees_every_packet(&self) -> bool {
        self.lb.sees_every_packet()
    }

    pub(crate) fn sees_egress(&self) -> bool {
        self.lb.sees_egress()
    }

    pub(crate) fn reads_port_load(&self) -> bool {
        self.lb.reads_port_load()
    }

    pub(crate) fn on_ingress(
        &mut self,
        now_ns: u64,
        pkt: &ffi::PacketInfo,
        tag: &mut ffi::LbTag,
        candidates: &[ffi::EgressCandidate],
    ) -> ffi::IngressDecision {
        let now = SimTime::from_ns(now_ns);
        let mut t = tag_in(tag);
        let verdict = self.call_pkt(pkt, |lb, scratch, meta| {
            // Candidates are converted into a buffer kept across calls: after the first packets
            // it has the capacity of the largest equal-cost set and never allocates again.
            scratch.clear();
            scratch.extend(candidates.iter().map(|c| sw::EgressCandidate {
                port: c.port,
                queue_bytes: c.queue_bytes,
                tx_bytes: c.tx_bytes,
            }));
            lb.on_ingress(now, meta, &mut t, scratch)
        });
        *tag = tag_out(t);
        let mut d = ffi::IngressDecision {
            verdict: ffi::VerdictKind::Forward,
            index: 0,
            rewrite_entropy: false,
            entropy: 0,
            queue: 0,
            failed: false,
        };
        match verdict {
            Some(sw::Verdict::Forward {
                index,
                rewrite_entropy,
            }) => {
                d.index = u32::try_from(index).unwrap_or(0);
                d.rewrite_entropy = rewrite_entropy.is_some();
                d.entropy = rewrite_entropy.map_or(0, |e| e.0);
            }
            Some(sw::Verdict::Drop) => d.verdict = ffi::VerdictKind::Drop,
            Some(sw::Verdict::Hold { queue }) => {
                d.verdict = ffi::VerdictKind::Hold;
                d.queue = queue;
            }
            None => d.failed = true,
        }
        d
    }

    pub(crate) fn on_egress(
        &mut self,
        now_ns: u64,
        pkt: &ffi::PacketInfo,
        tag: &ffi::LbTag,
        port: u32,
    ) -> bool {
        let now = SimTime::from_ns(now_ns);
        let t = tag_in(tag);
        self.call_pkt(pkt, |lb, _, meta| lb.on_egress(now, meta, &t, port))
            .is_some()
    }

    pub(crate) fn poll_transmit(&mut self, now_ns: u64) -> ffi::ControlOut {
        let now = SimTime::from_ns(now_ns);
        let r = self.call(|lb, _| lb.poll_transmit(now));
        let c = r.flatten();
        let kind = match c.map(|c| c.kind) {
            Some(sw::ControlKind::LbControl) => ffi::ControlKind::LbControl,
            _ => ffi::ControlKind::Nack,
        };
        ffi::ControlOut {
            has: c.is_some(),
            kind,
            sip: c.map_or(0, |c| c.sip),
            dip: c.map_or(0, |c| c.dip),
            sport: c.map_or(0, |c| c.sport),
            dport: c.map_or(0, |c| c.dport),
            qpn: c.map_or(0, |c| c.qpn),
            pg: c.map_or(0, |c| c.pg),
            epsn: c.map_or(0, |c| c.epsn.0),
            echo_seq_bytes: c.map_or(0, |c| c.echo_seq_bytes),
            ts_ns: c.map_or(0, |c| c.ts_ns),
            size_bytes: c.map_or(0, |c| c.size_bytes),
            from_port: c.map_or(0, |c| c.from_port),
            tag: tag_out(c.map_or(sw::LbTag::NONE, |c| c.tag)),
            failed: r.is_none(),
        }
    }

    pub(crate) fn poll_release(&mut self, now_ns: u64) -> ffi::ReleaseOut {
        let now = SimTime::from_ns(now_ns);
        let r = self.call(|lb, _| lb.poll_release(now));
        let q = r.flatten();
        ffi::ReleaseOut {
            has: q.is_some(),
            queue: q.unwrap_or(0),
            failed: r.is_none(),
        }
    }

    pub(crate) fn poll_at_ns(&self) -> u64 {
        if self.failure.is_some() {
            return u64::MAX;
        }
        self.lb.poll_at().map_or(u64::MAX, SimTime::as_ns)
    }

    pub(crate) fn on_timer(&mut self, now_ns: u64) -> bool {
        let now = SimTime::from_ns(now_ns);
        self.call(|lb, _| lb.on_timer(now)).is_some()
    }

    pub(crate) fn last_error(&self) -> String {
        self.failure.clone().unwrap_or_default()
    }

    pub(crate) fn on_link_state(&mut self, port: u32, remote: bool, down: bool) -> bool {
        let scope = if remote {
            sw::LinkScope::Remote
        } else {
            sw::LinkScope::Local { port }
        };
        self.call(|lb, _| lb.on_link_state(scope, down)).is_some()
    }

    pub(crate) fn memory_bytes(&self) -> u64 {
        self.lb.memory_bytes()
    }

    pub(crate) fn counters(&self) -> Vec<ffi::Counter> {
        self.lb
            .counter_list()
            .into_iter()
            .map(|(name, value)| ffi::Counter {
                name: name.to_owned(),
                value,
            })
            .collect()
    }

    pub(crate) fn arm_test_panic(&mut self) {
        self.armed = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::new_lb_config;

    fn pkt(
        kind: ffi::PacketKind,
        sip: u32,
        dip: u32,
        sport: u16,
        dport: u16,
        psn: u32,
        ingress: u32,
    ) -> ffi::PacketInfo {
        ffi::PacketInfo {
            kind,
            sip,
            dip,
            sport,
            dport,
            psn,
            ingress_port: ingress,
            size_bytes: 1048,
            ecn_ce: false,
            pg: 3,
            qpn: dport,
            seq_bytes: psn * 1000,
            ts_ns: 0,
            local: false,
        }
    }

    fn cands(n: u32) -> Vec<ffi::EgressCandidate> {
        (0..n)
            .map(|p| ffi::EgressCandidate {
                port: p,
                queue_bytes: 0,
                tx_bytes: 0,
            })
            .collect()
    }

    const NO_TAG: ffi::LbTag = ffi::LbTag {
        present: false,
        words: [0; 5],
    };

    #[test]
    fn switch_choice_is_within_candidates() {
        let cfg = new_lb_config("ecmp", "").unwrap();
        let mut lb = cfg.new_switch_lb(3, 0).unwrap();
        assert!(!lb.sees_every_packet() && !lb.sees_egress());
        let c = cands(4);
        for sport in 0..100 {
            let mut tag = NO_TAG;
            let d = lb.on_ingress(
                0,
                &pkt(ffi::PacketKind::Data, 1, 2, sport, 100, 0, 0),
                &mut tag,
                &c,
            );
            assert!(!d.failed && d.verdict == ffi::VerdictKind::Forward && d.index < 4);
            assert!(!tag.present);
        }
        assert_eq!(lb.poll_at_ns(), u64::MAX);
        assert!(!lb.poll_transmit(0).has && !lb.poll_release(0).has);
        assert!(lb.counters().is_empty());
    }

    #[test]
    fn htsim_switches_route_as_the_reps_artifact() {
        // The artifact's Fig. 2 run (htsim_uec -seed 42: 32 ToRs x 32 hosts, 32 spines, 1,024
        // ECMP connections), printed from its debug build: connection 0 (964 -> 91, path 0)
        // leaves ToR 30 on spine 27, connection 1 (18 -> 694, path 1) ToR 0 on spine 3.
        let addr = |h: u32| 0x0b00_0001 + ((h / 256) << 16) + ((h % 256) << 8);
        let mut cfg = new_lb_config("ecmp", "").unwrap();
        let ids: Vec<u32> = (1024..1088).collect();
        cfg.use_htsim_switches(42, &ids, 32, 32, 1024, 1024)
            .unwrap();
        let mut tor30 = cfg.new_switch_lb(1054, 1).unwrap();
        let mut tor0 = cfg.new_switch_lb(1024, 1).unwrap();
        let c = cands(32);
        let mut tag = NO_TAG;
        let d = tor30.on_ingress(
            0,
            &pkt(ffi::PacketKind::Data, addr(964), addr(91), 0, 1, 0, 0),
            &mut tag,
            &c,
        );
        assert_eq!((d.verdict, d.index), (ffi::VerdictKind::Forward, 27));
        let d = tor0.on_ingress(
            0,
            &pkt(ffi::PacketKind::Data, addr(18), addr(694), 1, 1, 0, 0),
            &mut tag,
            &c,
        );
        assert_eq!((d.verdict, d.index), (ffi::VerdictKind::Forward, 3));
        // A switch outside the list, and a switch-side algorithm, are errors.
        assert!(cfg.new_switch_lb(7, 1).is_err());
        let mut conga = new_lb_config("conga", "").unwrap();
        let e = conga
            .use_htsim_switches(42, &ids, 32, 32, 1024, 1024)
            .unwrap_err();
        assert!(e.contains("`conga` decides at the switches"), "{e}");
    }

    #[test]
    fn letflow_switches_of_one_config_share_the_reference_rand_stream() {
        // Quirk glibc-rand: after share_reference_rand(1), the source ToRs 0 and 1 made from
        // one configuration draw glibc's rand() after srand(1) in turn: 1804289383,
        // 846930886, 1681692777, 1714636915, 1957747793 are 3, 2, 1, 3, 1 modulo 4 paths,
        // i.e. uplinks (ports 1-4, sorted path order) 4, 3, 2, 4, 2.
        let mut cfg = new_lb_config("letflow", "").unwrap();
        cfg.share_reference_rand(1);
        let tor = |id: u32| {
            let mut lb = cfg.new_switch_lb(id, 5).unwrap();
            lb.add_port(0, 100_000_000_000, 1_000, true);
            for up in 1..5 {
                lb.add_port(up, 100_000_000_000, 1_000, false);
                // path: uplink `up`, then the spine's port 0 (id byte = port + 1)
                assert!(lb.add_path(1 - id, (up + 1) | (1 << 8), 2));
            }
            lb.add_host(10, 0);
            lb.add_host(20, 1);
            lb
        };
        let mut tors = [tor(0), tor(1)];
        let c = cands(5);
        let mut uplinks = Vec::new();
        for sport in 0..5_u16 {
            let k = usize::from(sport % 2);
            let (sip, dip) = if k == 0 { (10, 20) } else { (20, 10) };
            for _ in 0..2 {
                // the flow's second packet keeps its path and draws nothing
                let mut tag = NO_TAG;
                let d = tors[k].on_ingress(
                    0,
                    &pkt(ffi::PacketKind::Data, sip, dip, sport, 100, 0, 0),
                    &mut tag,
                    &c,
                );
                assert!(!d.failed && d.verdict == ffi::VerdictKind::Forward && tag.present);
                uplinks.push(d.index);
            }
        }
        assert_eq!(uplinks, [4, 4, 3, 3, 2, 2, 4, 4, 2, 2]);
    }

    #[test]
    fn themis_agent_blocks_and_compensates_through_the_bridge() {
        let cfg = new_lb_config("themis", "").unwrap();
        let mut lb = cfg.new_switch_lb(8, 0).unwrap();
        assert!(lb.sees_every_packet() && lb.sees_egress());
        lb.add_port(0, 100_000_000_000, 1_000, true);
        for port in 1..3 {
            lb.add_port(port, 100_000_000_000, 1_000, false);
        }
        for psn in [0, 1, 3] {
            assert!(lb.on_egress(
                0,
                &pkt(ffi::PacketKind::Data, 1, 2, 99, 7, psn, 4),
                &NO_TAG,
                0
            ));
            assert!(!lb.poll_transmit(0).has);
        }
        let mut tag = NO_TAG;
        let n = lb.on_ingress(
            0,
            &pkt(ffi::PacketKind::Nack, 2, 1, 7, 99, 2, 0),
            &mut tag,
            &cands(2),
        );
        assert!(!n.failed && n.verdict == ffi::VerdictKind::Drop);
        assert!(lb.on_egress(
            0,
            &pkt(ffi::PacketKind::Data, 1, 2, 99, 7, 4, 4),
            &NO_TAG,
            0
        ));
        let c = lb.poll_transmit(0);
        assert!(c.has && !c.failed && c.kind == ffi::ControlKind::Nack);
        assert_eq!((c.dip, c.sip, c.sport, c.dport, c.epsn), (1, 2, 7, 99, 2));
        assert_eq!((c.echo_seq_bytes, c.from_port), (4000, 0));
        assert!(!lb.poll_transmit(0).has);
        let counters = lb.counters();
        let get = |n: &str| counters.iter().find(|c| c.name == n).map(|c| c.value);
        assert_eq!(get("themis_nacks_blocked"), Some(1));
        assert_eq!(get("themis_compensations"), Some(1));
        assert_eq!(get("themis_flows"), Some(1));
        assert_eq!(lb.memory_bytes(), 20 + 38);
        assert!(lb.on_link_state(1, false, true));
        let counters = lb.counters();
        assert!(counters
            .iter()
            .any(|c| c.name == "themis_ecmp_fallback" && c.value == 1));
    }

    #[test]
    fn bad_paths_are_refused() {
        let cfg = new_lb_config("ecmp", "").unwrap();
        let mut lb = cfg.new_switch_lb(3, 0).unwrap();
        assert!(lb.add_path(9, 0x0302, 2));
        assert!(!lb.add_path(9, 0x0002, 2), "hop 1 names no port");
        assert!(!lb.add_path(9, 0x01, 0));
        assert!(!lb.add_path(9, 0x0101_0101, 5));
    }

    #[test]
    fn switch_panic_is_caught_and_poisons() {
        let cfg = new_lb_config("plts-random", "").unwrap();
        let mut lb = cfg.new_switch_lb(1, 0).unwrap();
        lb.arm_test_panic();
        let p = pkt(ffi::PacketKind::Nack, 2, 1, 7, 99, 2, 0);
        let mut tag = NO_TAG;
        assert!(lb.on_ingress(0, &p, &mut tag, &cands(2)).failed);
        assert!(
            lb.last_error().contains("injected test panic"),
            "{}",
            lb.last_error()
        );
        assert!(
            lb.on_ingress(0, &p, &mut tag, &cands(1)).failed,
            "stays poisoned"
        );
        assert!(lb.poll_transmit(0).failed && lb.poll_release(0).failed);
        assert!(!lb.on_timer(0));
        assert_eq!(lb.poll_at_ns(), u64::MAX);
    }
}
