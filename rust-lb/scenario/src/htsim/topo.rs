//! htsim topology files (`.topo`: `htsim_uec -topo FILE`), as the UEC's htsim reads them
//! (`FatTreeTopologyCfg::read_cfg`, fat_tree_topology.cpp), the switch counts it derives
//! (`set_custom_params`) and the fabric it builds (the `FatTreeTopology` constructor), as a
//! [`Topology`].
//!
//! ```text
//! # comment
//! Nodes 128              # header: hosts
//! Tiers 3                # 2 = leaf-spine, 3 = fat tree
//! Podsize 16             # hosts per pod (2 tiers: = Nodes)
//! Tier 0                 # 0 = ToR, 1 = aggregation (spine), 2 = core
//! Downlink_speed_Gbps 100   # links going down from this tier (tier 0: the host links)
//! Radix_Down 4           # down ports of a switch (tier 0: hosts per ToR)
//! Radix_Up 4             # up ports (not on the top tier)
//! Downlink_Latency_ns 1000
//! Switch_Latency_ns 0    # default 0
//! Oversubscribed 1       # default 1; tier 0: must be Radix_Down / Radix_Up
//! Bundle 1               # parallel links to each switch below (default 1; tier 0: 1)
//! Queue_Up 0 / Queue_Down 0   # bytes; kept, but htsim_uec overrides them (below)
//! Tier 1 ...
//! ```
//! Keys are case-insensitive, one `key value` a line; `#` starts a comment.
//!
//! **Derived** (htsim `set_custom_params`, each rule checked with an error naming the key):
//! pods = Nodes / Podsize; ToRs per pod = Podsize / Radix_Down₀; ToR uplinks = Nodes x speed₀ /
//! (speed₁ x Oversubscribed₀); aggregation switches per pod = ToR uplinks / (pods x
//! Radix_Down₁), which times Bundle₁ must be Radix_Up₀; 3 tiers: aggregation uplinks = ToR
//! uplinks x speed₁ / (speed₂ x Oversubscribed₁), cores = those / Radix_Down₂, a multiple of the
//! aggregation switches per pod, and cores x Bundle₂ / (aggregation switches per pod) must be
//! Radix_Up₁.
//!
//! **Wiring** ([`HtsimTopo::to_topology`], htsim's `FatTreeTopology`): node ids are the hosts
//! `0..Nodes` (host i = htsim's host i, which `.cm` files name), then the ToRs, the aggregation
//! switches and the cores, each in htsim's order. Host i hangs off ToR i / Radix_Down₀. A ToR of
//! pod p links to the aggregation switches of pod p (2 tiers: to every spine), Bundle₁ parallel
//! links each; aggregation switch a (position a mod per-pod in its pod) links to cores
//! `a mod per-pod + per-pod x l` for l < Radix_Up₁ / Bundle₂, Bundle₂ links each. Links are
//! listed in htsim's construction order (host links by ToR, then ToR-up links by ToR, then
//! aggregation-up links by aggregation switch), so each switch's ports are numbered as htsim's.
//! A link's rate is the `Downlink_speed_Gbps` and its delay the `Downlink_Latency_ns` of the
//! tier above it.
//!
//! **Deviations.**
//! * Switch latency: rdma-lb's switches forward without one, so half of each switch's
//!   `Switch_Latency_ns` is added to the delay of every link of that switch. A packet crosses a
//!   switch on two links, so every host-to-host path keeps htsim's total (htsim
//!   `get_diameter_latency`); queueing interacts with it slightly differently. The latencies
//!   must therefore be even numbers of ns (an odd one is an error). Every shipped file has 0.
//! * `Queue_Up` / `Queue_Down` are kept in [`HtsimTier`] but not used: `htsim_uec` replaces
//!   every queue size with `-q` or its BDP-derived default (`set_queue_sizes`), and so does a
//!   TOML scenario (`[transport.uet] queue_packets`, `super::uet_defaults`).
//! * htsim skips unknown header lines and keys placed before the first `Tier`; here they are
//!   errors, as are a repeated key or `Tier`, a value with extra fields, a `Tier 2` section in a
//!   2-tier file, and a 2-tier file whose `Podsize` is not `Nodes` (htsim would link every leaf
//!   to every spine of every pod, more uplinks than `Radix_Up`). Where htsim asserts
//!   (divisibility, Bundle₀ = 1) this returns an error. Odd switch latencies: above.
//! * `Radix_Up` and `Queue_Up` on the top tier of a 2-tier file are accepted and unused, as by
//!   htsim; on tier 2 they are errors, as in htsim.

use std::path::Path;

use crate::error::{ErrorKind, Result, ScenarioError};
use crate::model::{Link, Topology};
use crate::text::{numbered_lines, read_file, uint};
use crate::topology::{MAX_LINKS, MAX_NODES};

