//! Command-line overrides of a scenario: `key=value;key=value` (the ns-3 program's `--lb`,
//! `--lbParams`, `--seed`, `--out`, ... and the CLI's options map onto these keys).
//!
//! | Key | Effect |
//! |---|---|
//! | `lb` | algorithm name (`[lb] name`, ConWeave `LB_MODE`); another algorithm than the config's starts from no parameters, the config's own keeps its `[lb] params` |
//! | `lb_params` | algorithm parameters `k = v, ...` (commas inside are fine; `;` is not) |
//! | `seed` | run seed (`[run] seed`, `RANDOM_SEED`); generated workloads are re-drawn from it |
//! | `out` | output directory |
//! | `stop` | hard stop time with a unit (`10ms`) |
//! | `load` | host load of a generated Poisson workload (TOML only) |
//! | `pfc` | `true`/`false` (or 1/0) |
//! | `recovery` | `gbn`, `irn`, `nic-sr` |
//! | `pfc_trace`, `queue_trace` | `true`/`false` (or 1/0) |
//! | `quirks` | the reference behaviours to reproduce: `all`, `none` or names, comma-separated (`[transport] quirks`; [`Quirk`](crate::model::Quirk)) |
//! | `transport` | transport parameters `k = v, ...`: any key of the table of transport parameters ([`crate::transport_params`]) but `pfc` (its own override), its value written as in TOML without quotes (`rp_timer = 300us, min_rate = 1Gbps`); ranges are checked on the merged scenario, as for every input |
//!
//! Unknown keys, a missing `=`, and bad values are errors naming `overrides: key`.

use crate::error::{ErrorKind, Result, ScenarioError};
use crate::model::{QuirkSet, Recovery, Transport};
use crate::toml_config::quantity::{Bytes, Rate, Time};
use crate::transport_params::{define_override_keys, IntoField};
use crate::units::parse_time_ns;

/// The file name used in override error messages.
pub const OVERRIDES: &str = "overrides";

/// Every override key, for `--help` texts.
pub const OVERRIDE_KEYS: &[&str] = &[
    "lb",
    "lb_params",
    "seed",
    "out",
    "stop",
    "load",
    "pfc",
    "recovery",
    "pfc_trace",
    "queue_trace",
    "quirks",
    "transport",
];

/// Parsed overrides; `None` = keep the config's value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// Algorithm name.
    pub lb: Option<String>,
    /// Algorithm parameters.
    pub lb_params: Option<String>,
    /// Run seed.
    pub seed: Option<u64>,
    /// Output directory.
    pub out: Option<String>,
    /// Hard stop, ns.
    pub stop_ns: Option<u64>,
    /// Host load of the generated Poisson workload.
    pub load: Option<f64>,
    /// PFC on/off.
    pub pfc: Option<bool>,
    /// Loss recovery.
    pub recovery: Option<Recovery>,
    /// PFC trace on/off.
    pub pfc_trace: Option<bool>,
    /// Queue trace on/off.
    pub queue_trace: Option<bool>,
    /// Reference quirks to reproduce (replaces the config's set).
    pub quirks: Option<QuirkSet>,
    /// Transport parameters: (TOML key of the table, value text), in the order given.
    pub transport: Vec<(String, String)>,
}

fn err(key: &str, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::file(OVERRIDES, key, ErrorKind::Value, msg)
}

fn boolean(key: &str, v: &str) -> Result<bool> {
    match v {
        "1" | "true" | "on" => Ok(true),
        "0" | "false" | "off" => Ok(false),
        _ => Err(err(key, format!("`{v}` is not true/false"))),
    }
}

// `TABLE_KEYS` and `set_table_key_from_text`: the keys of the table of transport parameters.
crate::transport_params::transport_params!(define_override_keys);

/// The `key = value` items of `text` split at `sep`, trimmed; empty items are skipped. An item
/// without `=` is a syntax error naming `field` (the override that holds the list, or the item).
fn key_values<'a>(
    text: &'a str,
    sep: char,
    field: Option<&'a str>,
) -> impl Iterator<Item = Result<(&'a str, &'a str)>> + 'a {
    text.split(sep)
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(move |item| match item.split_once('=') {
            Some((k, v)) => Ok((k.trim(), v.trim())),
            None => Err(ScenarioError::file(
                OVERRIDES,
                field.unwrap_or(item),
                ErrorKind::Syntax,
                match field {
                    Some(_) => format!("`{item}`: expected key = value"),
                    None => "expected key=value".to_owned(),
                },
            )),
        })
}

