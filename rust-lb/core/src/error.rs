//! Configuration errors and the range checks every algorithm's `validate` uses.
//!
//! An algorithm's parameters are validated once, before any packet is sent; a refusal is a
//! [`ConfigError`] naming the algorithm, the parameter at fault and what is wrong with it.
//! This module depends on nothing but [`Algorithm`], so every algorithm can use it without
//! depending on the factory in [`crate::config`] that builds the algorithms.

use std::fmt;

use crate::algorithm::Algorithm;

/// Why a configuration was refused. The message names the offending parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The algorithm being configured (or the name that was not recognised).
    pub algorithm: String,
    /// The parameter at fault, when one can be named.
    pub parameter: Option<String>,
    /// What is wrong, in words.
    pub message: String,
}

impl ConfigError {
    /// An error about one parameter of `algorithm`.
    #[must_use]
    pub fn parameter(algorithm: Algorithm, parameter: &str, message: impl Into<String>) -> Self {
        ConfigError {
            algorithm: algorithm.name().to_owned(),
            parameter: Some(parameter.to_owned()),
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.parameter {
            Some(p) => write!(
                f,
                "algorithm `{}`, parameter `{}`: {}",
                self.algorithm, p, self.message
            ),
            None => write!(f, "algorithm `{}`: {}", self.algorithm, self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Checks that an integer parameter lies in `lo..=hi`; the error names the parameter and range.
pub(crate) fn check_int(
    algorithm: Algorithm,
    parameter: &str,
    value: u64,
    lo: u64,
    hi: u64,
) -> Result<(), ConfigError> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(ConfigError::parameter(
            algorithm,
            parameter,
            format!("must be in {lo}..={hi}, got {value}"),
        ))
    }
}

/// Checks that a real parameter is a number in `[lo, hi]`; the error names the parameter and
/// range.
pub(crate) fn check_real(
    algorithm: Algorithm,
    parameter: &str,
    value: f64,
    lo: f64,
    hi: f64,
) -> Result<(), ConfigError> {
    if value >= lo && value <= hi {
        Ok(())
    } else {
        Err(ConfigError::parameter(
            algorithm,
            parameter,
            format!("must be in [{lo}, {hi}], got {value}"),
        ))
    }
}
