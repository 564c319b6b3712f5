//! DRILL(d, m) (Ghorbani et al., "Drill: Micro load balancing for low-latency data center
//! networks", SIGCOMM 2017), the per-packet baseline of ConWeave: for
//! each packet the switch samples `d` random candidates, adds the `m` ports it remembers as
//! best from its previous decisions, and sends on the one with the shortest queue, which it
//! then remembers. ConWeave's baseline is DRILL(2, 1).
//!
//! Deviations: the memory is per switch (as DRILL's per-engine memory), not per destination
//! as in ConWeave's ns-3; a remembered port that is not a candidate for the current packet is
//! skipped. Samples are drawn with replacement; ties go to the first of the sample list
//! (samples, then memory), as the reference code's strict `<` does.

use serde::Deserialize;

use super::chooser::{Chooser, EgressChoice, EgressChooser};
use super::ecmp::EcmpHash;
use super::packet::{EgressCandidate, PacketMeta};
use crate::error::{check_int, ParamError};
use crate::rng::SimRng;
use crate::scheme::{Scheme, SwitchRole};
use crate::time::SimTime;

/// Most ports DRILL may remember.
pub const MAX_MEMORY: usize = 4;

/// Parameters of DRILL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrillConfig {
    /// Random samples per packet (`d`).
    pub samples: u32,
    /// Best ports remembered across packets (`m`).
    pub memory: u32,
}

impl Default for DrillConfig {
    fn default() -> Self {
        DrillConfig {
            samples: 2,
            memory: 1,
        }
    }
}

impl DrillConfig {
    /// Checks the ranges.
    ///
    /// # Errors
    /// `samples` outside `1..=16`, `memory` outside `0..=4`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_int("samples", u64::from(self.samples), 1, 16)?;
        check_int("memory", u64::from(self.memory), 0, MAX_MEMORY as u64)
    }
}

/// DRILL's per-switch state: the remembered best ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drill {
    samples: u32,
    memory: usize,
    remembered: [Option<u32>; MAX_MEMORY],
}

impl Drill {
    /// DRILL with nothing remembered yet.
    #[must_use]
    pub fn new(config: &DrillConfig) -> Self {
        Drill {
            samples: config.samples,
            memory: usize::try_from(config.memory)
                .unwrap_or(MAX_MEMORY)
                .min(MAX_MEMORY),
            remembered: [None; MAX_MEMORY],
        }
    }
}

impl EgressChooser for Drill {
    fn choose(
        &mut self,
        _now: SimTime,
        _pkt: &PacketMeta,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> EgressChoice {
        let n = u32::try_from(candidates.len()).unwrap_or(u32::MAX);
        let mut best: Option<(usize, u64)> = None;
        let mut consider = |i: usize| {
            if let Some(c) = candidates.get(i) {
                if best.is_none_or(|(_, q)| c.queue_bytes < q) {
                    best = Some((i, c.queue_bytes));
                }
            }
        };
        for _ in 0..self.samples {
            consider(usize::try_from(rng.below(n)).unwrap_or(0));
        }
        for port in self.remembered.iter().take(self.memory).flatten() {
            if let Some(i) = candidates.iter().position(|c| c.port == *port) {
                consider(i);
            }
        }
        let chosen = best.map_or(0, |(i, _)| i);
        if self.memory > 0 {
            // The chosen port becomes the most recent memory; older ones shift down.
            if let Some(port) = candidates.get(chosen).map(|c| c.port) {
                if let Some(mem) = self.remembered.get_mut(..self.memory) {
                    if !mem.contains(&Some(port)) {
                        mem.rotate_right(1);
                        if let Some(first) = mem.first_mut() {
                            *first = Some(port);
                        }
                    }
                }
            }
        }
        EgressChoice::at(chosen)
    }
}

impl Scheme for Drill {
    type Config = DrillConfig;

    fn validate(config: &DrillConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl SwitchRole for Drill {
    type Agent = Chooser<Drill>;

    fn agent(config: &DrillConfig, _switch_id: u32, _ecmp: EcmpHash) -> Chooser<Drill> {
        Chooser(Drill::new(config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::test_support::{cands, data};

    #[test]
    fn remembered_best_port_is_reused_while_it_stays_shortest() {
        let mut d = Drill::new(&DrillConfig::default());
        let mut rng = SimRng::new(5);
        // Port 2 is empty, the others long: once port 2 is sampled it is remembered and
        // chosen for every later packet, whatever the samples.
        let cs = cands(&[9000, 9000, 0, 9000, 9000, 9000, 9000, 9000]);
        let picks: Vec<usize> = (0..200)
            .map(|psn| d.choose(SimTime::ZERO, &data(1, psn), &cs, &mut rng).index)
            .collect();
        let first = picks.iter().position(|&i| i == 2).unwrap();
        assert!(first < 30, "sampled within 30 packets (p_miss = (7/8)^60)");
        assert!(picks[first..].iter().all(|&i| i == 2), "{picks:?}");
    }

    #[test]
    fn without_memory_two_samples_beat_one_on_average() {
        // d = 2, m = 0 never picks the single longest queue more often than d = 1 does.
        let cs = cands(&[1, 2, 3, 4]);
        let mut rng = SimRng::new(8);
        let count_longest = |cfg: DrillConfig, rng: &mut SimRng| {
            let mut d = Drill::new(&cfg);
            (0..4000)
                .filter(|&p| d.choose(SimTime::ZERO, &data(1, p), &cs, rng).index == 3)
                .count()
        };
        let one = count_longest(
            DrillConfig {
                samples: 1,
                memory: 0,
            },
            &mut rng,
        );
        let two = count_longest(
            DrillConfig {
                samples: 2,
                memory: 0,
            },
            &mut rng,
        );
        // Expectations 1000 (1/4) and 250 (1/16).
        assert!(
            one.abs_diff(1000) < 130 && two.abs_diff(250) < 70,
            "{one} {two}"
        );
    }
}