/// One `Tier t` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HtsimTier {
    /// 1-based line of its `Tier t`.
    pub line: usize,
    /// Rate of the links going down from this tier, Gbit/s (tier 0: the host links).
    pub downlink_speed_gbps: u64,
    /// Down ports per switch (tier 0: hosts per ToR).
    pub radix_down: u32,
    /// Up ports per switch (0 = not given: the top tier).
    pub radix_up: u32,
    /// Propagation latency of the links going down from this tier, ns.
    pub downlink_latency_ns: u64,
    /// Latency of a switch of this tier, ns (0 = none).
    pub switch_latency_ns: u64,
    /// Oversubscription ratio of this tier (1 = none).
    pub oversubscribed: u32,
    /// Parallel links from a switch of this tier to each switch below it.
    pub bundle: u32,
    /// `Queue_Up` in bytes, as written (htsim_uec overrides it).
    pub queue_up_bytes: Option<u64>,
    /// `Queue_Down` in bytes, as written (htsim_uec overrides it).
    pub queue_down_bytes: Option<u64>,
}

/// A parsed `.topo` file with the switch counts htsim derives from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HtsimTopo {
    /// The file's name as used in messages.
    pub file: String,
    /// Hosts (`Nodes`).
    pub nodes: u32,
    /// 2 (leaf-spine) or 3 (fat tree).
    pub tiers: u32,
    /// Hosts per pod (`Podsize`).
    pub podsize: u32,
    /// The tiers' sections, by tier number (`tiers` of them).
    pub tier: Vec<HtsimTier>,
    /// Pods (Nodes / Podsize).
    pub pods: u32,
    /// ToRs per pod.
    pub tors_per_pod: u32,
    /// Aggregation switches (spines) per pod.
    pub aggs_per_pod: u32,
    /// Core switches (0 with 2 tiers).
    pub cores: u32,
}

/// Reads and parses a `.topo` file.
///
/// # Errors
/// See the module documentation.
pub fn parse_topo_file(path: &Path) -> Result<HtsimTopo> {
    let text = read_file(path, "topology")?;
    parse_topo_str(&path.display().to_string(), &text)
}

/// Each key once: its canonical spelling (as htsim's files write it).
const HEADER_KEYS: [&str; 3] = ["Nodes", "Tiers", "Podsize"];
const TIER_KEYS: [&str; 9] = [
    "Downlink_speed_Gbps",
    "Radix_Down",
    "Radix_Up",
    "Downlink_Latency_ns",
    "Switch_Latency_ns",
    "Oversubscribed",
    "Bundle",
    "Queue_Up",
    "Queue_Down",
];
const SPEED: usize = 0;
const RADIX_DOWN: usize = 1;
const RADIX_UP: usize = 2;
const LINK_LATENCY: usize = 3;
const SWITCH_LATENCY: usize = 4;
const OVERSUB: usize = 5;
const BUNDLE: usize = 6;
const QUEUE_UP: usize = 7;

/// Largest latency accepted (1 s), speed (1 Pbit/s) and radix, as guards against overflow.
const MAX_LATENCY_NS: u64 = 1_000_000_000;
const MAX_SPEED_GBPS: u64 = 1_000_000;

/// A tier section while it is read: each key's value and line.
#[derive(Clone, Copy, Default)]
struct TierText {
    line: usize,
    values: [Option<(u64, usize)>; 9],
}

impl TierText {
    fn get(&self, key: usize) -> Option<u64> {
        self.values.get(key).copied().flatten().map(|(v, _)| v)
    }

    /// The line of `key`, or of the `Tier` line if the key is not given.
    fn line_of(&self, key: usize) -> usize {
        self.values
            .get(key)
            .copied()
            .flatten()
            .map_or(self.line, |(_, l)| l)
    }
}