/// `k = v, ...` of the `transport` override: each key a TOML key of the table of transport
/// parameters, given once. The values are read as their units where the override is applied
/// (`Overrides::apply`), and their ranges checked on the merged scenario.
fn transport_items(text: &str) -> Result<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for item in key_values(text, ',', Some("transport")) {
        let (k, v) = item?;
        let key = format!("transport.{k}");
        if k == "pfc" {
            return Err(err(&key, "use the override pfc"));
        }
        if !TABLE_KEYS.contains(&k) {
            return Err(ScenarioError::file(
                OVERRIDES,
                &key,
                ErrorKind::UnknownKey,
                format!(
                    "not a transport parameter (known: {})",
                    TABLE_KEYS.join(", ")
                ),
            ));
        }
        if out.iter().any(|(given, _)| given == k) {
            return Err(ScenarioError::file(
                OVERRIDES,
                &key,
                ErrorKind::Duplicate,
                "given twice",
            ));
        }
        out.push((k.to_owned(), v.to_owned()));
    }
    Ok(out)
}

impl Overrides {
    /// Parses `key=value;key=value` (whitespace around keys and values is trimmed; empty
    /// items are skipped).
    ///
    /// # Errors
    /// Unknown keys, items without `=`, bad values.
    pub fn parse(text: &str) -> Result<Self> {
        let mut o = Overrides::default();
        for item in key_values(text, ';', None) {
            let (k, v) = item?;
            match k {
                "lb" => o.lb = Some(v.to_owned()),
                "lb_params" => o.lb_params = Some(v.to_owned()),
                "seed" => {
                    o.seed = Some(
                        v.parse()
                            .map_err(|_| err(k, format!("`{v}` is not a non-negative integer")))?,
                    );
                }
                "out" => {
                    if v.is_empty() {
                        return Err(err(k, "empty directory"));
                    }
                    o.out = Some(v.to_owned());
                }
                "stop" => o.stop_ns = Some(parse_time_ns(v).map_err(|m| err(k, m))?),
                "load" => match v.parse::<f64>() {
                    Ok(x) if x > 0.0 && x <= 1.0 => o.load = Some(x),
                    _ => return Err(err(k, format!("`{v}` is not a load in (0, 1]"))),
                },
                "pfc" => o.pfc = Some(boolean(k, v)?),
                "recovery" => {
                    o.recovery =
                        Some(Recovery::from_name(v).ok_or_else(|| {
                            err(k, format!("`{v}` is not one of gbn, irn, nic-sr"))
                        })?);
                }
                "pfc_trace" => o.pfc_trace = Some(boolean(k, v)?),
                "queue_trace" => o.queue_trace = Some(boolean(k, v)?),
                "quirks" => o.quirks = Some(QuirkSet::parse_list(v).map_err(|m| err(k, m))?),
                "transport" => o.transport = transport_items(v)?,
                _ => {
                    return Err(ScenarioError::file(
                        OVERRIDES,
                        k,
                        ErrorKind::UnknownKey,
                        format!("unknown override (known: {})", OVERRIDE_KEYS.join(", ")),
                    ))
                }
            }
        }
        Ok(o)
    }

    /// Whether the `transport` override sets the table key `key` (`rp_timer`).
    #[must_use]
    pub fn sets_transport_key(&self, key: &str) -> bool {
        self.transport.iter().any(|(k, _)| k == key)
    }

    /// Applies everything except `load` and `seed`-driven regeneration (the loaders handle
    /// those) to a scenario's settings.
    ///
    /// # Errors
    /// A `transport` value that does not read as its key's unit.
    pub(crate) fn apply(&self, s: &mut crate::model::Scenario) -> Result<()> {
        if let Some(v) = &self.lb {
            // Another algorithm does not take this one's parameters: `lb` alone clears them;
            // naming the config's own algorithm keeps them.
            if v.trim() != s.lb.name.trim() {
                s.lb.params.clear();
            }
            s.lb.name.clone_from(v);
        }
        if let Some(v) = &self.lb_params {
            s.lb.params.clone_from(v);
        }
        if let Some(v) = self.seed {
            s.run.seed = v;
        }
        if let Some(v) = &self.out {
            s.run.out_dir.clone_from(v);
        }
        if let Some(v) = self.stop_ns {
            s.run.hard_stop_ns = v;
        }
        if let Some(v) = self.pfc {
            s.transport.pfc_enabled = v;
        }
        if let Some(v) = self.recovery {
            s.transport.recovery = v;
        }
        if let Some(v) = self.pfc_trace {
            s.run.pfc_trace = v;
        }
        if let Some(v) = self.queue_trace {
            s.run.queue_trace = v;
        }
        if let Some(v) = self.quirks {
            s.transport.quirks = v;
        }
        for (k, v) in &self.transport {
            set_table_key_from_text(&mut s.transport, k, v)
                .unwrap_or_else(|| Err("not a transport parameter".to_owned()))
                .map_err(|m| err(&format!("transport.{k}"), m))?;
        }
        Ok(())
    }
}
