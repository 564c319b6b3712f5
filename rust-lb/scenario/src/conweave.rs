//! ConWeave scenario configs (`scratch/network-load-balance <config.txt>`, the keys its `run.py`
//! writes): one key per line followed by its value(s), whitespace-separated.
//!
//! Every key the reference reads is either **honoured** (mapped into the
//! [`Scenario`](crate::Scenario)), **accepted with a note** (the key only names something rdma-lb
//! does not produce or that has no effect with the modes we have; the note, with file:line, is kept
//! in `Scenario::notes` and printed by the CLI and the scenario program), or **rejected** with an
//! error naming `file:line: KEY`. Unknown keys are errors (the reference skips them silently).
//!
//! | Key | Here |
//! |---|---|
//! | `TOPOLOGY_FILE`, `FLOW_FILE` | required; relative paths resolve against the config file's directory first, then the current directory |
//! | `FCT_OUTPUT_FILE` | note: `fct.txt` (same format) is written to the output directory instead |
//! | `PFC_OUTPUT_FILE` | turns on the PFC trace; written as `pfc.txt` in the output directory |
//! | `FLOW_INPUT_FILE`, `CNP_OUTPUT_FILE`, `QLEN_MON_FILE`, `VOQ_MON_FILE`, `VOQ_MON_DETAIL_FILE`, `UPLINK_MON_FILE`, `CONN_MON_FILE`, `EST_ERROR_MON_FILE` | note: not produced |
//! | `QLEN_MON_START`, `QLEN_MON_END` | number checked; note: unused (as in the reference) |
//! | `SW_MONITORING_INTERVAL` (ns) | `run.monitor_interval_ns` |
//! | `FLOWGEN_START_TIME`, `FLOWGEN_STOP_TIME` (s) | `run.flowgen_{start,stop}_ns`; hard stop = stop + 10 s (as the reference) |
//! | `BUFFER_SIZE` (MiB) | `transport.buffer_bytes` (× 1024²); 0 is an error |
//! | `CC_MODE` | `transport.cc`: 1 = DCQCN, 3 = HPCC, 7 = TIMELY, 8 = DCTCP (0 = none, extension); with `LB_MODE 9` only 1 (as the reference) |
//! | `LB_MODE` | 0 = `ecmp`, 3 = `conga`, 6 = `letflow`, 9 = `conweave`; an rdma-lb algorithm name is also accepted; 2 (the reference's DRILL, whose memory is per destination) is an error: use `drill` |
//! | `LB_PARAMS` (extension) | rest of the line = the algorithm's parameters (`k = v, ...`) |
//! | `ENABLE_PFC`, `ENABLE_IRN`, `ENABLE_QCN` | PFC, recovery (irn / gbn), ECN marking |
//! | `CONWEAVE_*` (5 keys, µs) | ConWeave's parameters (absent keys: the reference program's defaults 1000/4/8/32/500); a note for other modes |
//! | `ALPHA_RESUME_INTERVAL`, `RATE_DECREASE_INTERVAL`, `RP_TIMER` (µs), `FAST_RECOVERY_TIMES`, `EWMA_GAIN`, `CLAMP_TARGET_RATE`, `RATE_AI`, `RATE_HAI`, `MIN_RATE` | DCQCN parameters |
//! | `DCTCP_RATE_AI` | `transport.dctcp_rate_ai_bps` |
//! | `ERROR_RATE_PER_LINK` | if > 0, sets every link's error rate (0 keeps the topology column) |
//! | `L2_CHUNK_SIZE`, `L2_ACK_INTERVAL`, `L2_BACK_TO_ZERO`, `RATE_BOUND`, `PACKET_PAYLOAD_SIZE` | NIC settings |
//! | `HAS_WIN`, `VAR_WIN` | `transport.has_win` / `var_win`; absent: run.py's rule (1 for CC_MODE 3 and 8) |
//! | `GLOBAL_T` | 1 accepted (one BDP for all pairs, as the model); 0 is an error |
//! | `FAST_REACT`, `MI_THRESH`, `INT_MULTI`, `U_TARGET`, `MULTI_RATE`, `SAMPLE_FEEDBACK` | HPCC's parameters (`transport.*` of the same name) |
//! | `USE_DYNAMIC_PFC_THRESHOLD` | 1 accepted; 0 accepted with a note (no effect, as in the reference) |
//! | `LINK_DOWN t_us a b` | `0 0 0` = none; else link a–b goes down at FLOWGEN_START_TIME + t µs (may repeat) |
//! | `KMAX_MAP`, `KMIN_MAP`, `PMAX_MAP` | `n rate₁ v₁ … rateₙ vₙ` (rate in bps or with a unit; K in KB = 1000 B): `transport.ecn`; all three or none |
//! | `LOAD` | `run.load` (informational) |
//! | `RANDOM_SEED` | `run.seed` |
//! | `PAUSE_TIME` (µs) | `transport.pause_time_ns` |
//! | `DATA_RATE`, `LINK_DELAY` | note: unused (as in the reference) |
//!
//! Keys that are absent take `run.py`'s template values (Transport::default). A key given
//! twice is an error (except `LINK_DOWN`). Integer keys accept integral decimals (`2.0`); the
//! reference's quirk of reading the integer part and skipping the rest as an unknown token is
//! not reproduced. Blank lines and `#` comments are allowed (extension).