/// Parses `.topo` text; `name` is used in error messages as the file name.
///
/// # Errors
/// See the module documentation.
pub fn parse_topo_str(name: &str, text: &str) -> Result<HtsimTopo> {
    let last_line = text.lines().count().max(1);
    let mut header: [Option<(u64, usize)>; 3] = [None; 3];
    let mut tiers: [Option<TierText>; 3] = [None; 3];
    let mut current: Option<usize> = None;
    for (ln, line) in numbered_lines(text, true) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (key, value) = match f.as_slice() {
            [k, v] => (*k, *v),
            [k] => {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    k,
                    ErrorKind::Syntax,
                    "expected `key value`, found no value",
                ))
            }
            _ => {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    f.first().copied().unwrap_or("line"),
                    ErrorKind::Syntax,
                    format!("expected `key value`, found {} fields", f.len()),
                ))
            }
        };
        if key.eq_ignore_ascii_case("tier") {
            let t: u64 = uint(name, ln, "Tier", value)?;
            current = Some(open_tier(name, ln, t, &header, &mut tiers)?);
        } else if let Some(k) = HEADER_KEYS.iter().position(|h| h.eq_ignore_ascii_case(key)) {
            let canon = HEADER_KEYS.get(k).copied().unwrap_or(key);
            if current.is_some() {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    canon,
                    ErrorKind::Syntax,
                    "a header key must come before the first `Tier` line",
                ));
            }
            let v: u64 = uint(name, ln, canon, value)?;
            check_header_value(name, ln, k, v)?;
            set_once(name, ln, canon, header.get_mut(k), v)?;
        } else if let Some(k) = TIER_KEYS.iter().position(|h| h.eq_ignore_ascii_case(key)) {
            let canon = TIER_KEYS.get(k).copied().unwrap_or(key);
            let Some(t) = current else {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    canon,
                    ErrorKind::Syntax,
                    "a tier key must follow a `Tier` line",
                ));
            };
            if t == 2 && (k == RADIX_UP || k == QUEUE_UP) {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    canon,
                    ErrorKind::Value,
                    "the top tier (2) has no uplinks",
                ));
            }
            let v: u64 = uint(name, ln, canon, value)?;
            let slot = tiers
                .get_mut(t)
                .and_then(Option::as_mut)
                .and_then(|tt| tt.values.get_mut(k));
            set_once(name, ln, canon, slot, v)?;
        } else {
            return Err(ScenarioError::at(
                name,
                ln,
                key,
                ErrorKind::UnknownKey,
                format!(
                    "unknown key (known, any case: {}, Tier, {})",
                    HEADER_KEYS.join(", "),
                    TIER_KEYS.join(", ")
                ),
            ));
        }
    }
    let first_tier = tiers.iter().flatten().map(|t| t.line).min();
    let n_tiers = check_header(name, first_tier.unwrap_or(last_line), &header)?;
    let mut sections = Vec::new();
    for t in 0..n_tiers as usize {
        let Some(tt) = tiers.get(t).copied().flatten() else {
            return Err(ScenarioError::at(
                name,
                last_line,
                "Tier",
                ErrorKind::Missing,
                format!(
                    "no `Tier {t}` section (Tiers {n_tiers} needs tiers 0 to {})",
                    n_tiers - 1
                ),
            ));
        };
        sections.push(tier_section(name, t, n_tiers as usize, &tt)?);
    }
    derive(name, &header, sections, &tiers)
}

/// Stores a key's value, refusing a second one.
fn set_once(
    name: &str,
    ln: usize,
    key: &str,
    slot: Option<&mut Option<(u64, usize)>>,
    v: u64,
) -> Result<()> {
    match slot {
        Some(Some((_, first))) => Err(ScenarioError::at(
            name,
            ln,
            key,
            ErrorKind::Duplicate,
            format!("given twice in this section (first at line {first})"),
        )),
        Some(s) => {
            *s = Some((v, ln));
            Ok(())
        }
        None => Err(ScenarioError::at(
            name,
            ln,
            key,
            ErrorKind::Syntax,
            "no section to hold it",
        )),
    }
}

/// A `Tier t` line: checks t against `Tiers` and opens its section.
fn open_tier(
    name: &str,
    ln: usize,
    t: u64,
    header: &[Option<(u64, usize)>; 3],
    tiers: &mut [Option<TierText>; 3],
) -> Result<usize> {
    let Some((n_tiers, _)) = header.get(1).copied().flatten() else {
        return Err(ScenarioError::at(
            name,
            ln,
            "Tiers",
            ErrorKind::Missing,
            "the header must give `Tiers 2|3` before the first `Tier` line",
        ));
    };
    if t >= n_tiers.min(3) {
        return Err(ScenarioError::at(
            name,
            ln,
            "Tier",
            ErrorKind::Value,
            format!(
                "tier {t} in a {n_tiers}-tier topology (tiers 0 to {})",
                n_tiers.clamp(1, 3) - 1
            ),
        ));
    }
    let idx = usize::try_from(t).unwrap_or(usize::MAX);
    match tiers.get_mut(idx) {
        Some(Some(prev)) => Err(ScenarioError::at(
            name,
            ln,
            "Tier",
            ErrorKind::Duplicate,
            format!("tier {t} has a section already (line {})", prev.line),
        )),
        Some(slot) => {
            *slot = Some(TierText {
                line: ln,
                ..TierText::default()
            });
            Ok(idx)
        }
        None => Err(ScenarioError::at(
            name,
            ln,
            "Tier",
            ErrorKind::Value,
            format!("tier {t} does not exist (0, 1 or 2)"),
        )),
    }
}

/// A header value in range: Tiers 2 or 3, Nodes and Podsize in 1..=MAX_NODES.
fn check_header_value(name: &str, ln: usize, k: usize, v: u64) -> Result<()> {
    let key = HEADER_KEYS.get(k).copied().unwrap_or("header");
    let (ok, want) = if k == 1 {
        (
            v == 2 || v == 3,
            "2 (leaf-spine) or 3 (fat tree)".to_owned(),
        )
    } else {
        (
            (1..=u64::from(MAX_NODES)).contains(&v),
            format!("in 1..={MAX_NODES}"),
        )
    };
    if ok {
        Ok(())
    } else {
        Err(ScenarioError::at(
            name,
            ln,
            key,
            ErrorKind::Value,
            format!("must be {want}, got {v}"),
        ))
    }
}

