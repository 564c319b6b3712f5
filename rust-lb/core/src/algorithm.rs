//! The single list of load-balancing algorithm names.
//!
//! Every name used in configs, ns-3 attributes, command-line options, result folders and plot
//! legends comes from [`Algorithm::name`]; nothing else spells them (no integer mode codes).

use std::fmt;
use std::str::FromStr;

/// Where an algorithm makes its decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// At the sender NIC, per queue pair: it chooses the entropy of each data packet.
    Host,
    /// At switches, per packet: it chooses the egress port among the equal-cost candidates.
    Switch,
}

/// A load-balancing scheme a run can select.
///
/// A run names one scheme; the scheme decides both what the NICs do (the entropy of each data
/// packet) and what the switches do (the egress among equal-cost candidates). Host schemes run
/// over switch ECMP; switch schemes run over NICs that keep one entropy per flow (the host
/// side of `ecmp`), so under a switch scheme every flow's entropy is fixed and any spreading
/// is the switches' doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algorithm {
    /// Flow-level ECMP: one entropy per flow, hashed by every switch.
    Ecmp,
    /// Oblivious packet spraying: a uniformly random entropy for every data packet.
    Spray,
    /// REPS: recycle the entropies of un-marked ACKs, explore otherwise, freeze on failures
    /// (the REPS paper, §3, and the authors' artifact).
    Reps,
    /// FlowBender: one entropy per flow, re-drawn after congested RTTs or a timeout
    /// (Kabbani et al., CoNEXT 2014).
    FlowBender,
    /// Whack-a-Mole: deterministic bit-reversal spraying over a discrete path profile that
    /// congestion feedback whacks down (the Whack-a-Mole paper).
    WhackAMole,
    /// Hopper: RTT-driven path switching with two-path probing and an OOO-avoiding hold
    /// (the Hopper paper, "Predictive Load Balancing for RDMA Traffic", §3).
    Hopper,
    /// Themis: PSN-based spraying at the source ToR, invalid-NACK blocking and NACK
    /// compensation at the destination ToR (the Themis paper, §3).
    Themis,
    /// PLTS-Random: a uniformly random equal-cost port per packet (the PLTS paper, §III-A.1).
    PltsRandom,
    /// PLTS-Counter: the equal-cost port with the fewest bytes sent (the PLTS paper, §III-A.2).
    PltsCounter,
    /// PLTS-RR: per-flow round robin over the equal-cost ports (the PLTS paper, §III-A.3).
    PltsRr,
    /// Adaptive routing: the equal-cost port with the shortest queue, per packet (the "AR"
    /// baseline of the Themis paper, §5).
    Adaptive,
    /// DRILL(d, m): shortest of d random ports and m remembered ones (ConWeave's baseline;
    /// Ghorbani et al., SIGCOMM 2017).
    Drill,
    /// CONGA: flowlets on the least congested of sampled paths, by DRE feedback between ToRs
    /// (as the reference simulator runs it).
    Conga,
    /// LetFlow: flowlets on uniformly random paths (as the reference simulator runs it).
    LetFlow,
    /// ConWeave: flowcut rerouting at the source ToR with in-network reordering at the
    /// destination ToR (SIGCOMM 2023; as the reference simulator runs it).
    ConWeave,
}

impl Algorithm {
    /// Every algorithm, in the order tables and legends list them.
    pub const ALL: &'static [Algorithm] = &[
        Algorithm::Ecmp,
        Algorithm::Spray,
        Algorithm::Reps,
        Algorithm::FlowBender,
        Algorithm::WhackAMole,
        Algorithm::Hopper,
        Algorithm::Themis,
        Algorithm::PltsRandom,
        Algorithm::PltsCounter,
        Algorithm::PltsRr,
        Algorithm::Adaptive,
        Algorithm::Drill,
        Algorithm::Conga,
        Algorithm::LetFlow,
        Algorithm::ConWeave,
    ];

    /// The algorithm's one name (kebab-case), as used everywhere.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Algorithm::Ecmp => "ecmp",
            Algorithm::Spray => "spray",
            Algorithm::Reps => "reps",
            Algorithm::FlowBender => "flowbender",
            Algorithm::WhackAMole => "whack-a-mole",
            Algorithm::Hopper => "hopper",
            Algorithm::Themis => "themis",
            Algorithm::PltsRandom => "plts-random",
            Algorithm::PltsCounter => "plts-counter",
            Algorithm::PltsRr => "plts-rr",
            Algorithm::Adaptive => "adaptive",
            Algorithm::Drill => "drill",
            Algorithm::Conga => "conga",
            Algorithm::LetFlow => "letflow",
            Algorithm::ConWeave => "conweave",
        }
    }

    /// Where the algorithm's own decisions are made.
    #[must_use]
    pub const fn side(self) -> Side {
        match self {
            Algorithm::Ecmp
            | Algorithm::Spray
            | Algorithm::Reps
            | Algorithm::FlowBender
            | Algorithm::WhackAMole
            | Algorithm::Hopper => Side::Host,
            Algorithm::Themis
            | Algorithm::PltsRandom
            | Algorithm::PltsCounter
            | Algorithm::PltsRr
            | Algorithm::Adaptive
            | Algorithm::Drill
            | Algorithm::Conga
            | Algorithm::LetFlow
            | Algorithm::ConWeave => Side::Switch,
        }
    }

    /// All names, comma-separated, for error messages and `--help`.
    #[must_use]
    pub fn all_names() -> String {
        Algorithm::ALL
            .iter()
            .map(|a| a.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The name given is not an algorithm we have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownAlgorithm(pub String);

impl fmt::Display for UnknownAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown algorithm `{}` (known: {})",
            self.0,
            Algorithm::all_names()
        )
    }
}

impl std::error::Error for UnknownAlgorithm {}

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Algorithm::ALL
            .iter()
            .copied()
            .find(|a| a.name() == s)
            .ok_or_else(|| UnknownAlgorithm(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for a in Algorithm::ALL {
            assert_eq!(a.name().parse::<Algorithm>(), Ok(*a));
        }
        let mut names: Vec<_> = Algorithm::ALL.iter().map(|a| a.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Algorithm::ALL.len());
    }

    #[test]
    fn switch_schemes_are_on_the_switch_side() {
        let switch: Vec<_> = Algorithm::ALL
            .iter()
            .filter(|a| a.side() == Side::Switch)
            .map(|a| a.name())
            .collect();
        assert_eq!(
            switch,
            [
                "themis",
                "plts-random",
                "plts-counter",
                "plts-rr",
                "adaptive",
                "drill",
                "conga",
                "letflow",
                "conweave"
            ]
        );
    }

    #[test]
    fn unknown_name_lists_the_known_ones() {
        let err = "bogus".parse::<Algorithm>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown algorithm `bogus` (known: ecmp, spray, reps, flowbender, whack-a-mole, hopper, \
             themis, plts-random, plts-counter, plts-rr, adaptive, drill, conga, letflow, conweave)"
        );
    }
}