use crate::transport_params::define_conweave_keys;
use std::collections::HashMap;
use std::path::Path;

use crate::error::{ErrorKind, Result, ScenarioError};
use crate::model::{EcnEntry, LbSpec, Recovery, RunSpec, Transport};
use crate::text::{numbered_lines, real};
use crate::units::{parse_decimal, parse_rate_bps, scale_exact};

/// A ConWeave config parsed without touching the file system (paths not yet resolved).
#[derive(Debug, Clone, PartialEq)]
pub struct ConWeaveConfig {
    /// The config's name as used in messages.
    pub file: String,
    /// `TOPOLOGY_FILE` value and its line.
    pub topology_file: (String, usize),
    /// `FLOW_FILE` value and its line.
    pub flow_file: (String, usize),
    /// Transport settings.
    pub transport: Transport,
    /// Load balancing and the line that chose it (0 if defaulted).
    pub lb: LbSpec,
    /// Line of `LB_MODE`/`LB_PARAMS` for error messages about the algorithm.
    pub lb_line: usize,
    /// Run settings (link events still to be checked against the topology).
    pub run: RunSpec,
    /// `LINK_DOWN` lines: (line, at_ns, a, b).
    pub link_down: Vec<(usize, u64, u32, u32)>,
    /// `ERROR_RATE_PER_LINK` if > 0.
    pub error_rate_per_link: Option<f64>,
    /// Accepted-but-not-modelled keys, one message each (`file:line: KEY: ...`).
    pub notes: Vec<String>,
}

const NOT_PRODUCED: &[&str] = &[
    "FLOW_INPUT_FILE",
    "CNP_OUTPUT_FILE",
    "QLEN_MON_FILE",
    "VOQ_MON_FILE",
    "VOQ_MON_DETAIL_FILE",
    "UPLINK_MON_FILE",
    "CONN_MON_FILE",
    "EST_ERROR_MON_FILE",
];

const CONWEAVE_KEYS: &[&str] = &[
    "CONWEAVE_TX_EXPIRY_TIME",
    "CONWEAVE_REPLY_TIMEOUT_EXTRA",
    "CONWEAVE_PATH_PAUSE_TIME",
    "CONWEAVE_EXTRA_VOQ_FLUSH_TIME",
    "CONWEAVE_DEFAULT_VOQ_WAITING_TIME",
];