/// Nodes, Tiers and Podsize all given (else an error at `end`, the first `Tier` line or the
/// last line); returns Tiers.
fn check_header(name: &str, end: usize, header: &[Option<(u64, usize)>; 3]) -> Result<u32> {
    for (k, key) in HEADER_KEYS.iter().enumerate() {
        if header.get(k).copied().flatten().is_none() {
            return Err(ScenarioError::at(
                name,
                end,
                key,
                ErrorKind::Missing,
                format!("the header (before the first `Tier`) has no `{key}` line"),
            ));
        }
    }
    Ok(header
        .get(1)
        .copied()
        .flatten()
        .map_or(0, |(v, _)| u32::try_from(v).unwrap_or(0)))
}

/// One tier's section: required keys present, values in range, defaults filled in.
fn tier_section(name: &str, t: usize, n_tiers: usize, tt: &TierText) -> Result<HtsimTier> {
    let top = t + 1 == n_tiers;
    let mut required = vec![SPEED, RADIX_DOWN, LINK_LATENCY];
    if !top {
        required.push(RADIX_UP);
    }
    for k in required {
        if tt.get(k).is_none() {
            let key = TIER_KEYS.get(k).copied().unwrap_or("key");
            return Err(ScenarioError::at(
                name,
                tt.line,
                key,
                ErrorKind::Missing,
                format!("tier {t} has no `{key}`"),
            ));
        }
    }
    let range = |k: usize, lo: u64, hi: u64, dflt: u64| -> Result<u64> {
        let v = tt.get(k).unwrap_or(dflt);
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(ScenarioError::at(
                name,
                tt.line_of(k),
                TIER_KEYS.get(k).copied().unwrap_or("key"),
                ErrorKind::Value,
                format!("must be in {lo}..={hi}, got {v}"),
            ))
        }
    };
    let max_radix = u64::from(MAX_NODES);
    let as_u32 = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let switch_latency_ns = range(SWITCH_LATENCY, 0, MAX_LATENCY_NS, 0)?;
    if switch_latency_ns % 2 != 0 {
        return Err(ScenarioError::at(
            name,
            tt.line_of(SWITCH_LATENCY),
            "Switch_Latency_ns",
            ErrorKind::Unsupported,
            format!(
                "{switch_latency_ns} ns is odd: rdma-lb's switches have no latency, so half of it \
                 is added to each link of the switch, which needs whole ns"
            ),
        ));
    }
    let bundle = range(BUNDLE, 1, max_radix, 1)?;
    if t == 0 && bundle != 1 {
        return Err(ScenarioError::at(
            name,
            tt.line_of(BUNDLE),
            "Bundle",
            ErrorKind::Value,
            format!("tier 0 (host links) must have Bundle 1, got {bundle} (htsim asserts it)"),
        ));
    }
    Ok(HtsimTier {
        line: tt.line,
        downlink_speed_gbps: range(SPEED, 1, MAX_SPEED_GBPS, 0)?,
        radix_down: as_u32(range(RADIX_DOWN, 1, max_radix, 0)?),
        radix_up: as_u32(range(RADIX_UP, if top { 0 } else { 1 }, max_radix, 0)?),
        downlink_latency_ns: range(LINK_LATENCY, 1, MAX_LATENCY_NS, 0)?,
        switch_latency_ns,
        oversubscribed: as_u32(range(OVERSUB, 1, max_radix, 1)?),
        bundle: as_u32(bundle),
        queue_up_bytes: tt.get(QUEUE_UP),
        queue_down_bytes: tt.get(QUEUE_UP + 1),
    })
}

