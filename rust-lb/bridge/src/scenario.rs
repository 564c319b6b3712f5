//! Bridge module `rdmalb::scenario`: a scenario loaded with `rdma-lb-scenario`, as plain
//! shared structs. One call, `rdmalb::bridge::load_scenario` (declared with the load-balancing
//! objects in `lib.rs`, implemented here by [`load_scenario`]), returns everything: this
//! module's [`ffi::Scenario`] and the algorithm configuration validation parsed; the C++ side
//! (`ns3::RdmaScenarioSpec`) copies what it needs.
//!
//! Units are in the field names (`_ns`, `_bps`, `_bytes`). The transport's loss recovery and
//! congestion control are attribute settings naming their ns-3 TypeIds, the switch hash is a
//! shared enum of [`crate::types`]; the collective
//! `kind` is the name `CollectiveKind::name` defines. Errors are single lines
//! `file:line: key: message`; like every bridge call, a panic is caught and returned as an
//! error instead of crossing into C++.

use std::path::Path;

use rdma_lb_scenario as sc;

use crate::config::LbConfig;
use crate::types::ns3_setting;

#[cxx::bridge(namespace = "rdmalb::scenario")]
pub mod ffi {
    #[namespace = "rdmalb::bridge"]
    extern "C++" {
        include!("rdma-lb-bridge/src/types.rs.h");
        type SwitchHash = crate::types::ffi::SwitchHash;
        type Ns3Setting = crate::types::ffi::Ns3Setting;
        type Ns3ValueKind = crate::types::ffi::Ns3ValueKind;
    }

    /// One link, in topology-file order (port numbers per node follow this order).
    #[derive(Debug, Clone)]
    struct Link {
        a: u32,
        b: u32,
        rate_bps: u64,
        delay_ns: u64,
        error_rate: f64,
    }

    /// One direction of a link set apart: node `node`'s port towards `peer` sends at
    /// `rate_bps`; (uet) its queue limit and ECN thresholds are multiplied by `queue_scale`.
    #[derive(Debug, Clone)]
    struct PortRate {
        node: u32,
        peer: u32,
        rate_bps: u64,
        queue_scale: f64,
    }

    /// One flow. `after`: ids of flows that must complete (last byte delivered) before this
    /// one starts; `compute_after`: flows after whose delivery its sender computes for
    /// `compute_ns` first; `latency_ns` after every dependency; `after_completion`: the
    /// dependencies count at their sender's completion (model::Flow); both lists empty for
    /// ordinary flows.
    #[derive(Debug, Clone)]
    struct Flow {
        id: u32,
        src: u32,
        dst: u32,
        pg: u32,
        size_bytes: u64,
        start_ns: u64,
        after: Vec<u32>,
        compute_after: Vec<u32>,
        compute_ns: u64,
        latency_ns: u64,
        after_completion: bool,
        /// Flows that must have sent their last byte first (model::Flow::after_sent).
        after_sent: Vec<u32>,
        /// Flows whose hand-off must come first (model::Flow::after_ready).
        after_ready: Vec<u32>,
        /// The part of latency_ns after the hand-off (model::Flow::send_latency_ns).
        send_latency_ns: u64,
    }

    /// One collective group: CCT = last completion − first start of `flow_ids`.
    #[derive(Debug, Clone)]
    struct Collective {
        group: u32,
        /// "allreduce-ring" | "alltoall" | "permutation" | "incast"
        kind: String,
        flow_ids: Vec<u32>,
    }

    /// ECN thresholds for ports of one rate.
    #[derive(Debug, Clone)]
    struct EcnEntry {
        rate_bps: u64,
        kmin_bytes: u64,
        kmax_bytes: u64,
        pmax: f64,
    }

    /// A link going down (`down`) or up at `at_ns`; with `by_port`, the link of port `port`
    /// of switch `a` (whose other end is `b`); with `one_way`, only `a`'s direction towards
    /// `b`, silently (no switch is told).
    #[derive(Debug, Clone)]
    struct LinkEvent {
        at_ns: u64,
        a: u32,
        b: u32,
        down: bool,
        by_port: bool,
        port: u32,
        one_way: bool,
    }

