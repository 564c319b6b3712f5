//! Adaptive routing, the "AR" baseline of the Themis paper (§2.2, §5) and of the REPS artifact
//! ("nvidia" mode of its `htsim/sim/datacenter/fat_tree_switch.cpp`): every packet leaves on the
//! equal-cost candidate with the fewest queued bytes.
//!
//! Deviations: ties are broken uniformly at random among the shortest queues (with all queues
//! empty, as at low load, this is random spraying; a fixed tie-break would send everything to
//! one port). Every packet kind is adaptively routed (htsim keeps packets under 100 B on ECMP;
//! our ACKs are 60 B and few, so the difference is small and documented).
//!
//! By default the choice is the strongest AR can be: per packet, at every switch, on exact and
//! instant queue lengths. Two options weaken it towards what switch ASICs do (neither paper
//! gives its AR's details; both are ours, for the Themis ablation in
//! `experiments/themis-collectives/ablation/`):
//! * `load_sample_ns` > 0: the chooser sees each port's queue as read at its first look in
//!   the current sampling period (`now / load_sample_ns`), not at the packet's arrival: port
//!   load registers that the forwarding pipeline reads periodically.
//! * `flowlet_gap_ns` > 0: the choice is made per flowlet, not per packet: a packet of a flow
//!   (source, destination, entropy, queue pair) seen at this switch at most `flowlet_gap_ns`
//!   earlier keeps its port (if it is still a candidate); otherwise it takes the shortest
//!   queue and starts a flowlet there. Flowlets idle for longer than the gap are erased every
//!   millisecond of simulated time (table size only).

use std::collections::HashMap;

use serde::Deserialize;

use super::chooser::{Chooser, EgressChoice, EgressChooser};
use super::ecmp::EcmpHash;
use super::packet::{EgressCandidate, PacketMeta};
use super::plts_rr::TableHasher;
use crate::error::{check_int, ParamError};
use crate::rng::SimRng;
use crate::scheme::{Scheme, SwitchRole};
use crate::time::SimTime;

/// Period of the flowlet table's aging sweep, in ns.
const AGING_NS: u64 = 1_000_000;

/// Parameters of adaptive routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdaptiveConfig {
    /// Period at which port loads are sampled, in ns; 0 = exact, instant queue lengths.
    pub load_sample_ns: u64,
    /// A gap longer than this starts a new flowlet, in ns; 0 = a choice per packet.
    pub flowlet_gap_ns: u64,
}

impl AdaptiveConfig {
    /// Checks the ranges.
    ///
    /// # Errors
    /// `load_sample_ns` or `flowlet_gap_ns` above 1 s.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_int("load_sample_ns", self.load_sample_ns, 0, 1_000_000_000)?;
        check_int("flowlet_gap_ns", self.flowlet_gap_ns, 0, 1_000_000_000)
    }
}

/// A flow at one switch: (source, destination, entropy, queue pair).
type FlowKey = (u32, u32, u16, u16);

/// Shortest-queue egress, per packet or per flowlet, on instant or sampled loads.
#[derive(Debug, Clone, Default)]
pub struct Adaptive {
    config: AdaptiveConfig,
    /// Per port: (sampling period, queued bytes read in it); used when `load_sample_ns` > 0.
    samples: Vec<(u64, u64)>,
    /// The sampled view of the current packet's candidates.
    view: Vec<EgressCandidate>,
    /// Per flow: (port, last packet); used when `flowlet_gap_ns` > 0.
    flowlets: HashMap<FlowKey, (u32, SimTime), TableHasher>,
    next_aging: u64,
}