/// htsim's `set_custom_params`: the switch counts, each rule checked.
fn derive(
    name: &str,
    header: &[Option<(u64, usize)>; 3],
    tier: Vec<HtsimTier>,
    text: &[Option<TierText>; 3],
) -> Result<HtsimTopo> {
    let value = |k: usize| {
        header
            .get(k)
            .copied()
            .flatten()
            .map_or(0, |(v, _)| u32::try_from(v).unwrap_or(u32::MAX))
    };
    let (nodes, n_tiers, podsize) = (value(0), value(1), value(2));
    let tt = |t: usize| text.get(t).copied().flatten().unwrap_or_default();
    let err = |t: usize, k: usize, kind: ErrorKind, msg: String| {
        ScenarioError::at(
            name,
            tt(t).line_of(k),
            TIER_KEYS.get(k).copied().unwrap_or("key"),
            kind,
            msg,
        )
    };
    let (Some(t0), Some(t1)) = (tier.first(), tier.get(1)) else {
        return Err(ScenarioError::at(
            name,
            1,
            "Tiers",
            ErrorKind::Missing,
            "needs at least tiers 0 and 1",
        ));
    };
    let (n, ps) = (u64::from(nodes), u64::from(podsize));
    for (t, s) in tier.iter().enumerate() {
        if s.radix_down % s.bundle != 0 {
            return Err(err(
                t,
                RADIX_DOWN,
                ErrorKind::Value,
                format!(
                    "tier {t}: Radix_Down {} is not a multiple of its Bundle {}",
                    s.radix_down, s.bundle
                ),
            ));
        }
        if let Some(above) = tier.get(t + 1) {
            if s.radix_up % above.bundle != 0 {
                return Err(err(
                    t,
                    RADIX_UP,
                    ErrorKind::Value,
                    format!(
                        "tier {t}: Radix_Up {} is not a multiple of tier {}'s Bundle {}",
                        s.radix_up,
                        t + 1,
                        above.bundle
                    ),
                ));
            }
        }
    }
    let header_err = |k: usize, msg: String| {
        let line = header.get(k).copied().flatten().map_or(1, |(_, l)| l);
        let key = HEADER_KEYS.get(k).copied().unwrap_or("header");
        ScenarioError::at(name, line, key, ErrorKind::Value, msg)
    };
    if n % ps != 0 {
        return Err(header_err(
            2,
            format!("Nodes {nodes} is not a multiple of Podsize {podsize}"),
        ));
    }
    let pods = n / ps;
    if n_tiers == 2 && pods != 1 {
        return Err(header_err(
            2,
            format!("a 2-tier topology is one pod: Podsize must be Nodes ({nodes}), got {podsize}"),
        ));
    }
    let rd0 = u64::from(t0.radix_down);
    if ps % rd0 != 0 {
        return Err(err(
            0,
            RADIX_DOWN,
            ErrorKind::Value,
            format!("Podsize {podsize} is not a multiple of tier 0's Radix_Down {rd0}"),
        ));
    }
    let tors_per_pod = ps / rd0;
    if u64::from(t0.radix_down / t0.radix_up.max(1)) != u64::from(t0.oversubscribed) {
        return Err(err(
            0,
            OVERSUB,
            ErrorKind::Value,
            format!(
                "tier 0: Oversubscribed {} must be Radix_Down / Radix_Up = {} / {}",
                t0.oversubscribed, t0.radix_down, t0.radix_up
            ),
        ));
    }
    let up_num = n * t0.downlink_speed_gbps;
    let up_den = t1.downlink_speed_gbps * u64::from(t0.oversubscribed);
    if up_num % up_den != 0 {
        return Err(err(
            1,
            SPEED,
            ErrorKind::Value,
            format!(
                "Nodes x tier 0 speed ({up_num} Gbps) is not a multiple of tier 1 speed x tier 0 \
                 Oversubscribed ({up_den} Gbps): no whole number of ToR uplinks"
            ),
        ));
    }
    let tor_uplinks = up_num / up_den;
    let rd1 = u64::from(t1.radix_down);
    if tor_uplinks % (pods * rd1) != 0 {
        return Err(err(
            1,
            RADIX_DOWN,
            ErrorKind::Value,
            format!(
                "{tor_uplinks} ToR uplinks do not fill {pods} pod(s) of switches with Radix_Down \
                 {rd1}"
            ),
        ));
    }
    let aggs_per_pod = tor_uplinks / (pods * rd1);
    if aggs_per_pod.saturating_mul(u64::from(t1.bundle)) != u64::from(t0.radix_up) {
        return Err(err(
            0,
            RADIX_UP,
            ErrorKind::Value,
            format!(
                "tier 0 Radix_Up {} must be {aggs_per_pod} tier-1 switches per pod x tier 1 \
                 Bundle {} (from {tor_uplinks} ToR uplinks, {pods} pod(s), tier 1 Radix_Down {rd1})",
                t0.radix_up, t1.bundle
            ),
        ));
    }
    let mut cores = 0u64;
    if let Some(t2) = tier.get(2) {
        let num = tor_uplinks * t1.downlink_speed_gbps;
        let den = t2.downlink_speed_gbps * u64::from(t1.oversubscribed);
        if num % den != 0 {
            return Err(err(
                2,
                SPEED,
                ErrorKind::Value,
                format!(
                    "ToR uplinks x tier 1 speed ({num} Gbps) is not a multiple of tier 2 speed x \
                     tier 1 Oversubscribed ({den} Gbps): no whole number of aggregation uplinks"
                ),
            ));
        }
        let agg_uplinks = num / den;
        let rd2 = u64::from(t2.radix_down);
        if agg_uplinks % rd2 != 0 {
            return Err(err(
                2,
                RADIX_DOWN,
                ErrorKind::Value,
                format!("{agg_uplinks} aggregation uplinks are not a multiple of Radix_Down {rd2}"),
            ));
        }
        cores = agg_uplinks / rd2;
        if cores % aggs_per_pod != 0 {
            return Err(err(
                2,
                RADIX_DOWN,
                ErrorKind::Value,
                format!(
                    "{cores} core switches are not a multiple of the {aggs_per_pod} aggregation \
                     switches per pod"
                ),
            ));
        }
        if cores.saturating_mul(u64::from(t2.bundle)) / aggs_per_pod != u64::from(t1.radix_up) {
            return Err(err(
                1,
                RADIX_UP,
                ErrorKind::Value,
                format!(
                    "tier 1 Radix_Up {} must be {cores} cores x tier 2 Bundle {} / {aggs_per_pod} \
                     aggregation switches per pod",
                    t1.radix_up, t2.bundle
                ),
            ));
        }
    }
    let tors = tors_per_pod * pods;
    let aggs = aggs_per_pod.saturating_mul(pods);
    let node_count = n
        .saturating_add(tors)
        .saturating_add(aggs)
        .saturating_add(cores);
    let links = count_links(n, tors, aggs, &tier, aggs_per_pod);
    if node_count > u64::from(MAX_NODES) || links > u64::from(MAX_LINKS) {
        return Err(header_err(
            0,
            format!(
                "{node_count} nodes and {links} links: at most {MAX_NODES} nodes and {MAX_LINKS} \
                 links"
            ),
        ));
    }
    let c = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    Ok(HtsimTopo {
        file: name.to_owned(),
        nodes,
        tiers: n_tiers,
        podsize,
        tier,
        pods: c(pods),
        tors_per_pod: c(tors_per_pod),
        aggs_per_pod: c(aggs_per_pod),
        cores: c(cores),
    })
}

