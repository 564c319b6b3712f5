//! The validated load-balancing configuration (`ffi::LbConfig`): creates the NICs' and
//! switches' deciders and answers the questions the ns-3 side asks about the algorithm, so
//! that C++ never looks at an algorithm's name or parameter text.

use std::sync::{Arc, Mutex};

use rdma_lb_core::host::{self, whack_a_mole::PathRouting};
use rdma_lb_core::switch::{self as sw};
use rdma_lb_core::{config, Algorithm, HostLbConfig};

use crate::guard::guard;
use crate::host::{HostLb, HostLbGroup};
use crate::switch::SwitchLb;

/// The shared enum of the configuration's answers (header
/// `rdma-lb-bridge/src/config.rs.h`).
#[cxx::bridge(namespace = "rdmalb::bridge")]
pub mod ffi {
    /// How the fabric is to route an algorithm's path indices (Whack-a-Mole's `routing`).
    #[derive(Debug)]
    enum PathIndexRouting {
        /// The algorithm sends no path indices.
        NotUsed,
        /// `routing = "ecmp"`: path i is ECMP hash input i.
        Off,
        /// `routing = "path-index"`: path i is the ToR's equal-cost uplink i, where the
        /// fabric has one multipath stage.
        On,
    }
}

/// See `ffi::LbConfig`.
pub struct LbConfig {
    cfg: config::LbConfig,
    /// The parameter text `cfg` was parsed from.
    params: String,
    /// The parameters `params` sets.
    given: Vec<String>,
    /// Quirk glibc-rand's shared stream.
    reference_rand: Option<rdma_lb_core::rng::SharedGlibcRand>,
    /// htsim's switches: the stream and each switch's (salt, is a ToR).
    htsim: Option<HtsimSwitches>,
}

/// See `ffi::LbConfig::use_htsim_switches`.
struct HtsimSwitches {
    stream: rdma_lb_core::rng::SharedHtsimRand,
    salts: std::collections::HashMap<u32, (u32, bool)>,
}

pub(crate) fn new_lb_config(algorithm: &str, params: &str) -> Result<Box<LbConfig>, String> {
    guard(|| {
        config::LbConfig::parse(algorithm, params)
            .map_err(|e| e.to_string())
            .and_then(|cfg| LbConfig::validated(cfg, params))
    })?
    .map(Box::new)
}

pub(crate) fn algorithm_names() -> Vec<String> {
    Algorithm::ALL.iter().map(|a| a.name().to_owned()).collect()
}

