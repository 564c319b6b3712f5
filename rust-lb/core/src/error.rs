//! Configuration errors and the range checks every algorithm's `validate` uses.
//!
//! An algorithm's parameters are validated once, before any packet is sent. A scheme's
//! `validate` knows nothing of names: it refuses with a [`ParamError`] (the parameter and what
//! is wrong), and the registry ([`crate::registry`]) names the algorithm, making it a
//! [`ConfigError`]. So no scheme depends on the list of schemes.

use std::fmt;

/// A parameter refused by a scheme's `validate`: which one and why (no algorithm name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError {
    /// The parameter at fault.
    pub parameter: String,
    /// What is wrong, in words.
    pub message: String,
}

impl ParamError {
    /// An error about `parameter`.
    #[must_use]
    pub fn new(parameter: &str, message: impl Into<String>) -> Self {
        ParamError {
            parameter: parameter.to_owned(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "parameter `{}`: {}", self.parameter, self.message)
    }
}

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
    /// `error`, a parameter of the algorithm called `algorithm`.
    #[must_use]
    pub fn of(algorithm: &str, error: ParamError) -> Self {
        ConfigError {
            algorithm: algorithm.to_owned(),
            parameter: Some(error.parameter),
            message: error.message,
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
pub(crate) fn check_int(parameter: &str, value: u64, lo: u64, hi: u64) -> Result<(), ParamError> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(ParamError::new(
            parameter,
            format!("must be in {lo}..={hi}, got {value}"),
        ))
    }
}

/// Checks that a real parameter is a number in `[lo, hi]`; the error names the parameter and
/// range.
pub(crate) fn check_real(parameter: &str, value: f64, lo: f64, hi: f64) -> Result<(), ParamError> {
    if value >= lo && value <= hi {
        Ok(())
    } else {
        Err(ParamError::new(
            parameter,
            format!("must be in [{lo}, {hi}], got {value}"),
        ))
    }
}
