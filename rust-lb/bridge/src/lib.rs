//! The bridge between `rdma-lb-core` and the ns-3 module: only the `#[cxx::bridge]`
//! declarations, newtype wrappers and conversions; the logic lives in the core.
//!
//! One bridge per module, one-way and leaf first (the root's header includes the others):
//! * [`types`] (`types.rs.h`): the shared enum of the switch hash, which crosses the boundary
//!   as a typed value, and the transport's ns-3 attribute settings (the loss recovery and the
//!   congestion control by their TypeId names);
//! * [`scenario`] (`scenario.rs.h`): a loaded scenario as plain structs;
//! * [`host`] (`host.rs.h`), [`switch`] (`switch.rs.h`), [`config`] (`config.rs.h`): the
//!   shared structs of the NICs' and the switches' per-packet calls and of the configuration's
//!   answers, each next to the code that converts them (the NICs' per-queue-pair selectors,
//!   the switches' agents, the validated configuration);
//! * this file (`lib.rs.h`): the opaque load-balancing objects with every function on them
//!   (cxx keeps an opaque Rust type and the functions that return it in one bridge), and
//!   `load_scenario`, which hands C++ the scenario together with the algorithm configuration
//!   its validation parsed. The other modules' structs are aliased in, so no module below
//!   the root imports the root: the crate has no import cycle (`no_import_cycles`).
//!
//! Rules (the bridge stays thin):
//! * One-way: Rust exports functions; it never calls back into C++.
//! * Plain data in, plain data out; units in field names (`*_ns`, `*_bytes`); names only from
//!   the Rust enums that define them (C++ compares none).
//! * Only constructors return `Result` (a `rust::Error` in C++, raised by the ns-3 side as a
//!   fatal error with the message).
//! * **No panic crosses the bridge.** Every exported call runs inside `guard`, which catches
//!   a panic (the release profile keeps `panic = "unwind"` for this). A constructor turns it
//!   into an error; a per-packet call returns a safe decision flagged `failed`, poisons the
//!   object and keeps the message for `last_error()`, and the C++ caller stops the simulation
//!   with that message. The core is written not to panic at all; the guard is the backstop.
#![allow(
    unsafe_code,
    reason = "only the code cxx generates is unsafe; these files write none"
)]

mod config;
mod guard;
mod host;
mod scenario;
mod switch;
mod types;

use config::{algorithm_names, new_lb_config, LbConfig};
use host::{HostLb, HostLbGroup};
use scenario::SimAiReport;
use switch::SwitchLb;

#[cxx::bridge(namespace = "rdmalb::bridge")]
mod ffi {
    // ---- Types of the other bridge modules ----------------------------------------------

    extern "C++" {
        include!("rdma-lb-bridge/src/types.rs.h");
        include!("rdma-lb-bridge/src/scenario.rs.h");
        include!("rdma-lb-bridge/src/host.rs.h");
        include!("rdma-lb-bridge/src/switch.rs.h");
        include!("rdma-lb-bridge/src/config.rs.h");
        #[namespace = "rdmalb::scenario"]
        type Scenario = crate::scenario::ffi::Scenario;
        type PathIndexRouting = crate::config::ffi::PathIndexRouting;
        type SendContext = crate::host::ffi::SendContext;
        type FeedbackEvent = crate::host::ffi::FeedbackEvent;
        type EntropyDecision = crate::host::ffi::EntropyDecision;
        type PacketInfo = crate::switch::ffi::PacketInfo;
        type EgressCandidate = crate::switch::ffi::EgressCandidate;
        type LbTag = crate::switch::ffi::LbTag;
        type IngressDecision = crate::switch::ffi::IngressDecision;
        type ControlOut = crate::switch::ffi::ControlOut;
        type ReleaseOut = crate::switch::ffi::ReleaseOut;
        type Counter = crate::switch::ffi::Counter;
    }

    // ---- Shared plain-data types --------------------------------------------------------

    /// A scenario loaded and validated (`load_scenario`), with its load balancing.
    #[derive(Debug)]
    struct LoadedScenario {
        scenario: Scenario,
        /// The algorithm configuration the validation parsed (`scenario.lb` of the Rust model).
        lb: Box<LbConfig>,
        /// With a SimAI workload: its per-layer report, to write after the run.
        simai: Box<SimAiReport>,
    }