/// Index of a candidate with the fewest queued bytes among `indices` (an iterator over
/// candidate indices), ties broken uniformly at random (reservoir sampling, one draw per tie).
pub(crate) fn shortest(
    candidates: &[EgressCandidate],
    indices: impl Iterator<Item = usize>,
    rng: &mut SimRng,
) -> usize {
    let mut best = 0;
    let mut best_q = u64::MAX;
    let mut ties = 0u32;
    for i in indices {
        let Some(c) = candidates.get(i) else { continue };
        if c.queue_bytes < best_q {
            best = i;
            best_q = c.queue_bytes;
            ties = 1;
        } else if c.queue_bytes == best_q && i != best {
            ties = ties.saturating_add(1);
            if rng.below(ties) == 0 {
                best = i;
            }
        }
    }
    best
}

impl Adaptive {
    /// Adaptive routing with `config`'s options.
    #[must_use]
    pub fn new(config: &AdaptiveConfig) -> Self {
        Adaptive {
            config: *config,
            ..Adaptive::default()
        }
    }

    /// The shortest candidate, by the loads this switch sees.
    fn shortest_seen(
        &mut self,
        now: SimTime,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> usize {
        let period_ns = self.config.load_sample_ns;
        if period_ns == 0 {
            return shortest(candidates, 0..candidates.len(), rng);
        }
        let epoch = now.as_ns() / period_ns;
        self.view.clear();
        // One entry per candidate, so that an index into `view` is an index into `candidates`.
        for c in candidates {
            let slot = usize::try_from(c.port).ok().and_then(|p| {
                if p >= self.samples.len() {
                    self.samples.resize(p + 1, (u64::MAX, 0));
                }
                self.samples.get_mut(p)
            });
            let queue_bytes = slot.map_or(c.queue_bytes, |slot| {
                if slot.0 != epoch {
                    *slot = (epoch, c.queue_bytes);
                }
                slot.1
            });
            self.view.push(EgressCandidate { queue_bytes, ..*c });
        }
        shortest(&self.view, 0..self.view.len(), rng)
    }

    /// Erases flowlets idle for longer than the gap, once per [`AGING_NS`].
    fn age(&mut self, now: SimTime) {
        if now.as_ns() < self.next_aging {
            return;
        }
        self.next_aging = now.as_ns().saturating_add(AGING_NS);
        let gap = self.config.flowlet_gap_ns;
        self.flowlets
            .retain(|_, (_, last)| now.saturating_since(*last).as_ns() <= gap);
    }
}

impl EgressChooser for Adaptive {
    fn choose(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> EgressChoice {
        let gap = self.config.flowlet_gap_ns;
        if gap == 0 {
            return EgressChoice::at(self.shortest_seen(now, candidates, rng));
        }
        self.age(now);
        let key = (pkt.sip, pkt.dip, pkt.sport.0, pkt.dport);
        let kept = self.flowlets.get(&key).and_then(|&(port, last)| {
            (now.saturating_since(last).as_ns() <= gap)
                .then(|| candidates.iter().position(|c| c.port == port))
                .flatten()
        });
        let index = match kept {
            Some(i) => i,
            None => self.shortest_seen(now, candidates, rng),
        };
        let port = candidates.get(index).map_or(0, |c| c.port);
        self.flowlets.insert(key, (port, now));
        EgressChoice::at(index)
    }
}

impl Scheme for Adaptive {
    type Config = AdaptiveConfig;