    /// NIC, switch and congestion-control settings (ns-3 attribute names in comments).
    #[derive(Debug, Clone)]
    struct Transport {
        /// UET: RdmaFabricHelper::UseHtsimSwitches when `Htsim` (a choice of how the switches
        /// are built, not an attribute: `rdma_lb_scenario::transport_params::uet`)
        uet_switch_hash: SwitchHash,
        /// HAS_WIN: RdmaNic::Window = the fabric's largest BDP (derived by the program)
        has_win: bool,
        /// ECN thresholds per port rate (RdmaSwitch::EcnKmin/EcnKmax/EcnPmax by port rate)
        ecn: Vec<EcnEntry>,
        /// Every other parameter: the attribute settings of the table of transport
        /// parameters (`rdma_lb_scenario::transport_params`), in table order; under uet the
        /// NICs' loss recovery is the uet transport's (`Transport::ns3_settings`).
        attributes: Vec<Ns3Setting>,
        /// The uet transport's settings, the rows of its table
        /// (`rdma_lb_scenario::transport_params::uet`, `UetParams::ns3_settings`), whatever
        /// the kind: applied after `attributes` when the NICs run the uet transport.
        uet_attributes: Vec<Ns3Setting>,
        /// The reference quirks reproduced (`rdma_lb_scenario::Quirk`, one flag each).
        quirk_flow_ports: bool,
        /// The reference is SimAI (a SimAI workload), not ConWeave's simulator: quirk
        /// `flow-ports` means SimAI's ports, `time-truncation` its integer arithmetic
        /// (`RdmaScenarioQuirks::simai`).
        quirks_of_simai: bool,
        quirk_time_truncation: bool,
        quirk_pacing_wakeup: bool,
        quirk_irn_sender: bool,
        quirk_ecn_shared_stream: bool,
        quirk_event_order: bool,
        quirk_glibc_rand: bool,
    }

    /// Run control and outputs.
    #[derive(Debug, Clone)]
    struct RunSpec {
        seed: u64,
        flowgen_start_ns: u64,
        flowgen_stop_ns: u64,
        hard_stop_ns: u64,
        monitor_interval_ns: u64,
        link_events: Vec<LinkEvent>,
        /// Empty = the program's default `out/<name>-<lb>-s<seed>`.
        out_dir: String,
        pfc_trace: bool,
        queue_trace: bool,
        /// Period of rate.txt / retx.txt (0 = off).
        rate_trace_ns: u64,
        /// Write failed_drops.csv.
        failed_link_drops: bool,
        /// Bin width of rtt_hist.csv (0 = off).
        rtt_histogram_ns: u64,
        /// Write port_bytes.csv.
        port_bytes: bool,
        /// Informational host load (0 if unknown).
        load: f64,
    }

    /// A validated scenario (its load balancing: `rdmalb::bridge::LoadedScenario::lb`).
    #[derive(Debug, Clone)]
    struct Scenario {
        /// Config file stem.
        name: String,
        config_path: String,
        node_count: u32,
        /// Every other node id is a host.
        switch_ids: Vec<u32>,
        links: Vec<Link>,
        /// Applied after the links (model::PortRate).
        port_rates: Vec<PortRate>,
        /// Switches that also end flows (model::Topology::endpoint_switch_ids).
        endpoint_switch_ids: Vec<u32>,
        flows: Vec<Flow>,
        collectives: Vec<Collective>,
        transport: Transport,
        run: RunSpec,
        /// Warnings (`file:line: KEY: ...`) about accepted-but-not-modelled keys; print them.
        notes: Vec<String>,
        /// The effective settings as TOML text (no flow list), for summary.json.
        effective_config: String,
    }

    extern "Rust" {
        /// The override keys `rdmalb::bridge::load_scenario` accepts.
        fn override_keys() -> Vec<String>;
        /// The transport defaults (`rdma_lb_scenario::Transport::default()`, ConWeave run.py's
        /// values): the one definition the ns-3 attribute defaults and
        /// `ns3::RdmaScenarioTransport` read.
        fn default_transport() -> Transport;
    }
}

/// A scenario loaded and validated, with its load balancing (the crate root hands it to C++ as
/// `rdmalb::bridge::LoadedScenario`).
#[derive(Debug)]
pub(crate) struct Loaded {
    pub(crate) scenario: ffi::Scenario,
    pub(crate) lb: Box<LbConfig>,
    pub(crate) simai: Box<SimAiReport>,
}

/// A scenario's SimAI per-layer report plan (`rdma_lb_scenario::simai::report`), if any.
#[derive(Debug)]
pub(crate) struct SimAiReport(Option<sc::simai::EndToEndPlan>);