    // ---- Rust types and functions exposed to C++ ---------------------------------------

    extern "Rust" {
        /// A validated load-balancing configuration, shared by every NIC and switch of a run.
        type LbConfig;
        /// Parses and validates; the error message names the parameter at fault.
        fn new_lb_config(algorithm: &str, params: &str) -> Result<Box<LbConfig>>;
        /// Loads, expands and validates the scenario at `path` (`.toml` = rdma-lb TOML, else a
        /// ConWeave config) with `overrides` = "key=value;key=value" applied (keys:
        /// `rdmalb::scenario::override_keys()`). Error: one line `file:line: key: message`.
        fn load_scenario(path: &str, overrides: &str) -> Result<LoadedScenario>;
        /// Every algorithm name, in table order.
        fn algorithm_names() -> Vec<String>;

        /// SimAI's per-layer result file of a scenario's SimAI iteration
        /// (`rdma_lb_scenario::simai::report`).
        type SimAiReport;
        /// Whether the scenario has a SimAI iteration (else nothing to write).
        fn has_report(self: &SimAiReport) -> bool;
        /// The file's name (SimAI's: `ncclFlowModel_EndToEnd.csv`).
        fn file_name(self: &SimAiReport) -> &'static str;
        /// The file's text from every flow's completion at its sender, ns (index = flow id;
        /// `u64::MAX` = not completed). Error (one line): rank 0 has a collective that did
        /// not complete; the caller writes no file and prints it.
        fn end_to_end_csv(self: &SimAiReport, flow_end_ns: &[u64]) -> Result<String>;
        /// The configured algorithm's name.
        fn algorithm_name(self: &LbConfig) -> &'static str;
        /// The parameter text the configuration was parsed from.
        fn params(self: &LbConfig) -> &str;
        /// The same configuration, without the shared streams of `share_reference_rand` and
        /// `use_htsim_switches` (each copy is set up on its own).
        fn copy(self: &LbConfig) -> Box<LbConfig>;
        /// Whether the algorithm sprays a queue pair over many paths and learns per packet
        /// from the ECN marks and RTTs echoed for each (reps, whack-a-mole): a transport that
        /// leaves out-of-order arrivals unanswered starves it.
        fn sprays_on_feedback(self: &LbConfig) -> bool;
        /// Whether the algorithm keeps a queue pair on one path at a time and moves it on ECN
        /// and RTT feedback (hopper, flowbender): thinned ACKs starve it.
        fn moves_on_feedback(self: &LbConfig) -> bool;
        /// How the fabric is to route the algorithm's path indices.
        fn path_index_routing(self: &LbConfig) -> PathIndexRouting;
        /// Whether the parameters set `num_paths`.
        fn num_paths_given(self: &LbConfig) -> bool;
        /// The same configuration with `num_paths` set (validated; an error for an algorithm
        /// without paths, or a count its other parameters refuse).
        fn with_num_paths(self: &LbConfig, num_paths: u32) -> Result<Box<LbConfig>>;
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
        /// The flow's one entropy if the selector keeps one for its life (ECMP's NIC side and
        /// every switch scheme's; `rdma_lb_core::host::HostLb::fixed_entropy`: every other
        /// answer is then constant), else -1.
        fn fixed_entropy(self: &HostLb) -> i32;
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
        /// Whether the agent reads the fabric map (`add_host`, `add_path`).
        fn uses_fabric_map(self: &SwitchLb) -> bool;
        /// Whether `on_ingress` wants packets with a single candidate too.
        fn sees_every_packet(self: &SwitchLb) -> bool;
        /// Whether `on_egress` must be called at dequeue.
        fn sees_egress(self: &SwitchLb) -> bool;
        /// Whether `on_ingress` reads the candidates' queue and sent bytes (else zeros do).
        fn reads_port_load(self: &SwitchLb) -> bool;
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

/// See `ffi::load_scenario`: the scenario module loads, this root wraps the result in the
/// bridge's struct (so that no module below the root imports the root's bridge).
fn load_scenario(path: &str, overrides: &str) -> Result<ffi::LoadedScenario, String> {
    let scenario::Loaded {
        scenario,
        lb,
        simai,
    } = scenario::load_scenario(path, overrides)?;
    Ok(ffi::LoadedScenario {
        scenario,
        lb,
        simai,
    })
}