/// The number of links [`HtsimTopo::to_topology`] builds (saturating: a huge count is refused).
fn count_links(n: u64, tors: u64, aggs: u64, tier: &[HtsimTier], aggs_per_pod: u64) -> u64 {
    let b1 = tier.get(1).map_or(1, |t| u64::from(t.bundle));
    let ru1 = tier.get(1).map_or(0, |t| u64::from(t.radix_up));
    let (tor_up, agg_up) = if tier.len() == 3 {
        (tors.saturating_mul(aggs_per_pod), aggs.saturating_mul(ru1))
    } else {
        (tors.saturating_mul(aggs), 0)
    };
    n.saturating_add(tor_up.saturating_mul(b1))
        .saturating_add(agg_up)
}

impl HtsimTopo {
    /// Number of ToRs (leaves).
    #[must_use]
    pub fn tors(&self) -> u32 {
        self.tors_per_pod.saturating_mul(self.pods)
    }

    /// Number of aggregation switches (spines with 2 tiers).
    #[must_use]
    pub fn aggs(&self) -> u32 {
        self.aggs_per_pod.saturating_mul(self.pods)
    }

    /// Number of links [`HtsimTopo::to_topology`] builds (each of a bundle counted).
    #[must_use]
    pub fn link_count(&self) -> u64 {
        count_links(
            u64::from(self.nodes),
            u64::from(self.tors()),
            u64::from(self.aggs()),
            &self.tier,
            u64::from(self.aggs_per_pod),
        )
    }

    /// Number of switches.
    #[must_use]
    pub fn switches(&self) -> u32 {
        self.tors()
            .saturating_add(self.aggs())
            .saturating_add(self.cores)
    }

    /// The host links' rate, Gbit/s (tier 0's `Downlink_speed_Gbps`; htsim's `-linkspeed`
    /// must equal it).
    #[must_use]
    pub fn host_rate_gbps(&self) -> u64 {
        self.tier.first().map_or(0, |t| t.downlink_speed_gbps)
    }

    /// Tier `t`'s (downlink latency, switch latency), ns; (0, 0) for a tier it does not have.
    fn latencies_ns(&self, t: usize) -> (u64, u64) {
        self.tier
            .get(t)
            .map_or((0, 0), |s| (s.downlink_latency_ns, s.switch_latency_ns))
    }

    /// Links on the longest host-to-host path: 2 x tiers (htsim `get_diameter`).
    #[must_use]
    pub fn diameter_links(&self) -> u64 {
        2 * u64::from(self.tiers)
    }

    /// htsim's diameter latency, ns: the links' and switches' latencies on the longest path
    /// (fat_tree_topology.cpp `initialize`).
    #[must_use]
    pub fn diameter_latency_ns(&self) -> u64 {
        let (l0, s0) = self.latencies_ns(0);
        let (l1, s1) = self.latencies_ns(1);
        let mut d = 2 * (l0 + l1) + 2 * s0 + s1;
        if self.tiers == 3 {
            let (l2, s2) = self.latencies_ns(2);
            d += 2 * l2 + s1 + s2;
        }
        d
    }

