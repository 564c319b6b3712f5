//! The bridge between `rdma-lb-core` and the ns-3 module: only the `#[cxx::bridge]`, newtype
//! wrappers and conversions; the logic lives in the core.
//!
//! Rules (the bridge stays thin):
//! * One-way: Rust exports functions; it never calls back into C++.
//! * Plain data in, plain data out; units in field names (`*_ns`, `*_bytes`).
//! * Only constructors return `Result` (a `rust::Error` in C++, raised by the ns-3 side as a
//!   fatal error with the message).
//! * **No panic crosses the bridge.** Every exported call runs inside `guard`, which catches
//!   a panic (the release profile keeps `panic = "unwind"` for this). A constructor turns it
//!   into an error; a per-packet call returns a safe decision flagged `failed`, poisons the
//!   object and keeps the message for `last_error()`, and the C++ caller stops the simulation
//!   with that message. The core is written not to panic at all; the guard is the backstop.
#![allow(
    unsafe_code,
    reason = "only the code cxx generates is unsafe; this file writes none"
)]

mod scenario;

use std::panic::{catch_unwind, AssertUnwindSafe};

use rdma_lb_core::host::{self, SendCx};
use rdma_lb_core::switch::{self as sw};
use rdma_lb_core::{config, Algorithm, Entropy, Psn, SimDuration, SimTime};

#[cxx::bridge(namespace = "rdmalb::bridge")]
mod ffi {
    // ---- Shared plain-data types --------------------------------------------------------

    /// What the NIC received about a packet it sent.
    #[derive(Debug)]
    enum FeedbackKind {
        /// Acknowledgement.
        Ack,
        /// Negative acknowledgement.
        Nack,
        /// Congestion notification.
        Cnp,
        /// Retransmission timeout.
        Timeout,
        /// Answer to a probe packet the selector asked for (`take_probe`).
        ProbeAck,
    }

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

    /// The NIC's state when it is about to send a data packet.
    #[derive(Debug)]
    struct SendContext {
        now_ns: u64,
        psn: u32,
        retransmission: bool,
        inflight_pkts: u32,
        every_arrival_answered: bool,
    }

    /// Feedback for a packet sent on `entropy`.
    #[derive(Debug)]
    struct FeedbackEvent {
        kind: FeedbackKind,
        now_ns: u64,
        entropy: u16,
        psn: u32,
        /// Round-trip time of the answered packet; meaningful when `has_rtt`.
        rtt_ns: u64,
        has_rtt: bool,
        ecn: bool,
    }

    /// The entropy to stamp on the next data packet.
    #[derive(Debug)]
    struct EntropyDecision {
        entropy: u16,
        /// The algorithm failed (a caught panic): stop the simulation with `last_error()`.
        failed: bool,
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

    // ---- Rust types and functions exposed to C++ ---------------------------------------

