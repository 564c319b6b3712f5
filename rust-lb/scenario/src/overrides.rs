//! Command-line overrides of a scenario: `key=value;key=value` (the ns-3 program's `--lb`,
//! `--lbParams`, `--seed`, `--out`, ... and the CLI's options map onto these keys).
//!
//! | Key | Effect |
//! |---|---|
//! | `lb` | algorithm name (`[lb] name`, ConWeave `LB_MODE`) |
//! | `lb_params` | algorithm parameters `k = v, ...` (commas inside are fine; `;` is not) |
//! | `seed` | run seed (`[run] seed`, `RANDOM_SEED`); generated workloads are re-drawn from it |
//! | `out` | output directory |
//! | `stop` | hard stop time with a unit (`10ms`) |
//! | `load` | host load of a generated Poisson workload (TOML only) |
//! | `pfc` | `true`/`false` (or 1/0) |
//! | `recovery` | `gbn`, `irn`, `nic-sr` |
//! | `pfc_trace`, `queue_trace` | `true`/`false` (or 1/0) |
//! | `quirks` | the reference behaviours to reproduce: `all`, `none` or names, comma-separated (`[transport] quirks`; [`Quirk`](crate::model::Quirk)) |
//!
//! Unknown keys, a missing `=`, and bad values are errors naming `overrides: key`.

use crate::error::{ErrorKind, Result, ScenarioError};
use crate::model::{QuirkSet, Recovery};
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

impl Overrides {
    /// Parses `key=value;key=value` (whitespace around keys and values is trimmed; empty
    /// items are skipped).
    ///
    /// # Errors
    /// Unknown keys, items without `=`, bad values.
    pub fn parse(text: &str) -> Result<Self> {
        let mut o = Overrides::default();
        for item in text.split(';') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let Some((k, v)) = item.split_once('=') else {
                return Err(ScenarioError::file(
                    OVERRIDES,
                    item,
                    ErrorKind::Syntax,
                    "expected key=value",
                ));
            };
            let (k, v) = (k.trim(), v.trim());
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

    /// Applies everything except `load` and `seed`-driven regeneration (the loaders handle
    /// those) to a scenario's settings.
    pub(crate) fn apply(&self, s: &mut crate::model::Scenario) {
        if let Some(v) = &self.lb {
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
    }
}
