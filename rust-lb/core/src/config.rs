//! Algorithm configuration: parsed and validated once, before any packet is sent.
//!
//! An algorithm is configured by its name (see [`Algorithm`]) and a parameter table written as
//! the body of a TOML inline table, e.g. `num_entropies = 256`. The same keys appear in the
//! `[lb]` section of scenario configs and in the ns-3 attribute `LbParameters`. Unknown keys
//! and out-of-range values are errors that name the parameter.
//!
//! The per-scheme parameter types and their checks belong to the schemes; the registry
//! ([`crate::registry`]) decodes a table into them.

use crate::algorithm::Algorithm;
pub use crate::error::ConfigError;
use crate::params::parse_table;
pub use crate::registry::{HostLbConfig, SwitchLbConfig};

/// The validated configuration of one run's load balancing, shared by every NIC and switch.
///
/// One name configures both sides. A host scheme (`Side::Host`) sets the NICs' selector and
/// leaves the switches on [`SwitchLbConfig::EcmpHash`]; a switch scheme (`Side::Switch`) sets
/// the switches' agent and gives the NICs [`HostLbConfig::FixedPerFlow`] (the host side of
/// `ecmp`: one random entropy per queue pair), so the parameters of a run always belong to the
/// one algorithm named.
#[derive(Debug, Clone, PartialEq)]
pub struct LbConfig {
    /// The scheme the run uses.
    pub algorithm: Algorithm,
    /// What each sender NIC does.
    pub host: HostLbConfig,
    /// What each switch does.
    pub switch: SwitchLbConfig,
}

impl LbConfig {
    /// Parses and validates `params` (the body of a TOML inline table; may be empty) for the
    /// algorithm called `algorithm`.
    ///
    /// # Errors
    /// Unknown algorithm names, malformed parameter text, unknown parameters and out-of-range
    /// values; the message names the parameter.
    pub fn parse(algorithm: &str, params: &str) -> Result<Self, ConfigError> {
        let algorithm: Algorithm =
            algorithm
                .trim()
                .parse()
                .map_err(|e: crate::algorithm::UnknownAlgorithm| ConfigError {
                    algorithm: e.0.clone(),
                    parameter: None,
                    message: e.to_string(),
                })?;
        let table = parse_table(algorithm.name(), params)?;
        let (host, switch) = crate::registry::configure(algorithm, table)?;
        Ok(LbConfig {
            algorithm,
            host,
            switch,
        })
    }