    extern "Rust" {
        /// A validated load-balancing configuration, shared by every NIC and switch of a run.
        type LbConfig;
        /// Parses and validates; the error message names the parameter at fault.
        fn new_lb_config(algorithm: &str, params: &str) -> Result<Box<LbConfig>>;
        /// Every algorithm name, in table order.
        fn algorithm_names() -> Vec<String>;
        /// The configured algorithm's name.
        fn algorithm_name(self: &LbConfig) -> &'static str;
        /// A selector for one queue pair, with state of its own.
        fn new_host_lb(self: &LbConfig, seed: u64) -> Result<Box<HostLb>>;
        /// One sender NIC's load-balancing state across its queue pairs.
        fn new_host_lb_group(self: &LbConfig) -> Result<Box<HostLbGroup>>;
        /// A chooser for one switch (`switch_id` seeds the ECMP hash, as in the reference).
        fn new_switch_lb(self: &LbConfig, switch_id: u32, seed: u64) -> Result<Box<SwitchLb>>;
        /// Quirk glibc-rand: switch agents created from now on draw LetFlow's, CONGA's and
        /// ConWeave's random choices as `rand() % n` from one glibc `rand()` stream, seeded
        /// with `srand(seed)`, that they all share (the reference's). Calling it again starts
        /// a new stream.
        fn share_reference_rand(self: &mut LbConfig, seed: u32);
        /// The REPS authors' switches (`rdma_lb_core::switch::htsim_ecmp`): switch agents
        /// created from now on are htsim's ECMP, drawing salts and shuffles from one
        /// `mt19937(seed)` stream as htsim does. `switch_ids` lists every switch in htsim's
        /// construction order (ToRs, then the second tier, then the rest), its first `tors`
        /// being the ToRs; the stream then skips the draws htsim makes before the first packet
        /// (one per second-tier switch, one per host, two per flow). Fails if the algorithm's
        /// switch side is not plain ECMP (the host algorithms), naming it.
        fn use_htsim_switches(
            self: &mut LbConfig,
            seed: u32,
            switch_ids: &[u32],
            tors: u32,
            second_tier: u32,
            hosts: u32,
            flows: u32,
        ) -> Result<()>;

        /// One sender NIC's state shared by its queue pairs (Whack-a-Mole's per-destination
        /// profiles).
        type HostLbGroup;
        /// A selector for one of the NIC's queue pairs, to `destination` (an address);
        /// `flow_sport` is the flow's own source port (0..=65535; quirk `flow-ports`: a
        /// host side keeping one entropy per flow keeps this one), or -1 for none.
        fn new_qp_lb(
            self: &mut HostLbGroup,
            destination: u32,
            seed: u64,
            flow_sport: i32,
        ) -> Result<Box<HostLb>>;

        /// One queue pair's path selector.
        type HostLb;
        fn next_entropy(self: &mut HostLb, cx: &SendContext) -> EntropyDecision;
        /// Returns false if the algorithm failed (see `last_error`).
        fn on_feedback(self: &mut HostLb, fb: &FeedbackEvent) -> bool;
        /// Next time `on_timer` is wanted, or `u64::MAX` for none.
        fn poll_at_ns(self: &HostLb) -> u64;
        /// Returns false if the algorithm failed (see `last_error`).
        fn on_timer(self: &mut HostLb, now_ns: u64) -> bool;
        fn last_error(self: &HostLb) -> String;
        /// Earliest time the next data packet may leave (ns since the start).
        fn send_after_ns(self: &HostLb) -> u64;
        /// Entropy of a probe packet to send now, or -1 for none.
        fn take_probe(self: &mut HostLb, now_ns: u64) -> i32;
        /// Path switches so far.
        fn path_switches(self: &HostLb) -> u64;
        /// Makes the next call panic inside the guard (for the test that proves the guard).
        fn arm_test_panic(self: &mut HostLb);

        /// One switch's load-balancing agent (see rdma_lb_core::switch::agent).
        type SwitchLb;
        /// Setup: one of the switch's ports.
        fn add_port(self: &mut SwitchLb, port: u32, rate_bps: u64, delay_ns: u64, faces_host: bool);
        /// Setup: host `host_ip` hangs off ToR `tor`.
        fn add_host(self: &mut SwitchLb, host_ip: u32, tor: u32);
        /// Setup (ToRs): a path to ToR `dst_tor`; false if `path_id`/`hops` are not a path.
        fn add_path(self: &mut SwitchLb, dst_tor: u32, path_id: u32, hops: u8) -> bool;
        /// Whether `on_ingress` wants packets with a single candidate too.
        fn sees_every_packet(self: &SwitchLb) -> bool;
        /// Whether `on_egress` must be called at dequeue.
        fn sees_egress(self: &SwitchLb) -> bool;
        /// The verdict on a packet; `tag` is updated in place.
        fn on_ingress(
            self: &mut SwitchLb,
            now_ns: u64,
            pkt: &PacketInfo,
            tag: &mut LbTag,
            candidates: &[EgressCandidate],
        ) -> IngressDecision;
        /// A packet leaves through `port`. Returns false if the algorithm failed.
        fn on_egress(
            self: &mut SwitchLb,
            now_ns: u64,
            pkt: &PacketInfo,
            tag: &LbTag,
            port: u32,
        ) -> bool;
        /// A control packet to send now, if any.
        fn poll_transmit(self: &mut SwitchLb, now_ns: u64) -> ControlOut;
        /// A held queue to release now, if any.
        fn poll_release(self: &mut SwitchLb, now_ns: u64) -> ReleaseOut;
        /// When to call `on_timer` (u64::MAX: never).
        fn poll_at_ns(self: &SwitchLb) -> u64;
        /// The agent's timer. Returns false if the algorithm failed.
        fn on_timer(self: &mut SwitchLb, now_ns: u64) -> bool;
        fn last_error(self: &SwitchLb) -> String;
        /// A link went down or up: one of this switch's (`remote` false, `port`), or one
        /// elsewhere (`remote` true). Returns false if the algorithm failed.
        fn on_link_state(self: &mut SwitchLb, port: u32, remote: bool, down: bool) -> bool;
        /// Switch memory of the algorithm's state, by its paper's accounting.
        fn memory_bytes(self: &SwitchLb) -> u64;
        /// Every counter, (name, value).
        fn counters(self: &SwitchLb) -> Vec<Counter>;
        /// Makes the next call panic inside the guard (for the test that proves the guard).
        fn arm_test_panic(self: &mut SwitchLb);
    }
}

/// Runs `f`, turning a panic into its message.
fn guard<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic payload".to_owned());
        format!("internal error in rdma-lb (caught panic): {msg}")
    })
}

