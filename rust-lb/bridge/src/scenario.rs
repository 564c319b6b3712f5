//! Bridge module `rdmalb::scenario`: a scenario loaded with `rdma-lb-scenario`, as plain
//! shared structs. One call, `rdmalb::bridge::load_scenario` (declared with the load-balancing
//! objects in `lib.rs`, implemented here by [`load_scenario`]), returns everything: this
//! module's [`ffi::Scenario`] and the algorithm configuration validation parsed; the C++ side
//! (`ns3::RdmaScenarioSpec`) copies what it needs.
//!
//! Units are in the field names (`_ns`, `_bps`, `_bytes`). The transport's kind, recovery,
//! congestion control and switch hash are the shared enums of [`crate::types`]; the collective
//! `kind` is the name `CollectiveKind::name` defines. Errors are single lines
//! `file:line: key: message`; like every bridge call, a panic is caught and returned as an
//! error instead of crossing into C++.

use std::path::Path;

use rdma_lb_scenario as sc;

use crate::config::LbConfig;
use crate::ffi::LoadedScenario;

#[cxx::bridge(namespace = "rdmalb::scenario")]
pub mod ffi {
    #[namespace = "rdmalb::bridge"]
    extern "C++" {
        include!("rdma-lb-bridge/src/types.rs.h");
        type Cc = crate::types::ffi::Cc;
        type Recovery = crate::types::ffi::Recovery;
        type TransportKind = crate::types::ffi::TransportKind;
        type SwitchHash = crate::types::ffi::SwitchHash;
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
    /// one starts (it starts at max(start_ns, their completions)); empty for ordinary flows.
    #[derive(Debug, Clone)]
    struct Flow {
        id: u32,
        src: u32,
        dst: u32,
        pg: u32,
        size_bytes: u64,
        start_ns: u64,
        after: Vec<u32>,
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
        /// RdmaNic::Transport
        kind: TransportKind,
        /// UET: payload and header bytes per data packet (RdmaNic::PayloadSize, UetHeaderSize)
        uet_payload_bytes: u32,
        uet_header_bytes: u32,
        /// UET: switches trim instead of dropping (RdmaSwitch::TrimEnabled)
        uet_trimming: bool,
        /// UET: queue and ECN thresholds in packets, initial window (0 = derived)
        uet_queue_packets: u32,
        uet_ecn_kmin_packets: u32,
        uet_ecn_kmax_packets: u32,
        uet_initial_window_packets: u32,
        /// UET: window cap in base BDPs
        uet_max_window_bdp: f64,
        /// UET: base RTT and retransmission timeout (0 = derived)
        uet_base_rtt_ns: u64,
        uet_rto_ns: u64,
        /// UET: RdmaFabricHelper::UseHtsimSwitches when `Htsim`
        uet_switch_hash: SwitchHash,
        /// RdmaNic::LossRecovery
        recovery: Recovery,
        /// RdmaNic::CcMode
        cc: Cc,
        has_win: bool,
        var_win: bool,
        u_target: f64,
        mi_thresh: u32,
        fast_react: bool,
        multi_rate: bool,
        sample_feedback: bool,
        int_multi: u32,
        dctcp_rate_ai_bps: u64,
        pfc_enabled: bool,
        ecn_enabled: bool,
        buffer_bytes: u64,
        ecn: Vec<EcnEntry>,
        alpha_resume_interval_ns: u64,
        rate_decrease_interval_ns: u64,
        rp_timer_ns: u64,
        fast_recovery_times: u32,
        ewma_gain: f64,
        rate_ai_bps: u64,
        rate_hai_bps: u64,
        min_rate_bps: u64,
        clamp_target_rate: bool,
        rate_on_first_cnp: f64,
        ack_interval_packets: u32,
        l2_chunk_bytes: u32,
        l2_back_to_zero: bool,
        rate_bound: bool,
        payload_bytes: u32,
        pause_time_ns: u64,
        l2_timeout_ns: u64,
        nack_interval_ns: u64,
        irn_rto_low_ns: u64,
        irn_rto_high_ns: u64,
        irn_bdp_bytes: u64,
        irn_ooo_threshold: u32,
        ack_milestone_fix: bool,
        nack_carries_cnp: bool,
        headroom_sum_quirk: bool,
        withdraw_failed_ports: bool,
        /// The reference quirks reproduced (`rdma_lb_scenario::Quirk`, one flag each).
        quirk_flow_ports: bool,
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

/// See `rdmalb::bridge::load_scenario` (`crate::ffi`).
pub(crate) fn load_scenario(path: &str, overrides: &str) -> Result<LoadedScenario, String> {
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

fn load(path: &str, overrides: &str) -> Result<LoadedScenario, String> {
    let o = sc::Overrides::parse(overrides).map_err(|e| e.to_string())?;
    let (s, lb) = sc::load_scenario_and_lb(Path::new(path), &o).map_err(|e| e.to_string())?;
    Ok(LoadedScenario {
        scenario: convert(&s),
        lb: Box::new(LbConfig::validated(lb, &s.lb.params)?),
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
        transport: transport(&s.transport),
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
            load: s.run.load,
        },
        notes: s.notes.clone(),
        effective_config: s.effective_config(),
    }
}

fn transport(t: &sc::Transport) -> ffi::Transport {
    ffi::Transport {
        kind: t.kind.into(),
        uet_payload_bytes: t.uet.payload_bytes,
        uet_header_bytes: t.uet.header_bytes,
        uet_trimming: t.uet.trimming,
        uet_queue_packets: t.uet.queue_packets,
        uet_ecn_kmin_packets: t.uet.ecn_kmin_packets,
        uet_ecn_kmax_packets: t.uet.ecn_kmax_packets,
        uet_initial_window_packets: t.uet.initial_window_packets,
        uet_max_window_bdp: t.uet.max_window_bdp,
        uet_base_rtt_ns: t.uet.base_rtt_ns,
        uet_rto_ns: t.uet.rto_ns,
        uet_switch_hash: t.uet.switch_hash.into(),
        recovery: t.recovery.into(),
        cc: t.cc.into(),
        has_win: t.has_win,
        var_win: t.var_win,
        u_target: t.u_target,
        mi_thresh: t.mi_thresh,
        fast_react: t.fast_react,
        multi_rate: t.multi_rate,
        sample_feedback: t.sample_feedback,
        int_multi: t.int_multi,
        dctcp_rate_ai_bps: t.dctcp_rate_ai_bps,
        pfc_enabled: t.pfc_enabled,
        ecn_enabled: t.ecn_enabled,
        buffer_bytes: t.buffer_bytes,
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
        alpha_resume_interval_ns: t.alpha_resume_interval_ns,
        rate_decrease_interval_ns: t.rate_decrease_interval_ns,
        rp_timer_ns: t.rp_timer_ns,
        fast_recovery_times: t.fast_recovery_times,
        ewma_gain: t.ewma_gain,
        rate_ai_bps: t.rate_ai_bps,
        rate_hai_bps: t.rate_hai_bps,
        min_rate_bps: t.min_rate_bps,
        clamp_target_rate: t.clamp_target_rate,
        rate_on_first_cnp: t.rate_on_first_cnp,
        ack_interval_packets: t.ack_interval_packets,
        l2_chunk_bytes: t.l2_chunk_bytes,
        l2_back_to_zero: t.l2_back_to_zero,
        rate_bound: t.rate_bound,
        payload_bytes: t.payload_bytes,
        pause_time_ns: t.pause_time_ns,
        l2_timeout_ns: t.l2_timeout_ns,
        nack_interval_ns: t.nack_interval_ns,
        irn_rto_low_ns: t.irn_rto_low_ns,
        irn_rto_high_ns: t.irn_rto_high_ns,
        irn_bdp_bytes: t.irn_bdp_bytes,
        irn_ooo_threshold: t.irn_ooo_threshold,
        ack_milestone_fix: t.ack_milestone_fix,
        nack_carries_cnp: t.nack_carries_cnp,
        headroom_sum_quirk: t.headroom_sum_quirk,
        withdraw_failed_ports: t.withdraw_failed_ports,
        quirk_flow_ports: t.quirks.contains(sc::Quirk::FlowPorts),
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
        assert_eq!(s.transport.recovery, ffi::Recovery::Gbn);
        assert_eq!(s.transport.cc, ffi::Cc::Dcqcn);
        assert_eq!(s.transport.kind, ffi::TransportKind::Roce);
        assert_eq!(s.transport.buffer_bytes, 9 * 1024 * 1024);
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
        assert_eq!(s.transport.recovery, ffi::Recovery::NicSr);
        let f = &s.flows[16];
        assert_eq!(
            f.after,
            vec![15],
            "step 1 of rank 0 waits for rank 15's step-0 flow"
        );
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
        assert_eq!(override_keys().len(), 11);
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
