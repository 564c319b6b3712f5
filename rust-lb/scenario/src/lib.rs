//! # rdma-lb-scenario: scenario inputs, parsed, validated and expanded
//!
//! Pure parsing, validation and seeded workload generation for rdma-lb runs: no ns-3, no
//! processes, no clock. Shared by the `rdma-lb` CLI and (through the cxx bridge module
//! `rdmalb::scenario`) by the ns-3 scenario program, so both print the same errors.
//!
//! Input formats (one parser each; every error renders as `file:line: key: message`):
//! * ConWeave key/value configs (the keys its `run.py` writes) — [`conweave`];
//! * ConWeave/HPCC topology files — [`topology`];
//! * ConWeave flow files — [`flows`];
//! * flow-size CDFs (`traffic_gen` format) — [`cdf`];
//! * rdma-lb's own TOML scenarios — [`toml_config`];
//! * the UEC's htsim topology files (`.topo`) and connection matrices (`.cm`) — [`htsim`]
//!   (read by TOML scenarios: `htsim_topo`, `htsim_cm`); SimAI's inputs — [`simai`].
//!
//! Each text parser has a `parse_*_str(name, text)` form that needs no file (used by the
//! fuzz targets and property tests).
//!
//! [`load_scenario`] picks the format by extension (`.toml` → TOML, anything else →
//! ConWeave), applies [`Overrides`], expands workloads, and validates the result
//! ([`validate`]): the algorithm name and parameters via
//! `rdma_lb_core::config::LbConfig::parse` (returned by [`load_scenario_and_lb`]), the transport
//! ranges the model runs, flow endpoints, `after` references, link events.
#![forbid(unsafe_code)]

pub mod cdf;
pub mod conweave;
pub mod error;
pub mod flows;
pub mod fuzz_check;
pub mod htsim;
pub mod model;
pub mod overrides;
pub mod simai;
mod text;
pub mod toml_config;
pub mod topology;
pub mod transport_params;
pub mod units;
pub mod workload;

use std::path::Path;

use rdma_lb_core::config::LbConfig;

pub use error::{ErrorKind, Result, ScenarioError};
pub use model::{
    Cc, Collective, CollectiveKind, EcnEntry, Flow, LbSpec, Link, LinkEvent, PortRate, Quirk,
    QuirkSet, Recovery, RunSpec, Scenario, SwitchHash, Topology, Transport, TransportKind,
    UetAckRequest, UetCc, UetInflight, UetNsccFeedback, UetParams, UetQueueRelease, UetTxTime,
};
pub use overrides::Overrides;
pub use text::resolve_relative;

/// Loads, expands and validates the scenario at `path` with `overrides` applied.
///
/// # Errors
/// Any parse or validation error, located as `file:line: key: message`.
pub fn load_scenario(path: &Path, overrides: &Overrides) -> Result<Scenario> {
    load_scenario_and_lb(path, overrides).map(|(scenario, _)| scenario)
}

/// [`load_scenario`], also returning the load-balancing configuration that validation parsed
/// (`rdma_lb_core::config::LbConfig::parse` of `scenario.lb`), so that nothing parses it again.
///
/// # Errors
/// As [`load_scenario`].
pub fn load_scenario_and_lb(path: &Path, overrides: &Overrides) -> Result<(Scenario, LbConfig)> {
    let file = path.display().to_string();
    let text = text::read_file(path, "config")?;
    let is_toml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    let (mut scenario, lb_line) = if is_toml {
        toml_config::load_toml_str(path, &text, overrides)?
    } else {
        load_conweave(path, &file, &text, overrides)?
    };
    overrides.apply(&mut scenario)?;
    htsim_lb_defaults(&mut scenario);
    let lb = validate(&scenario, &file, lb_line, overrides)?;
    Ok((scenario, lb))
}

/// Under the UEC htsim's inputs ([`Scenario::htsim_inputs`]), the parameters of the load
/// balancer (after the overrides) that take htsim's behaviour when left out: `reps` hears a
/// NACK of a packet trimmed at its last hop as an ACK (`last_hop_trim = "ack"`; htsim
/// `uec.cpp` `UecSrc::processNack` reports it to `UecMpReps` as `PATH_GOOD` / `PATH_ECN`;
/// `rdma_lb_core::host::reps`). Appended to the parameter text, so `summary.json`'s config
/// echo shows it. Unreadable parameter text is left for validation to report.
pub fn htsim_lb_defaults(s: &mut Scenario) {
    use rdma_lb_core::Algorithm;
    if !s.htsim_inputs || s.lb.name.trim() != Algorithm::Reps.name() {
        return;
    }
    let Ok(given) = LbConfig::parameter_names(Algorithm::Reps, &s.lb.params) else {
        return;
    };
    if given.iter().any(|k| k == "last_hop_trim") {
        return;
    }
    let default = "last_hop_trim = \"ack\"";
    s.lb.params = if s.lb.params.trim().is_empty() {
        default.to_owned()
    } else {
        format!("{}, {default}", s.lb.params)
    };
}