/// See `ffi::LbConfig`.
pub struct LbConfig {
    cfg: config::LbConfig,
    /// Quirk glibc-rand's shared stream.
    reference_rand: Option<rdma_lb_core::rng::SharedGlibcRand>,
    /// htsim's switches: the stream and each switch's (salt, is a ToR).
    htsim: Option<HtsimSwitches>,
}

/// See `ffi::LbConfig::use_htsim_switches`.
struct HtsimSwitches {
    stream: rdma_lb_core::rng::SharedHtsimRand,
    salts: std::collections::HashMap<u32, (u32, bool)>,
}

fn new_lb_config(algorithm: &str, params: &str) -> Result<Box<LbConfig>, String> {
    guard(|| config::LbConfig::parse(algorithm, params))?
        .map(|cfg| {
            Box::new(LbConfig {
                cfg,
                reference_rand: None,
                htsim: None,
            })
        })
        .map_err(|e| e.to_string())
}

fn algorithm_names() -> Vec<String> {
    Algorithm::ALL.iter().map(|a| a.name().to_owned()).collect()
}

impl LbConfig {
    fn algorithm_name(&self) -> &'static str {
        self.cfg.algorithm.name()
    }

    fn new_host_lb(&self, seed: u64) -> Result<Box<HostLb>, String> {
        guard(|| {
            Box::new(HostLb {
                lb: host::HostLb::new(&self.cfg.host, seed),
                failure: None,
                armed: false,
            })
        })
    }

    fn new_host_lb_group(&self) -> Result<Box<HostLbGroup>, String> {
        guard(|| Box::new(HostLbGroup(host::HostLbGroup::new(&self.cfg.host))))
    }

    fn new_switch_lb(&self, switch_id: u32, seed: u64) -> Result<Box<SwitchLb>, String> {
        guard(|| {
            Ok(Box::new(SwitchLb {
                lb: {
                    let mut lb = match &self.htsim {
                        Some(h) => {
                            let Some(&(salt, is_tor)) = h.salts.get(&switch_id) else {
                                return Err(format!(
                                    "switch {switch_id} is not among htsim's switches"
                                ));
                            };
                            let stream = std::sync::Arc::clone(&h.stream);
                            sw::SwitchLb::htsim_ecmp(&self.cfg.switch, salt, is_tor, stream, seed)
                                .ok_or_else(|| self.htsim_refusal())?
                        }
                        None => sw::SwitchLb::new(&self.cfg.switch, switch_id, seed),
                    };
                    if let Some(rand) = &self.reference_rand {
                        lb.share_reference_rand(std::sync::Arc::clone(rand));
                    }
                    lb
                },
                failure: None,
                armed: false,
                scratch: Vec::new(),
            }))
        })?
    }

    fn share_reference_rand(&mut self, seed: u32) {
        self.reference_rand = Some(rdma_lb_core::rng::GlibcRand::shared(seed));
    }

    fn htsim_refusal(&self) -> String {
        format!(
            "htsim's switches are plain ECMP; `{}` decides at the switches (use a host \
             algorithm, or the five-tuple switch hash)",
            self.cfg.algorithm.name()
        )
    }

    fn use_htsim_switches(
        &mut self,
        seed: u32,
        switch_ids: &[u32],
        tors: u32,
        second_tier: u32,
        hosts: u32,
        flows: u32,
    ) -> Result<(), String> {
        if self.cfg.switch != config::SwitchLbConfig::EcmpHash {
            return Err(self.htsim_refusal());
        }
        let built = guard(|| {
            let mut stream = rdma_lb_core::rng::HtsimRand::new(seed);
            let tors = usize::try_from(tors).unwrap_or(usize::MAX);
            let salts = switch_ids
                .iter()
                .enumerate()
                .map(|(i, &id)| (id, (stream.random(), i < tors)))
                .collect();
            stream.skip(u64::from(second_tier) + u64::from(hosts) + 2 * u64::from(flows));
            HtsimSwitches {
                stream: std::sync::Arc::new(std::sync::Mutex::new(stream)),
                salts,
            }
        })?;
        self.htsim = Some(built);
        Ok(())
    }
}

