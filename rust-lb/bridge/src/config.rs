//! The validated load-balancing configuration (`ffi::LbConfig`): creates the NICs' and
//! switches' deciders.

use std::sync::{Arc, Mutex};

use rdma_lb_core::host;
use rdma_lb_core::switch::{self as sw};
use rdma_lb_core::{config, Algorithm};

use crate::guard;
use crate::host::{HostLb, HostLbGroup};
use crate::switch::SwitchLb;

/// See `ffi::LbConfig`.
pub struct LbConfig {
    cfg: config::LbConfig,
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
    guard(|| config::LbConfig::parse(algorithm, params))?
        .map(|cfg| {
            Box::new(LbConfig {
                cfg,
                reference_rand: None,
                htsim: None,
            })
        })
        .map_err(|e| e.to_string())
}

pub(crate) fn algorithm_names() -> Vec<String> {
    Algorithm::ALL.iter().map(|a| a.name().to_owned()).collect()
}

impl LbConfig {
    pub(crate) fn algorithm_name(&self) -> &'static str {
        self.cfg.algorithm.name()
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
}