    /// The names of the parameters `params` sets, read as [`LbConfig::parse`] reads them (for
    /// a caller that fills in a parameter the user left out, e.g. Whack-a-Mole's `num_paths`).
    ///
    /// # Errors
    /// Malformed parameter text, as [`LbConfig::parse`].
    pub fn parameter_names(algorithm: Algorithm, params: &str) -> Result<Vec<String>, ConfigError> {
        Ok(parse_table(algorithm.name(), params)?
            .keys()
            .cloned()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::flowbender::FlowBenderConfig;
    use crate::host::reps::RepsConfig;
    use crate::host::spray::SprayConfig;
    use crate::host::whack_a_mole::WhackAMoleConfig;
    use crate::switch::drill::DrillConfig;
    use crate::switch::plts_rr::PltsRrConfig;
    use crate::switch::themis::ThemisConfig;

    #[test]
    fn ecmp_takes_no_parameters() {
        let c = LbConfig::parse("ecmp", "").unwrap();
        assert_eq!(c.host, HostLbConfig::FixedPerFlow);
        assert_eq!(c.switch, SwitchLbConfig::EcmpHash);
        let e = LbConfig::parse("ecmp", "num_entropies = 4").unwrap_err();
        assert_eq!(e.parameter.as_deref(), Some("num_entropies"));
        assert!(
            e.to_string().contains("unknown field `num_entropies`"),
            "{e}"
        );
    }

    #[test]
    fn spray_defaults_and_range() {
        let c = LbConfig::parse("spray", "").unwrap();
        assert_eq!(
            c.host,
            HostLbConfig::Spray(SprayConfig {
                num_entropies: 65_536,
                cycle: false,
            })
        );
        let c = LbConfig::parse("spray", "num_entropies = 256").unwrap();
        assert_eq!(
            c.host,
            HostLbConfig::Spray(SprayConfig {
                num_entropies: 256,
                cycle: false,
            })
        );
        let e = LbConfig::parse("spray", "num_entropies = 0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `spray`, parameter `num_entropies`: must be in 1..=65536, got 0"
        );
        let e = LbConfig::parse("spray", "num_entropies = \"many\"").unwrap_err();
        assert_eq!(e.parameter.as_deref(), Some("num_entropies"), "{e}");
    }

    #[test]
    fn reps_defaults_parameters_and_ranges() {
        let c = LbConfig::parse("reps", "").unwrap();
        assert_eq!(c.host, HostLbConfig::Reps(RepsConfig::default()));
        let d = RepsConfig::default();
        assert_eq!(
            (d.num_entropies, d.buffer_size),
            (256, 8),
            "REPS paper, Algorithm 1"
        );
        assert_eq!(
            d.freeze_ns, 10_000_000,
            "artifact exit_freeze_after = 10 ms"
        );
        let c = LbConfig::parse(
            "reps",
            "num_entropies = 64, buffer_size = 4, explore_pkts = 16, trimming = true, \
             rtt_guard_factor = 2",
        )
        .unwrap();
        assert_eq!(
            c.host,
            HostLbConfig::Reps(RepsConfig {
                num_entropies: 64,
                buffer_size: 4,
                explore_pkts: 16,
                trimming: true,
                rtt_guard_factor: 2.0,
                ..RepsConfig::default()
            })
        );
        let e = LbConfig::parse("reps", "buffer_size = 0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `reps`, parameter `buffer_size`: must be in 1..=1024, got 0"
        );
        let e = LbConfig::parse("reps", "rtt_guard_factor = 0.5").unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `reps`, parameter `rtt_guard_factor`: must be in [1, 100], got 0.5"
        );
        let e = LbConfig::parse("reps", "rtt_guard_factor = nan").unwrap_err();
        assert_eq!(e.parameter.as_deref(), Some("rtt_guard_factor"), "{e}");
        let e = LbConfig::parse("reps", "freeze_ns = 0").unwrap_err();
        assert_eq!(e.parameter.as_deref(), Some("freeze_ns"), "{e}");
        let e = LbConfig::parse("reps", "buffer = 3").unwrap_err();
        assert_eq!(e.parameter.as_deref(), Some("buffer"), "{e}");
    }

    #[test]
    fn flowbender_defaults_parameters_and_ranges() {
        let c = LbConfig::parse("flowbender", "").unwrap();
        let d = FlowBenderConfig::default();
        assert_eq!(c.host, HostLbConfig::FlowBender(d));
        assert_eq!(
            (d.threshold, d.consecutive_rtts),
            (0.05, 1),
            "T and N of the ns-3 FlowBender"
        );
        let c = LbConfig::parse("flowbender", "threshold = 0.1, consecutive_rtts = 3").unwrap();
        assert_eq!(
            c.host,
            HostLbConfig::FlowBender(FlowBenderConfig {
                threshold: 0.1,
                consecutive_rtts: 3,
                ..d
            })
        );
        let e = LbConfig::parse("flowbender", "threshold = 1.5").unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `flowbender`, parameter `threshold`: must be in [0, 1], got 1.5"
        );
        let e = LbConfig::parse("flowbender", "consecutive_rtts = 0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `flowbender`, parameter `consecutive_rtts`: must be in 1..=1000000, got 0"
        );
        let e = LbConfig::parse("flowbender", "num_entropies = 1").unwrap_err();
        assert_eq!(e.parameter.as_deref(), Some("num_entropies"), "{e}");
    }