/// See `ffi::HostLbGroup`.
pub struct HostLbGroup(host::HostLbGroup);

impl HostLbGroup {
    fn new_qp_lb(
        &mut self,
        destination: u32,
        seed: u64,
        flow_sport: i32,
    ) -> Result<Box<HostLb>, String> {
        let group = &mut self.0;
        let flow_entropy = u16::try_from(flow_sport).ok().map(Entropy);
        guard(|| {
            Box::new(HostLb {
                lb: group.new_lb(destination, seed, flow_entropy),
                failure: None,
                armed: false,
            })
        })
    }
}

/// See `ffi::HostLb`. Poisoned (every call reports failure) after a caught panic.
pub struct HostLb {
    lb: host::HostLb,
    failure: Option<String>,
    armed: bool,
}

impl HostLb {
    /// Runs `f` on the selector unless poisoned; a panic poisons.
    fn call<T>(&mut self, fallback: T, f: impl FnOnce(&mut host::HostLb) -> T) -> (T, bool) {
        if self.failure.is_some() {
            return (fallback, false);
        }
        let armed = std::mem::take(&mut self.armed);
        let lb = &mut self.lb;
        match guard(|| {
            assert!(!armed, "injected test panic");
            f(lb)
        }) {
            Ok(v) => (v, true),
            Err(msg) => {
                self.failure = Some(msg);
                (fallback, false)
            }
        }
    }

    fn next_entropy(&mut self, cx: &ffi::SendContext) -> ffi::EntropyDecision {
        let cx = SendCx {
            now: SimTime::from_ns(cx.now_ns),
            psn: Psn(cx.psn),
            retransmission: cx.retransmission,
            inflight_pkts: cx.inflight_pkts,
            every_arrival_answered: cx.every_arrival_answered,
        };
        let (e, ok) = self.call(Entropy(0), |lb| lb.next_entropy(&cx));
        ffi::EntropyDecision {
            entropy: e.0,
            failed: !ok,
        }
    }

    fn on_feedback(&mut self, fb: &ffi::FeedbackEvent) -> bool {
        let kind = match fb.kind {
            ffi::FeedbackKind::Ack => host::FeedbackKind::Ack,
            ffi::FeedbackKind::Nack => host::FeedbackKind::Nack,
            ffi::FeedbackKind::Cnp => host::FeedbackKind::Cnp,
            ffi::FeedbackKind::Timeout => host::FeedbackKind::Timeout,
            ffi::FeedbackKind::ProbeAck => host::FeedbackKind::ProbeAck,
            _ => return self.fail("unknown feedback kind from C++"),
        };
        let fb = host::Feedback {
            kind,
            now: SimTime::from_ns(fb.now_ns),
            entropy: Entropy(fb.entropy),
            psn: Psn(fb.psn),
            rtt: fb.has_rtt.then_some(SimDuration::from_ns(fb.rtt_ns)),
            ecn: fb.ecn,
        };
        self.call((), |lb| lb.on_feedback(&fb)).1
    }

    fn poll_at_ns(&self) -> u64 {
        self.lb.poll_at().map_or(u64::MAX, SimTime::as_ns)
    }

    fn on_timer(&mut self, now_ns: u64) -> bool {
        self.call((), |lb| lb.on_timer(SimTime::from_ns(now_ns))).1
    }

    fn last_error(&self) -> String {
        self.failure.clone().unwrap_or_default()
    }