    /// htsim's `network_max_unloaded_rtt` in ps for data packets of `mtu_bytes` and ACKs of
    /// `ack_bytes`: 2 x the diameter latency + the diameter's links x one data and one ACK
    /// serialization at the host rate (main_uec.cpp `calculate_rtt`).
    #[must_use]
    pub fn network_rtt_ps(&self, mtu_bytes: u64, ack_bytes: u64) -> u64 {
        let gbps = u128::from(self.host_rate_gbps().max(1));
        let bits = u128::from(mtu_bytes.saturating_add(ack_bytes)) * 8;
        // bits / Gbps = ns; x 1000 = ps.
        let tx_ps = bits * 1000 * u128::from(self.diameter_links()) / gbps;
        let lat_ps = u128::from(self.diameter_latency_ns()) * 2000;
        u64::try_from(lat_ps + tx_ps).unwrap_or(u64::MAX)
    }

    /// The node id of ToR `i` (ids: hosts, ToRs, aggregation switches, cores).
    #[must_use]
    pub fn tor_id(&self, i: u32) -> u32 {
        self.nodes + i
    }

    /// The node id of aggregation switch (spine) `i`.
    #[must_use]
    pub fn agg_id(&self, i: u32) -> u32 {
        self.nodes + self.tors() + i
    }

    /// The node id of core switch `i`.
    #[must_use]
    pub fn core_id(&self, i: u32) -> u32 {
        self.nodes + self.tors() + self.aggs() + i
    }

    /// The fabric htsim builds from this file (module documentation: wiring and switch
    /// latency).
    #[must_use]
    pub fn to_topology(&self) -> Topology {
        let (tors, aggs) = (self.tors(), self.aggs());
        let t = |i: usize| self.tier.get(i).cloned();
        let (Some(t0), Some(t1)) = (t(0), t(1)) else {
            return Topology {
                node_count: self.nodes,
                switch_ids: Vec::new(),
                links: Vec::new(),
                port_rates: Vec::new(),
                endpoint_switch_ids: Vec::new(),
            };
        };
        let t2 = t(2);
        let half = |s: Option<&HtsimTier>| s.map_or(0, |s| s.switch_latency_ns / 2);
        let link = |a, b, s: &HtsimTier, delay_ns| Link {
            a,
            b,
            rate_bps: s.downlink_speed_gbps * 1_000_000_000,
            delay_ns,
            error_rate: 0.0,
        };
        let mut links = Vec::new();
        // ToR -> hosts (htsim: srv = tor x Radix_Down + l; Bundle 0 is 1).
        let host_delay = t0.downlink_latency_ns + half(Some(&t0));
        for tor in 0..tors {
            for l in 0..t0.radix_down {
                let host = tor * t0.radix_down + l;
                links.push(link(host, self.tor_id(tor), &t0, host_delay));
            }
        }
        // ToR -> aggregation switches of its pod (2 tiers: every spine).
        let tor_agg_delay = t1.downlink_latency_ns + half(Some(&t0)) + half(Some(&t1));
        for tor in 0..tors {
            let pod = tor / self.tors_per_pod.max(1);
            let range = if self.tiers == 3 {
                pod * self.aggs_per_pod..(pod + 1) * self.aggs_per_pod
            } else {
                0..aggs
            };
            for agg in range {
                for _ in 0..t1.bundle {
                    links.push(link(self.tor_id(tor), self.agg_id(agg), &t1, tor_agg_delay));
                }
            }
        }
        // Aggregation switch -> cores: position p in its pod links to cores p + per-pod x l.
        if let Some(t2) = &t2 {
            let delay = t2.downlink_latency_ns + half(Some(&t1)) + half(Some(t2));
            let per_pod = self.aggs_per_pod.max(1);
            for agg in 0..aggs {
                let podpos = agg % per_pod;
                for l in 0..t1.radix_up / t2.bundle.max(1) {
                    let core = podpos + per_pod * l;
                    for _ in 0..t2.bundle {
                        links.push(link(self.agg_id(agg), self.core_id(core), t2, delay));
                    }
                }
            }
        }
        let node_count = self.nodes + self.switches();
        Topology {
            node_count,
            switch_ids: (self.nodes..node_count).collect(),
            links,
            port_rates: Vec::new(),
            endpoint_switch_ids: Vec::new(),
        }
    }
}

/// htsim's `_failed_link_ratio` (fat_tree_topology.cpp): a link failed by `-failed N` keeps
/// this share of its speed, its queue size and its ECN thresholds (degraded, not cut).
pub const FAILED_LINK_RATIO: f64 = 0.25;