    fn validate(config: &AdaptiveConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl SwitchRole for Adaptive {
    type Agent = Chooser<Adaptive>;

    fn agent(config: &AdaptiveConfig, _switch_id: u32, _ecmp: EcmpHash) -> Chooser<Adaptive> {
        Chooser(Adaptive::new(config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::test_support::{cands, data};

    #[test]
    fn picks_the_shortest_queue_and_spreads_ties() {
        let mut a = Adaptive::default();
        let mut rng = SimRng::new(2);
        let cs = cands(&[5000, 1048, 9000, 1048]);
        let mut counts = [0u32; 4];
        for psn in 0..4000 {
            counts[a.choose(SimTime::ZERO, &data(1, psn), &cs, &mut rng).index] += 1;
        }
        assert_eq!((counts[0], counts[2]), (0, 0), "{counts:?}");
        // Ties: binomial(4000, 1/2), 4 sigma = 126.
        assert!(counts[1].abs_diff(2000) < 126, "{counts:?}");
        let cs = cands(&[3000, 2000, 1000, 4000]);
        assert_eq!(a.choose(SimTime::ZERO, &data(1, 0), &cs, &mut rng).index, 2);
    }

    #[test]
    fn sampled_loads_are_read_once_per_period() {
        let mut a = Adaptive::new(&AdaptiveConfig {
            load_sample_ns: 1_000,
            flowlet_gap_ns: 0,
        });
        let mut rng = SimRng::new(3);
        let t = SimTime::from_ns;
        // Port 1 is shortest at the period's first look ...
        let first = cands(&[5000, 1000, 9000, 7000]);
        assert_eq!(a.choose(t(100), &data(1, 0), &first, &mut rng).index, 1);
        // ... and stays "shortest" for the rest of the period, whatever its queue does.
        let later = cands(&[5000, 20_000, 9000, 7000]);
        for psn in 1..50 {
            assert_eq!(a.choose(t(999), &data(1, psn), &later, &mut rng).index, 1);
        }
        // The next period reads the queues again.
        assert_eq!(a.choose(t(1_000), &data(1, 50), &later, &mut rng).index, 0);
        // The instant default sees the change at once.
        let mut exact = Adaptive::default();
        assert_eq!(exact.choose(t(999), &data(1, 0), &later, &mut rng).index, 0);
    }

    #[test]
    fn flowlets_keep_their_port_until_a_gap() {
        let mut a = Adaptive::new(&AdaptiveConfig {
            load_sample_ns: 0,
            flowlet_gap_ns: 2_000,
        });
        let mut rng = SimRng::new(4);
        let t = SimTime::from_ns;
        let first = cands(&[5000, 1000, 9000, 7000]);
        assert_eq!(a.choose(t(0), &data(1, 0), &first, &mut rng).index, 1);
        // Port 1 grows the longest queue, but packets 2 us apart are one flowlet.
        let later = cands(&[5000, 20_000, 9000, 7000]);
        for k in 1..10u32 {
            let now = t(u64::from(k) * 2_000);
            assert_eq!(a.choose(now, &data(1, k), &later, &mut rng).index, 1);
        }
        // Another flow starts its own flowlet on the shortest queue.
        assert_eq!(a.choose(t(18_000), &data(2, 0), &later, &mut rng).index, 0);
        // A gap above 2 us starts a new flowlet of flow 1, on the shortest queue.
        assert_eq!(a.choose(t(20_001), &data(1, 10), &later, &mut rng).index, 0);
        // A flowlet whose port is no longer a candidate (a failed link) moves.
        let port = |port, queue_bytes| EgressCandidate {
            port,
            queue_bytes,
            tx_bytes: 0,
        };
        let without_0 = [port(1, 20_000), port(2, 9000), port(3, 7000)];
        let c = a.choose(t(20_500), &data(1, 11), &without_0, &mut rng);
        assert_eq!(c.index, 2, "the shortest of the live candidates");
    }

    #[test]
    fn aging_erases_idle_flowlets() {
        let mut a = Adaptive::new(&AdaptiveConfig {
            load_sample_ns: 0,
            flowlet_gap_ns: 1_000,
        });
        let mut rng = SimRng::new(5);
        let cs = cands(&[0, 0]);
        for f in 0..100 {
            a.choose(SimTime::ZERO, &data(f, 0), &cs, &mut rng);
        }
        assert_eq!(a.flowlets.len(), 100);
        a.choose(SimTime::from_ns(AGING_NS), &data(0, 1), &cs, &mut rng);
        assert_eq!(a.flowlets.len(), 1, "only the flow just seen is left");
    }
}
