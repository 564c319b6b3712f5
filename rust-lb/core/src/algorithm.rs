//! The load-balancing algorithms by name: [`Algorithm`] (generated from the rows of
//! [`crate::registry`]) read from and written as its one name.
//!
//! Every name used in configs, ns-3 attributes, command-line options, result folders and plot
//! legends comes from [`Algorithm::name`]; nothing else spells them (no integer mode codes).

use std::fmt;
use std::str::FromStr;

pub use crate::registry::Algorithm;
pub use crate::scheme::Side;

impl Algorithm {
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
        // A pin on the schemes that exist (a new scheme declares its side in its registry row).
        for (name, side) in [
            ("ecmp", Side::Host),
            ("spray", Side::Host),
            ("hopper", Side::Host),
            ("themis", Side::Switch),
            ("plts-rr", Side::Switch),
            ("adaptive", Side::Switch),
            ("drill", Side::Switch),
            ("conga", Side::Switch),
            ("letflow", Side::Switch),
            ("conweave", Side::Switch),
        ] {
            assert_eq!(
                name.parse::<Algorithm>().map(Algorithm::side),
                Ok(side),
                "{name}"
            );
        }
    }

    #[test]
    fn unknown_name_lists_the_known_ones() {
        let err = "bogus".parse::<Algorithm>().unwrap_err().to_string();
        let known: Vec<_> = Algorithm::ALL.iter().map(|a| a.name()).collect();
        assert_eq!(
            err,
            format!("unknown algorithm `bogus` (known: {})", known.join(", "))
        );
        assert!(
            err.starts_with("unknown algorithm `bogus` (known: ecmp, spray, reps, "),
            "{err}"
        );
    }
}