    fn send_after_ns(&self) -> u64 {
        self.lb.send_after().as_ns()
    }

    fn take_probe(&mut self, now_ns: u64) -> i32 {
        let (probe, _) = self.call(None, |lb| lb.take_probe(SimTime::from_ns(now_ns)));
        probe.map_or(-1, |e| i32::from(e.0))
    }

    fn path_switches(&self) -> u64 {
        self.lb.path_switches()
    }

    fn arm_test_panic(&mut self) {
        self.armed = true;
    }

    fn fail(&mut self, msg: &str) -> bool {
        self.failure = Some(msg.to_owned());
        false
    }
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

    fn add_port(&mut self, port: u32, rate_bps: u64, delay_ns: u64, faces_host: bool) {
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

    fn add_host(&mut self, host_ip: u32, tor: u32) {
        let _ = self.call(|lb, _| lb.add_host(host_ip, tor));
    }

    fn add_path(&mut self, dst_tor: u32, path_id: u32, hops: u8) -> bool {
        let path = sw::PathId { id: path_id, hops };
        let valid = (1..=sw::PathId::MAX_HOPS).contains(&hops)
            && (0..u32::from(hops)).all(|h| path.port_at(h).is_some());
        valid && self.call(|lb, _| lb.add_path(dst_tor, path)).is_some()
    }

    fn sees_every_packet(&self) -> bool {
        self.lb.sees_every_packet()
    }

    fn sees_egress(&self) -> bool {
        self.lb.sees_egress()
    }

    fn on_ingress(
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

    fn on_egress(
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

    fn poll_transmit(&mut self, now_ns: u64) -> ffi::ControlOut {
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

    fn poll_release(&mut self, now_ns: u64) -> ffi::ReleaseOut {
        let now = SimTime::from_ns(now_ns);
        let r = self.call(|lb, _| lb.poll_release(now));
        let q = r.flatten();
        ffi::ReleaseOut {
            has: q.is_some(),
            queue: q.unwrap_or(0),
            failed: r.is_none(),
        }
    }

    fn poll_at_ns(&self) -> u64 {
        if self.failure.is_some() {
            return u64::MAX;
        }
        self.lb.poll_at().map_or(u64::MAX, SimTime::as_ns)
    }

    fn on_timer(&mut self, now_ns: u64) -> bool {
        let now = SimTime::from_ns(now_ns);
        self.call(|lb, _| lb.on_timer(now)).is_some()
    }

    fn last_error(&self) -> String {
        self.failure.clone().unwrap_or_default()
    }

    fn on_link_state(&mut self, port: u32, remote: bool, down: bool) -> bool {
        let scope = if remote {
            sw::LinkScope::Remote
        } else {
            sw::LinkScope::Local { port }
        };
        self.call(|lb, _| lb.on_link_state(scope, down)).is_some()
    }

    fn memory_bytes(&self) -> u64 {
        self.lb.memory_bytes()
    }

    fn counters(&self) -> Vec<ffi::Counter> {
        self.lb
            .counter_list()
            .into_iter()
            .map(|(name, value)| ffi::Counter {
                name: name.to_owned(),
                value,
            })
            .collect()
    }

    fn arm_test_panic(&mut self) {
        self.armed = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx(psn: u32) -> ffi::SendContext {
        ffi::SendContext {
            now_ns: 0,
            psn,
            retransmission: false,
            inflight_pkts: 0,
            every_arrival_answered: false,
        }
    }

    #[test]
    fn bad_parameter_is_an_error_naming_it() {
        let Err(e) = new_lb_config("spray", "num_entropies = 0") else {
            panic!("accepted")
        };
        assert!(e.contains("parameter `num_entropies`"), "{e}");
    }

    #[test]
    fn injected_panic_is_caught_and_poisons() {
        let cfg = new_lb_config("ecmp", "").unwrap();
        let mut lb = cfg.new_host_lb(1).unwrap();
        assert!(!lb.next_entropy(&cx(0)).failed);
        lb.arm_test_panic();
        let d = lb.next_entropy(&cx(1));
        assert!(d.failed);
        assert!(
            lb.last_error().contains("injected test panic"),
            "{}",
            lb.last_error()
        );
        assert!(lb.next_entropy(&cx(2)).failed, "stays poisoned");
    }

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