/// ConWeave's parameters from the `CONWEAVE_*` keys (µs), the reference scenario program's
/// defaults for absent keys, then `LB_PARAMS` (a key given both ways is an error
/// naming the parameter).
fn conweave_params(keys: &[(usize, &str, u64)], lb_params: &str) -> String {
    use rdma_lb_core::switch::conweave::ConWeaveConfig as Cw;
    let d = Cw::SCRATCH_DEFAULTS;
    let fields = [
        ("CONWEAVE_TX_EXPIRY_TIME", "tx_expiry_us", d.tx_expiry_us),
        (
            "CONWEAVE_REPLY_TIMEOUT_EXTRA",
            "reply_timeout_extra_us",
            d.reply_timeout_extra_us,
        ),
        ("CONWEAVE_PATH_PAUSE_TIME", "path_pause_us", d.path_pause_us),
        (
            "CONWEAVE_EXTRA_VOQ_FLUSH_TIME",
            "extra_voq_flush_us",
            d.extra_voq_flush_us,
        ),
        (
            "CONWEAVE_DEFAULT_VOQ_WAITING_TIME",
            "default_voq_wait_us",
            d.default_voq_wait_us,
        ),
    ];
    let mut parts: Vec<String> = fields
        .iter()
        .map(|(key, param, default)| {
            let v = keys
                .iter()
                .find(|(_, k, _)| k == key)
                .map_or(*default, |(_, _, v)| *v);
            format!("{param} = {v}")
        })
        .collect();
    if !lb_params.trim().is_empty() {
        parts.push(lb_params.to_owned());
    }
    parts.join(", ")
}

/// One line being interpreted (also by [`crate::simai::conf`], which shares these keys).
pub(crate) struct Line<'a> {
    pub(crate) file: &'a str,
    pub(crate) ln: usize,
    pub(crate) key: &'a str,
    pub(crate) vals: Vec<&'a str>,
}

impl Line<'_> {
    pub(crate) fn err(&self, kind: ErrorKind, msg: impl Into<String>) -> ScenarioError {
        ScenarioError::at(self.file, self.ln, self.key, kind, msg)
    }

    pub(crate) fn one(&self) -> Result<&str> {
        match self.vals.as_slice() {
            [v] => Ok(v),
            [] => Err(self.err(ErrorKind::Missing, "missing value")),
            more => Err(self.err(
                ErrorKind::Syntax,
                format!("expected one value, found {}", more.len()),
            )),
        }
    }

    /// An integer, possibly written as an integral decimal (`2.0`).
    pub(crate) fn int(&self) -> Result<u64> {
        let v = self.one()?;
        parse_decimal(v)
            .and_then(|(m, s)| scale_exact(m, s, 1))
            .ok_or_else(|| {
                self.err(
                    ErrorKind::Syntax,
                    format!("`{v}` is not a non-negative integer"),
                )
            })
    }

    pub(crate) fn int_u32(&self) -> Result<u32> {
        let v = self.int()?;
        u32::try_from(v).map_err(|_| self.err(ErrorKind::Value, format!("{v} is too large")))
    }

    pub(crate) fn flag(&self) -> Result<bool> {
        match self.one()? {
            "0" => Ok(false),
            "1" => Ok(true),
            v => Err(self.err(ErrorKind::Value, format!("must be 0 or 1, got `{v}`"))),
        }
    }

    pub(crate) fn real(&self) -> Result<f64> {
        real(self.file, self.ln, self.key, self.one()?)
    }

    /// A decimal quantity times `mult` (e.g. µs → ns with 1000), exactly.
    pub(crate) fn scaled(&self, mult: u128, unit: &str) -> Result<u64> {
        let v = self.one()?;
        let (m, s) = parse_decimal(v).ok_or_else(|| {
            self.err(
                ErrorKind::Syntax,
                format!("`{v}` is not a non-negative number ({unit})"),
            )
        })?;
        scale_exact(m, s, mult).ok_or_else(|| {
            self.err(
                ErrorKind::Value,
                format!("`{v}` {unit} is not a whole number of the internal unit or too large"),
            )
        })
    }

    pub(crate) fn rate(&self) -> Result<u64> {
        parse_rate_bps(self.one()?).map_err(|m| self.err(ErrorKind::Unit, m))
    }

    pub(crate) fn note(&self, what: &str) -> String {
        format!("{}:{}: {}: {what}", self.file, self.ln, self.key)
    }
}

/// An ECN map: rate → value, in file order.
type EcnMap = (usize, Vec<(u64, String)>);