    #[test]
    fn whack_a_mole_defaults_parameters_and_ranges() {
        use crate::host::whack_a_mole::{Redistribution, Shuffle};
        let c = LbConfig::parse("whack-a-mole", "").unwrap();
        let d = WhackAMoleConfig::default();
        assert_eq!(c.host, HostLbConfig::WhackAMole(d.clone()));
        let c = LbConfig::parse(
            "whack-a-mole",
            "num_paths = 16, log2_balls = 12, shuffle = \"method-2\", \
             redistribution = \"proportional\", update_interval_ns = 0",
        )
        .unwrap();
        assert_eq!(
            c.host,
            HostLbConfig::WhackAMole(WhackAMoleConfig {
                num_paths: 16,
                log2_balls: 12,
                shuffle: Shuffle::Method2,
                redistribution: Redistribution::Proportional,
                update_interval_ns: 0,
                ..d
            })
        );
        for (text, want) in [
            ("shuffle = \"none\"", Shuffle::None),
            ("shuffle = \"method-1\"", Shuffle::Method1),
        ] {
            let c = LbConfig::parse("whack-a-mole", text).unwrap();
            assert!(matches!(c.host, HostLbConfig::WhackAMole(w) if w.shuffle == want));
        }
        for name in ["even-each", "even-all", "even-others", "proportional"] {
            LbConfig::parse("whack-a-mole", &format!("redistribution = \"{name}\"")).unwrap();
        }
        let e = LbConfig::parse("whack-a-mole", "shuffle = \"method-3\"").unwrap_err();
        assert_eq!(e.parameter.as_deref(), Some("shuffle"), "{e}");
        let e = LbConfig::parse("whack-a-mole", "num_paths = 64, log2_balls = 5").unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `whack-a-mole`, parameter `log2_balls`: 2^log2_balls = 32 balls must be \
             at least num_paths = 64"
        );
        let e = LbConfig::parse("whack-a-mole", "log2_balls = 17").unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `whack-a-mole`, parameter `log2_balls`: must be in 1..=16, got 17"
        );
        let e = LbConfig::parse(
            "whack-a-mole",
            "num_paths = 4, log2_balls = 3, min_balls = 3",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `whack-a-mole`, parameter `min_balls`: must be in 0..=2, got 3"
        );
        let e = LbConfig::parse("whack-a-mole", "loss_factor = 2.0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `whack-a-mole`, parameter `loss_factor`: must be in [0, 1], got 2"
        );
    }

    #[test]
    fn switch_schemes_configure_switches_and_fix_host_entropies() {
        use crate::switch::themis::TpsnSearch;
        for name in ["plts-random", "plts-counter", "plts-rr", "adaptive"] {
            let c = LbConfig::parse(name, "").unwrap();
            assert_eq!(c.host, HostLbConfig::FixedPerFlow, "{name}");
            assert_ne!(c.switch, SwitchLbConfig::EcmpHash, "{name}");
            let e = LbConfig::parse(name, "samples = 2").unwrap_err();
            assert_eq!(e.parameter.as_deref(), Some("samples"), "{e}");
        }
        let c = LbConfig::parse("plts-rr", "idle_timeout_ns = 0").unwrap();
        assert_eq!(
            c.switch,
            SwitchLbConfig::PltsRr(PltsRrConfig { idle_timeout_ns: 0 })
        );
        let e = LbConfig::parse("plts-rr", "idle_timeout_ns = 20000000000").unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `plts-rr`, parameter `idle_timeout_ns`: must be in 0..=10000000000, got 20000000000"
        );
        let c = LbConfig::parse("themis", "").unwrap();
        assert_eq!(c.host, HostLbConfig::FixedPerFlow);
        assert_eq!(c.switch, SwitchLbConfig::Themis(ThemisConfig::default()));
        let c = LbConfig::parse(
            "themis",
            "remote_paths = 4, queue_factor = 2.0, tpsn_search = \"first-greater\", \
             compensation = false, last_hop_rtt_ns = 3000",
        )
        .unwrap();
        assert_eq!(
            c.switch,
            SwitchLbConfig::Themis(ThemisConfig {
                remote_paths: 4,
                queue_factor: 2.0,
                tpsn_search: TpsnSearch::FirstGreater,
                compensation: false,
                last_hop_rtt_ns: 3000,
                ..ThemisConfig::default()
            })
        );
        let c = LbConfig::parse("drill", "").unwrap();
        assert_eq!(
            c.switch,
            SwitchLbConfig::Drill(DrillConfig {
                samples: 2,
                memory: 1
            }),
            "DRILL(2, 1)"
        );
        let e = LbConfig::parse("drill", "samples = 0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `drill`, parameter `samples`: must be in 1..=16, got 0"
        );
        let e = LbConfig::parse("drill", "memory = 5").unwrap_err();
        assert_eq!(e.parameter.as_deref(), Some("memory"), "{e}");
        // Host schemes leave the switches on ECMP.
        assert_eq!(
            LbConfig::parse("spray", "").unwrap().switch,
            SwitchLbConfig::EcmpHash
        );
    }

    #[test]
    fn parameter_names_are_the_keys_given() {
        let names =
            LbConfig::parameter_names(Algorithm::WhackAMole, "num_paths = 4\nrouting = \"ecmp\"")
                .unwrap();
        assert_eq!(names, ["num_paths", "routing"]);
        assert!(LbConfig::parameter_names(Algorithm::Ecmp, " ")
            .unwrap()
            .is_empty());
        assert!(LbConfig::parameter_names(Algorithm::Spray, "num_entropies = = 3").is_err());
    }

    #[test]
    fn unknown_algorithm_and_garbage_are_errors() {
        let e = LbConfig::parse("bogus", "").unwrap_err();
        assert!(e.to_string().contains("unknown algorithm `bogus`"), "{e}");
        let e = LbConfig::parse("spray", "num_entropies = = 3").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("algorithm `spray`: cannot read parameters"),
            "{e}"
        );
    }
}