impl SimAiReport {
    pub(crate) fn has_report(&self) -> bool {
        self.0.is_some()
    }

    #[allow(
        clippy::unused_self,
        reason = "a method, so that C++ reaches it through the object it has"
    )]
    pub(crate) fn file_name(&self) -> &'static str {
        sc::simai::END_TO_END_CSV
    }

    pub(crate) fn end_to_end_csv(&self, flow_end_ns: &[u64]) -> Result<String, String> {
        crate::guard::guard(|| {
            self.0.as_ref().map_or_else(
                || Err("the scenario has no SimAI workload".to_owned()),
                |p| {
                    p.csv(&|id| {
                        flow_end_ns
                            .get(id as usize)
                            .copied()
                            .filter(|&e| e != u64::MAX)
                    })
                },
            )
        })?
    }
}

/// See `rdmalb::bridge::load_scenario` (`crate::ffi`).
pub(crate) fn load_scenario(path: &str, overrides: &str) -> Result<Loaded, String> {
    guarded(path, overrides, load)
}

/// Runs a loader inside the bridge's panic guard.
fn guarded<T>(
    path: &str,
    overrides: &str,
    f: impl FnOnce(&str, &str) -> Result<T, String>,
) -> Result<T, String> {
    crate::guard::guard(|| f(path, overrides))?
}

fn override_keys() -> Vec<String> {
    sc::overrides::OVERRIDE_KEYS
        .iter()
        .map(|k| (*k).to_owned())
        .collect()
}

fn load(path: &str, overrides: &str) -> Result<Loaded, String> {
    let o = sc::Overrides::parse(overrides).map_err(|e| e.to_string())?;
    let (mut s, lb) = sc::load_scenario_and_lb(Path::new(path), &o).map_err(|e| e.to_string())?;
    Ok(Loaded {
        scenario: convert(&s),
        lb: Box::new(LbConfig::validated(lb, &s.lb.params)?),
        simai: Box::new(SimAiReport(s.simai_report.take())),
    })
}

fn convert(s: &sc::Scenario) -> ffi::Scenario {
    ffi::Scenario {
        name: s.name.clone(),
        config_path: s.config_path.clone(),
        node_count: s.topology.node_count,
        switch_ids: s.topology.switch_ids.clone(),
        links: s
            .topology
            .links
            .iter()
            .map(|l| ffi::Link {
                a: l.a,
                b: l.b,
                rate_bps: l.rate_bps,
                delay_ns: l.delay_ns,
                error_rate: l.error_rate,
            })
            .collect(),
        port_rates: s
            .topology
            .port_rates
            .iter()
            .map(|p| ffi::PortRate {
                node: p.node,
                peer: p.peer,
                rate_bps: p.rate_bps,
                queue_scale: p.queue_scale,
            })
            .collect(),
        endpoint_switch_ids: s.topology.endpoint_switch_ids.clone(),
        flows: s
            .flows
            .iter()
            .map(|f| ffi::Flow {
                id: f.id,
                src: f.src,
                dst: f.dst,
                pg: f.pg,
                size_bytes: f.size_bytes,
                start_ns: f.start_ns,
                after: f.after.clone(),
                compute_after: f.compute_after.clone(),
                compute_ns: f.compute_ns,
                latency_ns: f.latency_ns,
                after_completion: f.after_completion,
                after_sent: f.after_sent.clone(),
                after_ready: f.after_ready.clone(),
                send_latency_ns: f.send_latency_ns,
            })
            .collect(),
        collectives: s
            .collectives
            .iter()
            .map(|c| ffi::Collective {
                group: c.group,
                kind: c.kind.name().to_owned(),
                flow_ids: c.flow_ids.clone(),
            })
            .collect(),
        transport: {
            let mut t = transport(&s.transport);
            // The reference of a SimAI workload is SimAI: flow-ports means its ports,
            // time-truncation its integer arithmetic.
            t.quirks_of_simai = s.simai_report.is_some();
            t
        },
        run: ffi::RunSpec {
            seed: s.run.seed,
            flowgen_start_ns: s.run.flowgen_start_ns,
            flowgen_stop_ns: s.run.flowgen_stop_ns,
            hard_stop_ns: s.run.hard_stop_ns,
            monitor_interval_ns: s.run.monitor_interval_ns,
            link_events: s
                .run
                .link_events
                .iter()
                .map(|e| ffi::LinkEvent {
                    at_ns: e.at_ns,
                    a: e.a,
                    b: e.b,
                    down: e.down,
                    by_port: e.port.is_some(),
                    port: e.port.unwrap_or(0),
                    one_way: e.one_way,
                })
                .collect(),
            out_dir: s.run.out_dir.clone(),
            pfc_trace: s.run.pfc_trace,
            queue_trace: s.run.queue_trace,
            rate_trace_ns: s.run.rate_trace_ns,
            failed_link_drops: s.run.failed_link_drops,
            rtt_histogram_ns: s.run.rtt_histogram_ns,
            port_bytes: s.run.port_bytes,
            load: s.run.load,
        },
        notes: s.notes.clone(),
        effective_config: s.effective_config(),
    }
}

