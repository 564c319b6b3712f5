//! `[topology] link_faults`: a link (`a`, `b`) or a switch's port (`switch`, `port`) going
//! down at `at`, and, with `up`, coming back at `up` (a flap); `down = false` alone brings a
//! link back. Each entry becomes one or two [`LinkEvent`]s, in time order. A switch's ports
//! are its links in file order, 0-based (each end of a link counts once), as the fabric
//! numbers them. Per link the events must alternate down, up, down, ...: a link that is
//! already down cannot fail again (a second failure would be counted twice by the switches).
//!
//! `one_way = true` takes only one direction down: `a`'s (or `switch`'s) port stops
//! delivering towards `b` (the other end), the reverse direction keeps working, and no switch
//! is told (a black hole, as the REPS paper's failed links, §4: the failed pipe stays in every
//! ECMP set). Events then alternate per direction; one link cannot mix one-way and two-way
//! faults.

use serde::Deserialize;
use toml::Spanned;

use super::context::Cx;
use super::quantity::Time;
use crate::error::{ErrorKind, Result};
use crate::model::{LinkEvent, Topology};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LinkFaultSec {
    pub(super) at: Time,
    pub(super) a: Option<u32>,
    pub(super) b: Option<u32>,
    pub(super) switch: Option<u32>,
    pub(super) port: Option<u32>,
    #[serde(default = "yes")]
    pub(super) down: bool,
    pub(super) up: Option<Time>,
    #[serde(default)]
    pub(super) one_way: bool,
}

fn yes() -> bool {
    true
}

const KEY: &str = "topology.link_faults";

/// The link index and far end of port `port` of switch `sw`, if it has that port.
fn port_link(t: &Topology, sw: u32, port: u32) -> (usize, Option<u32>, u32) {
    let mut k = 0u32;
    for (i, l) in t.links.iter().enumerate() {
        for (end, other) in [(l.a, l.b), (l.b, l.a)] {
            if end == sw {
                if k == port {
                    return (i, Some(other), k);
                }
                k += 1;
            }
        }
    }
    (usize::MAX, None, k)
}

/// The events of every entry, sorted by time (stable: entries at one time keep file order).
pub(super) fn link_events(
    cx: &Cx<'_>,
    t: &Topology,
    faults: &[Spanned<LinkFaultSec>],
) -> Result<Vec<LinkEvent>> {
    // (event, link index, entry) for the per-link order check.
    let mut events: Vec<(LinkEvent, usize, usize)> = Vec::new();
    for (entry, lf) in faults.iter().enumerate() {
        let r = lf.get_ref();
        let (link, a, b, port) =
            match (r.a, r.b, r.switch, r.port) {
                (Some(a), Some(b), None, None) => {
                    let i = t
                        .links
                        .iter()
                        .position(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a))
                        .ok_or_else(|| {
                            cx.err(
                                lf,
                                KEY,
                                ErrorKind::Node,
                                format!("no link {a}-{b} in the topology"),
                            )
                        })?;
                    (i, a, b, None)
                }
                (None, None, Some(sw), Some(port)) => {
                    if !t.is_switch(sw) {
                        return Err(cx.err(
                            lf,
                            KEY,
                            ErrorKind::Node,
                            format!("node {sw} is not a switch"),
                        ));
                    }
                    match port_link(t, sw, port) {
                        (i, Some(other), _) => (i, sw, other, Some(port)),
                        (_, None, n) => {
                            return Err(cx.err(
                                lf,
                                KEY,
                                ErrorKind::Value,
                                format!(
                                    "switch {sw} has ports 0..={}, not port {port}",
                                    n.saturating_sub(1)
                                ),
                            ))
                        }
                    }
                }
                _ => return Err(cx.err(
                    lf,
                    KEY,
                    ErrorKind::Value,
                    "give a link (`a` and `b`) or a switch port (`switch` and `port`), not both",
                )),
            };
        let ev = |at_ns, down| LinkEvent {
            at_ns,
            a,
            b,
            down,
            port,
            one_way: r.one_way,
        };
        events.push((ev(r.at.0, r.down), link, entry));
        if let Some(up) = r.up {
            if !r.down {
                return Err(cx.err(
                    lf,
                    KEY,
                    ErrorKind::Value,
                    "`up` needs a failure (down = true)",
                ));
            }
            if up.0 <= r.at.0 {
                return Err(cx.err(
                    lf,
                    KEY,
                    ErrorKind::Value,
                    format!("up ({} ns) must be after at ({} ns)", up.0, r.at.0),
                ));
            }
            events.push((ev(up.0, false), link, entry));
        }
    }
    events.sort_by_key(|e| e.0.at_ns);
    // Per link: down in direction a -> b, in direction b -> a (two-way events set both), and
    // whether its faults are one-way (None: no fault yet).
    let mut down = vec![(false, false); t.links.len()];
    let mut one_way: Vec<Option<bool>> = vec![None; t.links.len()];
    for (e, link, entry) in &events {
        let (Some(state), Some(kind), Some(lf), Some(l)) = (
            down.get_mut(*link),
            one_way.get_mut(*link),
            faults.get(*entry),
            t.links.get(*link),
        ) else {
            continue;
        };
        if kind.is_some_and(|k| k != e.one_way) {
            return Err(cx.err(
                lf,
                KEY,
                ErrorKind::Value,
                format!(
                    "link {}-{} has both one-way and two-way faults (give one kind per link)",
                    e.a, e.b
                ),
            ));
        }
        *kind = Some(e.one_way);
        // The direction this event changes: a -> b in the link's own order, or its reverse.
        let forward = l.a == e.a;
        let dir = if forward { &mut state.0 } else { &mut state.1 };
        if *dir == e.down {
            let what = if e.down { "already down" } else { "not down" };
            let (link_or_dir, per) = if e.one_way {
                (format!("direction {} -> {}", e.a, e.b), "direction")
            } else {
                (format!("link {}-{}", e.a, e.b), "link")
            };
            return Err(cx.err(
                lf,
                KEY,
                ErrorKind::Value,
                format!(
                    "{link_or_dir} is {what} at {} ns (per {per}, faults must alternate down, up)",
                    e.at_ns
                ),
            ));
        }
        *dir = e.down;
        if !e.one_way {
            *state = (e.down, e.down);
        }
    }
    Ok(events.into_iter().map(|e| e.0).collect())
}