fn parse_map(l: &Line<'_>) -> Result<EcnMap> {
    let Some((n, rest)) = l.vals.split_first() else {
        return Err(l.err(ErrorKind::Missing, "missing `n rate1 v1 ... raten vn`"));
    };
    let n: usize = n.parse().map_err(|_| {
        l.err(
            ErrorKind::Syntax,
            format!("`{n}` is not a count (expected `n rate1 v1 ... raten vn`)"),
        )
    })?;
    if rest.len() != n.saturating_mul(2) {
        return Err(l.err(
            ErrorKind::Count,
            format!(
                "count {n} needs {} values after it, found {}",
                n.saturating_mul(2),
                rest.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(n);
    for pair in rest.chunks(2) {
        if let [rate, v] = pair {
            let bps = if rate.bytes().all(|b| b.is_ascii_digit()) {
                rate.parse::<u64>().ok().filter(|&r| r > 0)
            } else {
                parse_rate_bps(rate).ok()
            }
            .ok_or_else(|| {
                l.err(
                    ErrorKind::Unit,
                    format!("`{rate}` is not a rate (bits/s, or with a unit such as 100Gbps)"),
                )
            })?;
            if out.iter().any(|(r, _)| *r == bps) {
                return Err(l.err(ErrorKind::Duplicate, format!("rate {bps} listed twice")));
            }
            out.push((bps, (*v).to_owned()));
        }
    }
    Ok((l.ln, out))
}

/// Parses ConWeave config text (no file access); `name` is used in messages.
///
/// # Errors
/// Unknown keys, duplicates, bad values, unsupported modes; see the module documentation.
pub fn parse_conweave_config_str(name: &str, text: &str) -> Result<ConWeaveConfig> {
    let mut s = Settings::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (ln, raw) in numbered_lines(text, true) {
        let mut toks = raw.split_whitespace();
        let Some(key) = toks.next() else { continue };
        let l = Line {
            file: name,
            ln,
            key,
            vals: toks.collect(),
        };
        if key != "LINK_DOWN" {
            if let Some(first) = seen.insert(key.to_owned(), ln) {
                return Err(l.err(
                    ErrorKind::Duplicate,
                    format!("given twice (first on line {first})"),
                ));
            }
        }
        if !s.key(&l)? {
            return Err(l.err(
                ErrorKind::UnknownKey,
                "unknown key (the keys a ConWeave config may hold: `cargo doc -p rdma-lb-scenario`, module conweave)",
            ));
        }
    }
    s.finish(name, text)
}

/// What the keys read so far set, and where (lines for later messages); absent keys keep
/// `run.py`'s template values. [`crate::simai::conf`] reads the keys SimAI.conf shares with
/// ConWeave's configs through [`Settings::key`] and [`Settings::finish_shared`].
pub(crate) struct Settings<'a> {
    pub(crate) t: Transport,
    pub(crate) run: RunSpec,
    lb: LbSpec,
    lb_line: usize,
    topology_file: Option<(String, usize)>,
    flow_file: Option<(String, usize)>,
    pub(crate) link_down: Vec<(usize, u64, u32, u32)>,
    pub(crate) error_rate_per_link: Option<f64>,
    pub(crate) notes: Vec<String>,
    kmax: Option<EcnMap>,
    kmin: Option<EcnMap>,
    pmax: Option<EcnMap>,
    irn: bool,
    stop_line: usize,
    pub(crate) has_win: Option<bool>,
    pub(crate) var_win: Option<bool>,
    cc_line: usize,
    conweave_keys: Vec<(usize, &'a str, u64)>,
}

impl<'a> Settings<'a> {
    // `table_key`: the ConWeave keys of the table of transport parameters.
    crate::transport_params::transport_params!(define_conweave_keys);

    pub(crate) fn new() -> Self {
        Settings {
            t: Transport::default(),
            run: RunSpec {
                flowgen_start_ns: 2_000_000_000,
                flowgen_stop_ns: 2_500_000_000,
                ..RunSpec::default()
            },
            lb: LbSpec {
                name: "ecmp".to_owned(),
                params: String::new(),
            },
            lb_line: 0,
            topology_file: None,
            flow_file: None,
            link_down: Vec::new(),
            error_rate_per_link: None,
            notes: Vec::new(),
            kmax: None,
            kmin: None,
            pmax: None,
            irn: false,
            stop_line: 0,
            has_win: None,
            var_win: None,
            cc_line: 0,
            conweave_keys: Vec::new(),
        }
    }

    /// Interprets one line of any key this module knows; `Ok(false)` for an unknown key.
    pub(crate) fn key(&mut self, l: &Line<'a>) -> Result<bool> {
        Ok(self.files_and_monitoring(l)?
            || self.run_and_links(l)?
            || self.load_balancing(l)?
            || self.table_key(l)?
            || self.congestion_control(l)?
            || self.nic_and_switch(l)?)
    }

    /// `TOPOLOGY_FILE`, `FLOW_FILE`, the output files and monitoring.
    fn files_and_monitoring(&mut self, l: &Line<'a>) -> Result<bool> {
        match l.key {
            "TOPOLOGY_FILE" => self.topology_file = Some((l.one()?.to_owned(), l.ln)),
            "FLOW_FILE" => self.flow_file = Some((l.one()?.to_owned(), l.ln)),
            "FCT_OUTPUT_FILE" => {
                l.one()?;
                self.notes.push(l.note(
                    "accepted; flow completions are written as fct.txt (same format) in the \
                     output directory instead",
                ));
            }
            "PFC_OUTPUT_FILE" => {
                l.one()?;
                self.run.pfc_trace = true;
                self.notes.push(l.note(
                    "PFC trace on; written as pfc.txt (same format) in the output directory",
                ));
            }
            k if NOT_PRODUCED.contains(&k) => {
                l.one()?;
                self.notes
                    .push(l.note("accepted; rdma-lb does not produce this file"));
            }
            "QLEN_MON_START" | "QLEN_MON_END" => {
                l.real()?;
                self.notes
                    .push(l.note("accepted; unused (as in the reference)"));
            }
            "SW_MONITORING_INTERVAL" => {
                self.run.monitor_interval_ns = l.int()?;
                if self.run.monitor_interval_ns == 0 {
                    return Err(l.err(ErrorKind::Value, "must be positive (ns)"));
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The flow-generation window, load, seed and link faults and errors.
    fn run_and_links(&mut self, l: &Line<'a>) -> Result<bool> {
        match l.key {
            "FLOWGEN_START_TIME" => self.run.flowgen_start_ns = l.scaled(1_000_000_000, "s")?,
            "FLOWGEN_STOP_TIME" => {
                self.run.flowgen_stop_ns = l.scaled(1_000_000_000, "s")?;
                self.stop_line = l.ln;
            }
            "LOAD" => self.run.load = l.real()?,
            "RANDOM_SEED" => self.run.seed = l.int()?,
            "ERROR_RATE_PER_LINK" => {
                let e = l.real()?;
                if !(0.0..=1.0).contains(&e) {
                    return Err(l.err(ErrorKind::Value, format!("must be in [0, 1], got {e}")));
                }
                self.error_rate_per_link = (e > 0.0).then_some(e);
            }
            "LINK_DOWN" => {
                let [tu, a, b] = l.vals.as_slice() else {
                    return Err(l.err(
                        ErrorKind::Syntax,
                        format!("expected `t_us a b`, found {} values", l.vals.len()),
                    ));
                };
                let tl = Line {
                    vals: vec![tu],
                    ..Line {
                        file: l.file,
                        ln: l.ln,
                        key: l.key,
                        vals: Vec::new(),
                    }
                };
                let at = tl.scaled(1000, "us")?;
                let a: u32 = crate::text::uint(l.file, l.ln, l.key, a)?;
                let b: u32 = crate::text::uint(l.file, l.ln, l.key, b)?;
                if !(at == 0 && a == 0 && b == 0) {
                    self.link_down.push((l.ln, at, a, b));
                }
            }
            "DATA_RATE" | "LINK_DELAY" => {
                if l.vals.is_empty() {
                    return Err(l.err(ErrorKind::Missing, "missing value"));
                }
                self.notes
                    .push(l.note("accepted; unused (as in the reference)"));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `LB_MODE`, `LB_PARAMS` and ConWeave's `CONWEAVE_*` parameters.
    fn load_balancing(&mut self, l: &Line<'a>) -> Result<bool> {
        match l.key {
            "LB_MODE" => {
                let v = l.one()?;
                self.lb.name = match v {
                    "0" => "ecmp".to_owned(),
                    "3" => "conga".to_owned(),
                    "6" => "letflow".to_owned(),
                    "9" => "conweave".to_owned(),
                    "2" => {
                        let what = "DRILL";
                        return Err(l.err(
                            ErrorKind::Unsupported,
                            format!(
                            "{v} = {what} is not available in rdma-lb; use 0 (ecmp) or one of: {}",
                            rdma_lb_core::Algorithm::all_names()
                        ),
                        ));
                    }
                    name if name.parse::<rdma_lb_core::Algorithm>().is_ok() => name.to_owned(),
                    other => {
                        return Err(l.err(
                            ErrorKind::Value,
                            format!(
                                "unknown mode `{other}` (0 = ecmp, or one of: {})",
                                rdma_lb_core::Algorithm::all_names()
                            ),
                        ))
                    }
                };
                self.lb_line = l.ln;
            }
            "LB_PARAMS" => {
                self.lb.params = l.vals.join(" ");
                if self.lb_line == 0 {
                    self.lb_line = l.ln;
                }
            }
            k if CONWEAVE_KEYS.contains(&k) => {
                let ns = l.scaled(1000, "us")?;
                if ns % 1000 != 0 {
                    return Err(l.err(ErrorKind::Value, "must be a whole number of microseconds"));
                }
                self.conweave_keys.push((l.ln, k, ns / 1000));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `CC_MODE` and the window keys (the DCQCN, DCTCP and HPCC parameters are table keys).
    fn congestion_control(&mut self, l: &Line<'a>) -> Result<bool> {
        match l.key {
            "CC_MODE" => {
                let m = l.int()?;
                self.t.cc = crate::model::Cc::from_conweave_mode(m).ok_or_else(|| {
                    l.err(
                        ErrorKind::Value,
                        format!(
                            "unknown mode {m} (1 = DCQCN, 3 = HPCC, 7 = TIMELY, 8 = DCTCP, 0 = none)"
                        ),
                    )
                })?;
                self.cc_line = l.ln;
            }
            "HAS_WIN" => self.has_win = Some(l.flag()?),
            "VAR_WIN" => self.var_win = Some(l.flag()?),
            "GLOBAL_T" => {
                if !l.flag()? {
                    return Err(l.err(
                    ErrorKind::Unsupported,
                    "0 (per-pair RTT/BDP) is not modelled; rdma-lb uses one BDP for all pairs (1)",
                ));
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The NICs' and switches' settings not in the table: IRN, the dynamic PFC threshold, the ECN maps.
    fn nic_and_switch(&mut self, l: &Line<'a>) -> Result<bool> {
        match l.key {
            "ENABLE_IRN" => self.irn = l.flag()?,
            "USE_DYNAMIC_PFC_THRESHOLD" => {
                if !l.flag()? {
                    self.notes.push(l.note(
                    "0 has no effect: the MMU always uses the dynamic threshold (as the reference)",
                ));
                }
            }
            "KMAX_MAP" => self.kmax = Some(parse_map(l)?),
            "KMIN_MAP" => self.kmin = Some(parse_map(l)?),
            "PMAX_MAP" => self.pmax = Some(parse_map(l)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The settings of the shared keys that depend on other keys and the checks across them:
    /// recovery, window, flow-generation window and hard stop, link events, ECN maps.
    pub(crate) fn finish_shared(&mut self, name: &str) -> Result<()> {
        let t = &mut self.t;
        let run = &mut self.run;
        t.recovery = if self.irn {
            Recovery::Irn
        } else {
            Recovery::Gbn
        };
        // Absent window keys: what run.py writes for this CC_MODE.
        t.has_win = self
            .has_win
            .unwrap_or_else(|| Transport::run_py_window(t.cc));
        t.var_win = self
            .var_win
            .unwrap_or_else(|| Transport::run_py_window(t.cc));
        let stop_line = self.stop_line;
        if run.flowgen_stop_ns < run.flowgen_start_ns {
            return Err(ScenarioError::at(
                name,
                stop_line.max(1),
                "FLOWGEN_STOP_TIME",
                ErrorKind::Value,
                "before FLOWGEN_START_TIME",
            ));
        }
        run.hard_stop_ns = run.flowgen_stop_ns.saturating_add(10_000_000_000);
        let link_events = self
            .link_down
            .iter()
            .map(|&(_, at, a, b)| crate::model::LinkEvent {
                at_ns: run.flowgen_start_ns.saturating_add(at),
                a,
                b,
                down: true,
                port: None,
                one_way: false,
            });
        run.link_events = link_events.collect();

        if let Some(ecn) = ecn_maps(name, self.kmax.take(), self.kmin.take(), self.pmax.take())? {
            t.ecn = ecn;
        }
        Ok(())
    }

    /// The config the keys describe: defaults that depend on other keys, the checks across
    /// keys, and the required keys (reported at the end of the file).
    fn finish(mut self, name: &str, text: &str) -> Result<ConWeaveConfig> {
        self.finish_shared(name)?;
        let Settings {
            t,
            run,
            mut lb,
            lb_line,
            topology_file,
            flow_file,
            link_down,
            error_rate_per_link,
            mut notes,
            cc_line,
            conweave_keys,
            ..
        } = self;

        // Missing required keys are reported at the end of the file.
        let eof = text.lines().count().max(1);
        let topology_file = required(name, eof, "TOPOLOGY_FILE", topology_file)?;
        let flow_file = required(name, eof, "FLOW_FILE", flow_file)?;
        conweave_lb(name, t.cc, cc_line, &conweave_keys, &mut lb, &mut notes)?;
        Ok(ConWeaveConfig {
            file: name.to_owned(),
            topology_file,
            flow_file,
            transport: t,
            lb,
            lb_line,
            run,
            link_down,
            error_rate_per_link,
            notes,
        })
    }
}

/// The ECN marking of `KMAX_MAP`, `KMIN_MAP` and `PMAX_MAP` (all three or none; `None`
/// keeps the default).
fn ecn_maps(
    name: &str,
    kmax: Option<EcnMap>,
    kmin: Option<EcnMap>,
    pmax: Option<EcnMap>,
) -> Result<Option<Vec<EcnEntry>>> {
    match (kmax, kmin, pmax) {
        (None, None, None) => Ok(None),
        (Some(kmax), Some(kmin), Some(pmax)) => ecn_entries(name, &kmax, &kmin, &pmax).map(Some),
        (kmax, kmin, pmax) => {
            let given = [&kmax, &kmin, &pmax]
                .iter()
                .find_map(|m| m.as_ref().map(|(ln, _)| *ln))
                .unwrap_or(1);
            let missing: Vec<&str> = [
                ("KMAX_MAP", &kmax),
                ("KMIN_MAP", &kmin),
                ("PMAX_MAP", &pmax),
            ]
            .iter()
            .filter(|(_, m)| m.is_none())
            .map(|(k, _)| *k)
            .collect();
            Err(ScenarioError::at(
                name,
                given,
                &missing.join(", "),
                ErrorKind::Missing,
                "KMAX_MAP, KMIN_MAP and PMAX_MAP must be given together",
            ))
        }
    }
}

/// A required key's value and line, or an error at the end of the file (line `eof`).
fn required(
    name: &str,
    eof: usize,
    key: &str,
    v: Option<(String, usize)>,
) -> Result<(String, usize)> {
    v.ok_or_else(|| ScenarioError::at(name, eof, key, ErrorKind::Missing, "required key missing"))
}

/// ConWeave's parameters into `lb.params` when the scheme is ConWeave (which runs only with
/// DCQCN, `cc`, as in the reference); else a note per `CONWEAVE_*` key.
fn conweave_lb(
    name: &str,
    cc: crate::model::Cc,
    cc_line: usize,
    conweave_keys: &[(usize, &str, u64)],
    lb: &mut LbSpec,
    notes: &mut Vec<String>,
) -> Result<()> {
    if lb.name == rdma_lb_core::Algorithm::ConWeave.name() {
        if cc != crate::model::Cc::Dcqcn {
            // As the reference's program, which exits for CC_MODE != 1 with LB_MODE 9.
            return Err(ScenarioError::at(
                name,
                cc_line.max(1),
                "CC_MODE",
                ErrorKind::Unsupported,
                format!(
                    "{} with LB_MODE 9: ConWeave runs only with CC_MODE 1 (DCQCN), as in the reference",
                    cc.name()
                ),
            ));
        }
        lb.params = conweave_params(conweave_keys, &lb.params);
    } else {
        for (ln, key, _) in conweave_keys {
            notes.push(format!(
                "{name}:{ln}: {key}: accepted; only used by ConWeave (LB_MODE 9)"
            ));
        }
    }
    Ok(())
}

fn ecn_entries(name: &str, kmax: &EcnMap, kmin: &EcnMap, pmax: &EcnMap) -> Result<Vec<EcnEntry>> {
    let mut out = Vec::new();
    for (rate, kmax_v) in &kmax.1 {
        let find = |m: &EcnMap, key: &str| -> Result<String> {
            m.1.iter()
                .find(|(r, _)| r == rate)
                .map(|(_, v)| v.clone())
                .ok_or_else(|| {
                    ScenarioError::at(
                        name,
                        m.0,
                        key,
                        ErrorKind::Missing,
                        format!("no entry for rate {rate} (listed in KMAX_MAP)"),
                    )
                })
        };
        let kmin_v = find(kmin, "KMIN_MAP")?;
        let pmax_v = find(pmax, "PMAX_MAP")?;
        let kb = |ln: usize, key: &str, v: &str| -> Result<u64> {
            parse_decimal(v)
                .and_then(|(m, s)| scale_exact(m, s, 1000))
                .ok_or_else(|| {
                    ScenarioError::at(
                        name,
                        ln,
                        key,
                        ErrorKind::Syntax,
                        format!("`{v}` is not a size in KB"),
                    )
                })
        };
        let kmax_bytes = kb(kmax.0, "KMAX_MAP", kmax_v)?;
        let kmin_bytes = kb(kmin.0, "KMIN_MAP", &kmin_v)?;
        let p = real(name, pmax.0, "PMAX_MAP", &pmax_v)?;
        if !(0.0..=1.0).contains(&p) {
            return Err(ScenarioError::at(
                name,
                pmax.0,
                "PMAX_MAP",
                ErrorKind::Value,
                format!("{p} is not a probability"),
            ));
        }
        if kmin_bytes > kmax_bytes {
            return Err(ScenarioError::at(
                name,
                kmin.0,
                "KMIN_MAP",
                ErrorKind::Value,
                format!("Kmin {kmin_v} KB above Kmax {kmax_v} KB for rate {rate}"),
            ));
        }
        out.push(EcnEntry {
            rate_bps: *rate,
            kmin_bytes,
            kmax_bytes,
            pmax: p,
        });
    }
    for (m, key) in [(kmin, "KMIN_MAP"), (pmax, "PMAX_MAP")] {
        if let Some((rate, _)) =
            m.1.iter()
                .find(|(r, _)| !kmax.1.iter().any(|(k, _)| k == r))
        {
            return Err(ScenarioError::at(
                name,
                m.0,
                key,
                ErrorKind::Value,
                format!("rate {rate} is not in KMAX_MAP"),
            ));
        }
    }
    Ok(out)
}

/// The directory-relative resolution used for `TOPOLOGY_FILE`/`FLOW_FILE`, re-exported for
/// documentation: config directory first, then the current directory.
pub fn resolve(config: &Path, named: &str) -> std::path::PathBuf {
    crate::text::resolve_relative(config, named)
}