fn transport(t: &sc::Transport) -> ffi::Transport {
    ffi::Transport {
        uet_switch_hash: t.uet.switch_hash.into(),
        has_win: t.has_win,
        ecn: t
            .ecn
            .iter()
            .map(|e| ffi::EcnEntry {
                rate_bps: e.rate_bps,
                kmin_bytes: e.kmin_bytes,
                kmax_bytes: e.kmax_bytes,
                pmax: e.pmax,
            })
            .collect(),
        attributes: t.ns3_settings().iter().map(ns3_setting).collect(),
        uet_attributes: t.uet.ns3_settings().iter().map(ns3_setting).collect(),
        quirk_flow_ports: t.quirks.contains(sc::Quirk::FlowPorts),
        quirks_of_simai: false,
        quirk_time_truncation: t.quirks.contains(sc::Quirk::TimeTruncation),
        quirk_pacing_wakeup: t.quirks.contains(sc::Quirk::PacingWakeup),
        quirk_irn_sender: t.quirks.contains(sc::Quirk::IrnSender),
        quirk_ecn_shared_stream: t.quirks.contains(sc::Quirk::EcnSharedStream),
        quirk_event_order: t.quirks.contains(sc::Quirk::EventOrder),
        quirk_glibc_rand: t.quirks.contains(sc::Quirk::GlibcRand),
    }
}