/// The stem of a config path (`configs/demo.toml` → `demo`).
fn stem(path: &Path) -> String {
    path.file_stem().map_or_else(
        || "scenario".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    )
}

fn load_conweave(
    path: &Path,
    file: &str,
    text: &str,
    overrides: &Overrides,
) -> Result<(Scenario, usize)> {
    let c = conweave::parse_conweave_config_str(file, text)?;
    if overrides.load.is_some() {
        return Err(ScenarioError::file(
            overrides::OVERRIDES,
            "load",
            ErrorKind::Unsupported,
            format!("{file} reads its flows from FLOW_FILE; only generated (TOML) workloads take a load"),
        ));
    }
    let topo_path = text::resolve_relative(path, &c.topology_file.0);
    let mut topology = topology::parse_topology_file(&topo_path)
        .map_err(|e| e.io_at(file, c.topology_file.1, "TOPOLOGY_FILE"))?;
    if let Some(e) = c.error_rate_per_link {
        for l in &mut topology.links {
            l.error_rate = e;
        }
    }
    let flow_path = text::resolve_relative(path, &c.flow_file.0);
    let mut flows = flows::parse_flow_file(&flow_path, &topology)
        .map_err(|e| e.io_at(file, c.flow_file.1, "FLOW_FILE"))?;
    if overrides
        .quirks
        .unwrap_or(c.transport.quirks)
        .contains(Quirk::TimeTruncation)
    {
        flows::truncate_starts_as_ns3_19(&mut flows);
    }
    for &(ln, _, a, b) in &c.link_down {
        if !topology
            .links
            .iter()
            .any(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a))
        {
            return Err(ScenarioError::at(
                file,
                ln,
                "LINK_DOWN",
                ErrorKind::Node,
                format!("no link {a}-{b} in the topology"),
            ));
        }
    }
    let scenario = Scenario {
        name: stem(path),
        config_path: file.to_owned(),
        topology,
        flows,
        collectives: Vec::new(),
        transport: c.transport,
        lb: c.lb,
        run: c.run,
        notes: c.notes,
        simai_report: None,
        htsim_inputs: false,
    };
    Ok((scenario, c.lb_line))
}

/// An error about the `[lb]` section (`key` = `lb` or `lb_params`): located at the overrides
/// if they caused it, else at `lb_line` of `file` (0 = unknown line).
fn lb_error(
    file: &str,
    lb_line: usize,
    key: &str,
    from_override: bool,
    msg: String,
) -> ScenarioError {
    if from_override {
        ScenarioError::file(overrides::OVERRIDES, key, ErrorKind::Value, msg)
    } else if lb_line > 0 {
        ScenarioError::at(file, lb_line, key, ErrorKind::Value, msg)
    } else {
        ScenarioError::file(file, key, ErrorKind::Value, msg)
    }
}