impl std::fmt::Debug for LbConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LbConfig")
            .field("algorithm", &self.cfg.algorithm.name())
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl LbConfig {
    /// Wraps `cfg`, parsed and validated from `params`.
    pub(crate) fn validated(cfg: config::LbConfig, params: &str) -> Result<Self, String> {
        let given =
            config::LbConfig::parameter_names(cfg.algorithm, params).map_err(|e| e.to_string())?;
        Ok(LbConfig {
            cfg,
            params: params.to_owned(),
            given,
            reference_rand: None,
            htsim: None,
        })
    }

    /// The core's configuration.
    #[cfg(test)]
    pub(crate) fn cfg(&self) -> &config::LbConfig {
        &self.cfg
    }

    pub(crate) fn algorithm_name(&self) -> &'static str {
        self.cfg.algorithm.name()
    }

    pub(crate) fn params(&self) -> &str {
        &self.params
    }

    pub(crate) fn copy(&self) -> Box<LbConfig> {
        Box::new(LbConfig {
            cfg: self.cfg.clone(),
            params: self.params.clone(),
            given: self.given.clone(),
            reference_rand: None,
            htsim: None,
        })
    }

    pub(crate) fn sprays_on_feedback(&self) -> bool {
        self.cfg.algorithm.sprays_on_feedback()
    }

    pub(crate) fn moves_on_feedback(&self) -> bool {
        self.cfg.algorithm.moves_on_feedback()
    }

    pub(crate) fn path_index_routing(&self) -> ffi::PathIndexRouting {
        match &self.cfg.host {
            HostLbConfig::WhackAMole(w) => match w.routing {
                PathRouting::PathIndex => ffi::PathIndexRouting::On,
                PathRouting::Ecmp => ffi::PathIndexRouting::Off,
            },
            _ => ffi::PathIndexRouting::NotUsed,
        }
    }

    pub(crate) fn num_paths_given(&self) -> bool {
        self.given.iter().any(|k| k == "num_paths")
    }

    pub(crate) fn with_num_paths(&self, num_paths: u32) -> Result<Box<LbConfig>, String> {
        guard(|| {
            let mut cfg = self.cfg.clone();
            let algorithm = cfg.algorithm;
            match &mut cfg.host {
                HostLbConfig::WhackAMole(w) => {
                    w.num_paths = num_paths;
                    w.validate()
                        .map_err(|e| config::ConfigError::of(algorithm.name(), e).to_string())?;
                }
                _ => return Err(format!("algorithm `{}` has no num_paths", algorithm.name())),
            }
            let extra = format!("num_paths = {num_paths}");
            let params = if self.params.trim().is_empty() {
                extra
            } else {
                format!("{}, {extra}", self.params)
            };
            LbConfig::validated(cfg, &params).map(Box::new)
        })?
    }

    pub(crate) fn new_host_lb(&self, seed: u64) -> Result<Box<HostLb>, String> {
        guard(|| Box::new(HostLb::new(host::HostLb::new(&self.cfg.host, seed))))
    }

    pub(crate) fn new_host_lb_group(&self) -> Result<Box<HostLbGroup>, String> {
        guard(|| Box::new(HostLbGroup::new(host::HostLbGroup::new(&self.cfg.host))))
    }

    pub(crate) fn new_switch_lb(&self, switch_id: u32, seed: u64) -> Result<Box<SwitchLb>, String> {
        guard(|| {
            Ok(Box::new(SwitchLb::new({
                let mut lb = match &self.htsim {
                    Some(h) => {
                        let Some(&(salt, is_tor)) = h.salts.get(&switch_id) else {
                            return Err(format!(
                                "switch {switch_id} is not among htsim's switches"
                            ));
                        };
                        let stream = Arc::clone(&h.stream);
                        sw::SwitchLb::htsim_ecmp(&self.cfg.switch, salt, is_tor, stream, seed)
                            .ok_or_else(|| self.htsim_refusal())?
                    }
                    None => sw::SwitchLb::new(&self.cfg.switch, switch_id, seed),
                };
                if let Some(rand) = &self.reference_rand {
                    lb.share_reference_rand(Arc::clone(rand));
                }
                lb
            })))
        })?
    }

    pub(crate) fn share_reference_rand(&mut self, seed: u32) {
        self.reference_rand = Some(rdma_lb_core::rng::GlibcRand::shared(seed));
    }

    fn htsim_refusal(&self) -> String {
        format!(
            "htsim's switches are plain ECMP; `{}` decides at the switches (use a host \
             algorithm, or the five-tuple switch hash)",
            self.cfg.algorithm.name()
        )
    }

    pub(crate) fn use_htsim_switches(
        &mut self,
        seed: u32,
        switch_ids: &[u32],
        tors: u32,
        second_tier: u32,
        hosts: u32,
        flows: u32,
    ) -> Result<(), String> {
        if self.cfg.switch != config::SwitchLbConfig::EcmpHash {
            return Err(self.htsim_refusal());
        }
        let built = guard(|| {
            let mut stream = rdma_lb_core::rng::HtsimRand::new(seed);
            let tors = usize::try_from(tors).unwrap_or(usize::MAX);
            let salts = switch_ids
                .iter()
                .enumerate()
                .map(|(i, &id)| (id, (stream.random(), i < tors)))
                .collect();
            stream.skip(u64::from(second_tier) + u64::from(hosts) + 2 * u64::from(flows));
            HtsimSwitches {
                stream: Arc::new(Mutex::new(stream)),
                salts,
            }
        })?;
        self.htsim = Some(built);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_parameter_is_an_error_naming_it() {
        let Err(e) = new_lb_config("spray", "num_entropies = 0") else {
            panic!("accepted")
        };
        assert!(e.contains("parameter `num_entropies`"), "{e}");
    }

    #[test]
    fn the_configuration_answers_for_its_algorithm() {
        // The bridge answers what each scheme declares in its own file (no list to extend when
        // a scheme is added); the schemes the NIC's warnings are about are among them.
        for &a in Algorithm::ALL {
            let c = new_lb_config(a.name(), "").unwrap();
            assert_eq!(
                c.sprays_on_feedback(),
                a.sprays_on_feedback(),
                "{}",
                a.name()
            );
            assert_eq!(c.moves_on_feedback(), a.moves_on_feedback(), "{}", a.name());
        }
        for (name, sprays, moves) in [
            ("reps", true, false),
            ("whack-a-mole", true, false),
            ("flowbender", false, true),
            ("hopper", false, true),
            ("ecmp", false, false),
            ("themis", false, false),
        ] {
            let c = new_lb_config(name, "").unwrap();
            assert_eq!(
                (c.sprays_on_feedback(), c.moves_on_feedback()),
                (sprays, moves),
                "{name}"
            );
        }
        for &a in Algorithm::ALL {
            let c = new_lb_config(a.name(), "").unwrap();
            assert_eq!((c.algorithm_name(), c.params()), (a.name(), ""));
            let want = if a == Algorithm::WhackAMole {
                ffi::PathIndexRouting::On
            } else {
                ffi::PathIndexRouting::NotUsed
            };
            assert_eq!(c.path_index_routing(), want, "{a}");
            assert!(!c.num_paths_given());
        }
        let c = new_lb_config("whack-a-mole", "routing = \"ecmp\", num_paths = 4").unwrap();
        assert_eq!(c.path_index_routing(), ffi::PathIndexRouting::Off);
        assert!(c.num_paths_given());
        assert_eq!(c.copy().params(), "routing = \"ecmp\", num_paths = 4");
        assert_eq!(c.copy().cfg(), c.cfg());
    }

    #[test]
    fn with_num_paths_is_the_parameter_given() {
        for params in [
            "",
            "log2_balls = 12",
            "shuffle = \"none\"\nupdate_interval_ns = 0",
        ] {
            let c = new_lb_config("whack-a-mole", params).unwrap();
            let n = c.with_num_paths(16).unwrap();
            let text = if params.is_empty() {
                "num_paths = 16".to_owned()
            } else {
                format!("{params}, num_paths = 16")
            };
            assert_eq!(n.params(), text);
            assert_eq!(n.cfg(), new_lb_config("whack-a-mole", &text).unwrap().cfg());
            assert!(n.num_paths_given());
        }
        let small = new_lb_config("whack-a-mole", "num_paths = 2, log2_balls = 2").unwrap();
        assert_eq!(
            small.with_num_paths(8).unwrap_err(),
            "algorithm `whack-a-mole`, parameter `log2_balls`: 2^log2_balls = 4 balls must be \
             at least num_paths = 8"
        );
        assert_eq!(
            new_lb_config("reps", "")
                .unwrap()
                .with_num_paths(2)
                .unwrap_err(),
            "algorithm `reps` has no num_paths"
        );
    }
}