/// One link `htsim_uec -failed N` degrades ([`HtsimTopo::failed_links`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailedLink {
    /// The sending end of the degraded direction (2 tiers: the leaf; 3 tiers: the core).
    pub a: u32,
    /// The other end (2 tiers: the spine; 3 tiers: the aggregation switch).
    pub b: u32,
    /// Only `a`'s port towards `b` is degraded (3 tiers); otherwise both directions (2 tiers).
    pub one_way: bool,
    /// The degraded rate, bit/s: the link's x [`FAILED_LINK_RATIO`], truncated (htsim's
    /// `linkspeed_bps speed = speed * _failed_link_ratio`).
    pub rate_bps: u64,
}

impl HtsimTopo {
    /// The largest `-failed N` that still changes htsim's choice: 2 tiers, the spines (a leaf's
    /// uplinks); 3 tiers, the largest `l + agg x per-pod` + 1 of the rule in
    /// [`HtsimTopo::failed_links`] (= every aggregation uplink when the aggregation switches
    /// per pod equal their uplinks, as in every shipped fat tree).
    #[must_use]
    pub fn max_failed(&self) -> u32 {
        if self.tiers == 3 {
            let uplinks = self.agg_uplinks_per_switch();
            uplinks.saturating_add(
                self.aggs()
                    .saturating_sub(1)
                    .saturating_mul(self.aggs_per_pod),
            )
        } else {
            self.aggs()
        }
    }

    /// An aggregation switch's distinct cores: Radix_Up₁ / Bundle₂ (htsim's loop bound on l).
    fn agg_uplinks_per_switch(&self) -> u32 {
        let ru1 = self.tier.get(1).map_or(0, |t| t.radix_up);
        let b2 = self.tier.get(2).map_or(1, |t| t.bundle.max(1));
        ru1 / b2
    }

    /// The links `htsim_uec -failed n` degrades to [`FAILED_LINK_RATIO`] of their speed, queue
    /// and ECN thresholds (main_uec.cpp `set_failed_links`; the `FatTreeTopology` constructor,
    /// fat_tree_topology.cpp; `alloc_queue` with `reduced_speed`), in htsim's construction order:
    /// * 2 tiers: for every leaf (ToR), its links to spines 0..n-1, both directions (htsim
    ///   allocates both the spine -> leaf and the leaf -> spine queue reduced when
    ///   `agg - agg_min < n`, agg_min = 0);
    /// * 3 tiers: only core -> aggregation directions: aggregation switch `agg` (global index),
    ///   uplink `l` (0..Radix_Up₁ / Bundle₂, to core `agg mod per-pod + per-pod x l`) when
    ///   `l + agg x per-pod < n`; the aggregation -> core direction keeps its speed. For small n
    ///   that is aggregation switch 0's first n cores.
    ///
    /// `n = 0` degrades nothing (htsim's default).
    ///
    /// # Errors
    /// A message (the caller names the key) when `n` exceeds [`HtsimTopo::max_failed`] (htsim
    /// would degrade nothing more), or when the degraded tier has `Bundle` above 1 (a port rate
    /// names a link by its two ends, so parallel links cannot be told apart).
    pub fn failed_links(&self, n: u32) -> std::result::Result<Vec<FailedLink>, String> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let max = self.max_failed();
        if n > max {
            let what = if self.tiers == 3 {
                format!(
                    "htsim's rule (core -> aggregation links with l + agg x {} < N) selects \
                     every one of the {} aggregation uplinks at N = {max}",
                    self.aggs_per_pod,
                    u64::from(self.aggs()) * u64::from(self.agg_uplinks_per_switch())
                )
            } else {
                format!("a leaf has {max} spine uplinks")
            };
            return Err(format!(
                "{n} failed links is more than the topology's uplinks: {what}"
            ));
        }
        let top = if self.tiers == 3 { 2 } else { 1 };
        let Some(tier) = self.tier.get(top) else {
            return Ok(Vec::new());
        };
        if tier.bundle != 1 {
            return Err(format!(
                "tier {top} has Bundle {}: a failed link among parallel links cannot be named \
                 (only Bundle 1 is supported with failed links)",
                tier.bundle
            ));
        }
        let rate_bps = tier.downlink_speed_gbps * 1_000_000_000 / 4; // x 0.25, truncated
        let mut out = Vec::new();
        if self.tiers == 3 {
            let per_pod = self.aggs_per_pod.max(1);
            for agg in 0..self.aggs() {
                for l in 0..self.agg_uplinks_per_switch() {
                    if u64::from(l) + u64::from(agg) * u64::from(per_pod) < u64::from(n) {
                        let core = agg % per_pod + per_pod * l;
                        out.push(FailedLink {
                            a: self.core_id(core),
                            b: self.agg_id(agg),
                            one_way: true,
                            rate_bps,
                        });
                    }
                }
            }
        } else {
            for tor in 0..self.tors() {
                for agg in 0..n.min(self.aggs()) {
                    out.push(FailedLink {
                        a: self.tor_id(tor),
                        b: self.agg_id(agg),
                        one_way: false,
                        rate_bps,
                    });
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