/// Checks a scenario's cross-references: the algorithm and its parameters, the transport
/// settings, flow endpoints and `after` lists, collective flow ids, link events, stop time.
/// `lb_line` locates `[lb]`/`LB_MODE` in `file` for messages (0 = unknown); errors caused by an
/// override name `overrides`. Returns the algorithm's configuration, parsed and validated.
///
/// # Errors
/// The first problem found.
pub fn validate(
    s: &Scenario,
    file: &str,
    lb_line: usize,
    overrides: &Overrides,
) -> Result<LbConfig> {
    let lb = match LbConfig::parse(&s.lb.name, &s.lb.params) {
        Ok(lb) => lb,
        Err(e) => {
            let key = if e.parameter.is_some() || e.message.starts_with("cannot read") {
                "lb_params"
            } else {
                "lb"
            };
            let from_override = if key == "lb" {
                overrides.lb.is_some()
            } else {
                overrides.lb_params.is_some() || overrides.lb.is_some()
            };
            return Err(lb_error(file, lb_line, key, from_override, e.to_string()));
        }
    };
    if s.transport.uet.switch_hash == model::SwitchHash::Htsim
        && lb.switch != rdma_lb_core::config::SwitchLbConfig::EcmpHash
    {
        let msg = format!(
            "algorithm `{}` decides at the switches; transport.uet.switch_hash = \"htsim\" \
             (the default under htsim_topo) models htsim's plain ECMP switches (use a host \
             algorithm or switch_hash = \"five-tuple\")",
            s.lb.name.trim()
        );
        return Err(lb_error(file, lb_line, "lb", overrides.lb.is_some(), msg));
    }
    if s.lb.name.trim() == rdma_lb_core::Algorithm::Themis.name()
        && s.transport.recovery == model::Recovery::Irn
    {
        // Name both keys of the conflict: [lb] here, and whichever set the recovery.
        let recovery_key = if overrides.recovery.is_some() {
            "the override recovery=irn"
        } else if is_toml(file) {
            "transport.recovery = \"irn\""
        } else {
            "ENABLE_IRN 1"
        };
        let msg = format!(
            "algorithm `themis` conflicts with {recovery_key}: it needs nic-sr or gbn \
             receivers, as IRN's NACKs also acknowledge data and Themis-D would filter them as \
             reordering NACKs (the Themis paper, §3.3)"
        );
        let from_override = overrides.lb.is_some() || overrides.recovery.is_some();
        return Err(lb_error(file, lb_line, "lb", from_override, msg));
    }
    validate_transport(&s.transport, file, overrides)?;
    let n = s.topology.node_count;
    let mut is_switch = vec![false; n as usize];
    for &id in &s.topology.switch_ids {
        if let Some(f) = is_switch.get_mut(id as usize) {
            *f = true;
        }
    }
    if let Some(&id) = s
        .topology
        .endpoint_switch_ids
        .iter()
        .find(|&&id| is_switch.get(id as usize).copied() != Some(true))
    {
        return Err(ScenarioError::file(
            file,
            "topology",
            ErrorKind::Node,
            format!("endpoint switch {id} is not a switch"),
        ));
    }
    for (i, f) in s.flows.iter().enumerate() {
        let bad =
            |msg: String| ScenarioError::file(file, &format!("flow {i}"), ErrorKind::Value, msg);
        if f.id as usize != i {
            return Err(bad(format!("has id {} (ids must be 0..n in order)", f.id)));
        }
        for node in [f.src, f.dst] {
            if is_switch.get(node as usize).copied() != Some(false)
                && !s.topology.endpoint_switch_ids.contains(&node)
            {
                return Err(bad(format!("endpoint {node} is not a host")));
            }
        }
        if f.src == f.dst {
            return Err(bad(format!("from host {} to itself", f.src)));
        }
        if f.size_bytes == 0 {
            return Err(bad("size 0".to_owned()));
        }
        if let Some(a) = f
            .after
            .iter()
            .chain(&f.compute_after)
            .chain(&f.after_sent)
            .chain(&f.after_ready)
            .find(|&&a| a >= f.id)
        {
            return Err(bad(format!(
                "waits for flow {a}, which is not an earlier flow"
            )));
        }
        for (ids, what) in [(&f.after_sent, "sent"), (&f.after_ready, "handed off")] {
            if let Some(a) = ids
                .iter()
                .find(|&&a| s.flows.get(a as usize).map(|p| p.src) != Some(f.src))
            {
                return Err(bad(format!(
                    "waits for flow {a} to be {what}, which another host sends"
                )));
            }
        }
        if f.send_latency_ns > f.latency_ns {
            return Err(bad(format!(
                "send latency {} ns exceeds its latency {} ns",
                f.send_latency_ns, f.latency_ns
            )));
        }
    }
    for c in &s.collectives {
        if let Some(id) = c.flow_ids.iter().find(|&&id| id as usize >= s.flows.len()) {
            return Err(ScenarioError::file(
                file,
                &format!("collective {}", c.group),
                ErrorKind::Value,
                format!("flow {id} does not exist"),
            ));
        }
    }
    for e in &s.run.link_events {
        if !s
            .topology
            .links
            .iter()
            .any(|l| (l.a == e.a && l.b == e.b) || (l.a == e.b && l.b == e.a))
        {
            return Err(ScenarioError::file(
                file,
                "link event",
                ErrorKind::Node,
                format!("no link {}-{} in the topology", e.a, e.b),
            ));
        }
    }
    // RoCE marks ECN with thresholds chosen by port rate: every rate of a link at a switch needs
    // an entry (uet's thresholds are in packets). The scenario program refuses such a config
    // (RdmaScenarioRunner::Validate); found here, `rdma-lb check` refuses it too.
    if s.transport.ecn_enabled && s.transport.kind.is_roce() {
        let defaults;
        let ecn = if s.transport.ecn.is_empty() {
            defaults = Transport::default().ecn;
            &defaults
        } else {
            &s.transport.ecn
        };
        let at_switch = |n: u32| is_switch.get(n as usize).copied().unwrap_or(false);
        if let Some(l) = s.topology.links.iter().find(|l| {
            (at_switch(l.a) || at_switch(l.b)) && !ecn.iter().any(|e| e.rate_bps == l.rate_bps)
        }) {
            let (key, rates) = if is_toml(file) {
                (
                    "transport.ecn_thresholds",
                    "topology.link_rates or the topology",
                )
            } else {
                ("KMAX_MAP", "the topology file")
            };
            let listed: Vec<String> = ecn.iter().map(|e| units::format_rate(e.rate_bps)).collect();
            return Err(ScenarioError::file(
                file,
                key,
                ErrorKind::Value,
                format!(
                    "no entry for {}, the rate of link {}-{} ({rates}); every rate of a switch \
                     port needs one (listed: {})",
                    units::format_rate(l.rate_bps),
                    l.a,
                    l.b,
                    listed.join(", ")
                ),
            ));
        }
    }
    if s.run.hard_stop_ns == 0 {
        let key = if overrides.stop_ns.is_some() {
            "stop"
        } else {
            "run.stop"
        };
        return Err(ScenarioError::file(
            file,
            key,
            ErrorKind::Value,
            "stop time must be positive",
        ));
    }
    Ok(lb)
}