fn default_transport() -> ffi::Transport {
    transport(&sc::Transport::default())
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::indexing_slicing,
        clippy::panic,
        reason = "test code: a failed unwrap is a failed test"
    )]
    use super::*;

    fn repo(rel: &str) -> String {
        format!("{}/../../{rel}", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn loads_the_demo_config_with_overrides() {
        let l = load_scenario(&repo("configs/leaf_spine_demo.toml"), "").unwrap();
        let s = &l.scenario;
        assert_eq!(s.name, "leaf_spine_demo");
        assert_eq!(
            (s.node_count, s.switch_ids.len(), s.links.len()),
            (12, 4, 12)
        );
        assert_eq!(s.links[0].rate_bps, 100_000_000_000);
        assert_eq!(s.links[0].delay_ns, 1000);
        assert!(!s.flows.is_empty());
        assert!(s
            .flows
            .iter()
            .enumerate()
            .all(|(i, f)| f.id as usize == i && f.pg == 3));
        assert_eq!(
            (l.lb.algorithm_name(), l.lb.params(), s.run.seed),
            ("ecmp", "", 1)
        );
        let attr = |name: &str| {
            s.transport
                .attributes
                .iter()
                .find(|a| a.name == name)
                .unwrap()
                .clone()
        };
        assert_eq!(
            (attr("LossRecovery").text, attr("LossRecovery").summary_text),
            ("ns3::RdmaGoBackN".to_owned(), "gbn".to_owned())
        );
        assert_eq!(
            (
                attr("CongestionControl").text,
                attr("CongestionControl").summary_text
            ),
            ("ns3::RdmaDcqcn".to_owned(), "dcqcn".to_owned())
        );
        assert_eq!(attr("BufferSize").uint, 9 * 1024 * 1024);
        assert_eq!(
            (attr("NackInterval").kind, attr("NackInterval").uint),
            (crate::types::ffi::Ns3ValueKind::TimeNs, 4_000)
        );
        assert!(
            s.effective_config.contains("[transport]"),
            "{}",
            s.effective_config
        );

        let lo = load_scenario(
            &repo("configs/leaf_spine_demo.toml"),
            "lb=reps;lb_params=num_entropies = 64, buffer_size = 4;seed=3;out=o/d;stop=5ms",
        )
        .unwrap();
        let o = &lo.scenario;
        assert_eq!(lo.lb.algorithm_name(), "reps");
        assert_eq!(lo.lb.params(), "num_entropies = 64, buffer_size = 4");
        assert_eq!(
            lo.lb.cfg(),
            &rdma_lb_core::config::LbConfig::parse("reps", "num_entropies = 64, buffer_size = 4")
                .unwrap(),
            "the configuration validation parsed"
        );
        assert_eq!(
            (o.run.seed, o.run.out_dir.as_str(), o.run.hard_stop_ns),
            (3, "o/d", 5_000_000)
        );
        assert_ne!(o.flows.len(), 0);
        // The override's seed re-draws the generated workload.
        assert!(o.flows.len() != s.flows.len() || o.flows[0].start_ns != s.flows[0].start_ns);
    }

    #[test]
    fn collectives_cross_with_their_dependencies() {
        let s = load_scenario(&repo("configs/themis_16x16_400g_allreduce.toml"), "")
            .unwrap()
            .scenario;
        assert_eq!(s.collectives.len(), 16);
        assert_eq!(s.collectives[0].kind, "allreduce-ring");
        assert_eq!(s.collectives[0].flow_ids.len(), 480);
        let recovery = s
            .transport
            .attributes
            .iter()
            .find(|a| a.name == "LossRecovery")
            .unwrap();
        assert_eq!(
            (recovery.text.as_str(), recovery.summary_text.as_str()),
            ("ns3::RdmaNicSr", "nic-sr")
        );
        let f = &s.flows[16];
        assert_eq!(
            f.after,
            vec![15],
            "step 1 of rank 0 waits for rank 15's step-0 flow"
        );
    }

    #[test]
    fn a_simai_workload_carries_its_per_layer_report() {
        let l = load_scenario(&repo("configs/simai_micro_allreduce.toml"), "").unwrap();
        assert!(l.simai.has_report());
        // Its reference is SimAI: flow-ports and time-truncation in SimAI's way.
        let t = &l.scenario.transport;
        assert!(t.quirks_of_simai && t.quirk_flow_ports && t.quirk_time_truncation);
        assert_eq!(l.simai.file_name(), "ncclFlowModel_EndToEnd.csv");
        let n = l.scenario.flows.len();
        // Every flow done at 100 ms: two layers' rows, SUM and the totals under the summary.
        let csv = l.simai.end_to_end_csv(&vec![100_000_000; n]).unwrap();
        assert_eq!(csv.lines().count(), 7, "{csv}");
        assert!(csv
            .lines()
            .nth(3)
            .unwrap()
            .starts_with("embedding_layer,test1,556.000000,"));
        // A flow of rank 0 that did not complete: no file, one line saying which.
        let e = l.simai.end_to_end_csv(&vec![u64::MAX; n]).unwrap_err();
        assert!(
            e.starts_with(
                "ncclFlowModel_EndToEnd.csv not written: rank 0's fwd collective of layer 0"
            ),
            "{e}"
        );
        let plain = load_scenario(&repo("configs/leaf_spine_demo.toml"), "").unwrap();
        assert!(!plain.simai.has_report());
        assert!(!plain.scenario.transport.quirks_of_simai);
    }

    #[test]
    fn errors_are_single_located_lines() {
        let e = load_scenario(&repo("configs/leaf_spine_demo.toml"), "colour=red").unwrap_err();
        assert!(e.starts_with("overrides: colour: unknown override"), "{e}");
        let e = load_scenario(&repo("configs/leaf_spine_demo.toml"), "lb=nope").unwrap_err();
        assert!(
            e.starts_with("overrides: lb: algorithm `nope`: unknown algorithm"),
            "{e}"
        );
        let e = load_scenario("/nonexistent/x.toml", "").unwrap_err();
        assert_eq!(
            e,
            "/nonexistent/x.toml: config: cannot read: No such file or directory (os error 2)"
        );
        assert!(!e.contains('\n'));
        assert_eq!(override_keys().len(), 12);
    }

    #[test]
    fn a_panic_becomes_an_error() {
        let e = guarded::<()>("p", "o", |_, _| panic!("injected scenario panic")).unwrap_err();
        assert_eq!(
            e,
            "internal error in rdma-lb (caught panic): injected scenario panic"
        );
    }
}