/// The ranges of the transport settings the model can run (whichever input set them): each
/// row's range check of the table of transport parameters ([`Transport::check_ranges`],
/// written once in `transport_params.rs`), then the checks that relate several fields, which
/// stay here: the uet transport is lossy (`kind` and `pfc`), its payload is its own (`kind` and
/// an override of `payload`); the uet table's checks ([`UetParams::check_ranges`], written
/// once in `transport_params/uet.rs`) run only when the kind uses them; each ECN entry's
/// kmin <= kmax and pmax (the entries of a by-hand row).
fn validate_transport(t: &Transport, file: &str, overrides: &Overrides) -> Result<()> {
    let bad = |key: &str, msg: String| Err(ScenarioError::file(file, key, ErrorKind::Value, msg));
    if let Err(e) = t.check_ranges() {
        // The parsers ran the same check at the key's line, so a value refused here was set
        // after parsing: by the `transport` override (named), else name the key in the
        // config's own terms.
        let toml_key = e.toml_key.trim_start_matches("transport.");
        if overrides.sets_transport_key(toml_key) {
            return Err(ScenarioError::file(
                overrides::OVERRIDES,
                e.toml_key,
                ErrorKind::Value,
                e.message,
            ));
        }
        let key = match e.conweave_key {
            Some(cw) if !is_toml(file) => cw,
            _ => e.toml_key,
        };
        return bad(key, e.message);
    }
    if t.kind == TransportKind::Uet {
        if overrides.sets_transport_key("payload") {
            return Err(ScenarioError::file(
                overrides::OVERRIDES,
                "transport.payload",
                ErrorKind::Value,
                "with kind = \"uet\" the payload is transport.uet.payload",
            ));
        }
        if t.pfc_enabled {
            let msg = "the uet transport is lossy (trimming or drops); set it false";
            return Err(if overrides.pfc.is_some() {
                ScenarioError::file(overrides::OVERRIDES, "pfc", ErrorKind::Value, msg)
            } else {
                ScenarioError::file(file, "transport.pfc", ErrorKind::Value, msg)
            });
        }
        // The uet table's rows' checks (`transport_params/uet.rs`), run only when the kind
        // uses them.
        if let Err(e) = t.uet.check_ranges() {
            return bad(e.toml_key, e.message);
        }
    }
    for (i, e) in t.ecn.iter().enumerate() {
        if e.kmin_bytes > e.kmax_bytes {
            return bad(
                &format!("transport.ecn[{i}]"),
                format!("kmin {} > kmax {}", e.kmin_bytes, e.kmax_bytes),
            );
        }
        if !(0.0..=1.0).contains(&e.pmax) {
            return bad(
                &format!("transport.ecn[{i}]"),
                "pmax must be in [0, 1]".to_owned(),
            );
        }
    }
    Ok(())
}

/// Whether `file` is a TOML scenario (else a ConWeave config).
fn is_toml(file: &str) -> bool {
    Path::new(file)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
}
