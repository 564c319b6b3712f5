//! Flow-size distributions in the ConWeave/HPCC `traffic_gen` format.
//!
//! One point per line: `size_bytes cumulative_percent`. Both columns must be non-decreasing,
//! percents within `[0, 100]`, and the last percent exactly 100; anything else is an error
//! naming `file:line: field`. (The reference generator assumes strictly increasing columns;
//! equal neighbours are accepted here as steps. The legacy `workloads/*.txt` files use
//! fractions 0–1 and fail the "ends at 100" check, as they fail in the reference.)
//!
//! The distribution is the piecewise-linear interpolation of the points. Mean = trapezoid
//! integral (plus `size₀ · percent₀ / 100` for mass at the first point). Sampling = inverse CDF
//! with linear interpolation on a uniform percent in `[0, 100)`, truncated to an integer,
//! 0 → 1 (as `traffic_gen.py`); a percent at or below the first point's percent returns the
//! first size (the reference would extrapolate below it).

use std::path::Path;

use crate::error::{ErrorKind, Result, ScenarioError};
use crate::text::{numbered_lines, read_file, real};

/// A validated flow-size CDF.
#[derive(Debug, Clone, PartialEq)]
pub struct Cdf {
    /// (size in bytes, cumulative percent) points, non-decreasing in both, last percent 100.
    points: Vec<(f64, f64)>,
}

/// Reads and parses a CDF file.
///
/// # Errors
/// See the module documentation.
pub fn parse_cdf_file(path: &Path) -> Result<Cdf> {
    let text = read_file(path, "cdf")?;
    parse_cdf_str(&path.display().to_string(), &text)
}

/// Parses CDF text; `name` is used in error messages as the file name. `#` starts a comment.
///
/// # Errors
/// See the module documentation.
pub fn parse_cdf_str(name: &str, text: &str) -> Result<Cdf> {
    let mut points: Vec<(f64, f64)> = Vec::new();
    let mut last_line = 1;
    for (ln, line) in numbered_lines(text, true) {
        last_line = ln;
        let f: Vec<&str> = line.split_whitespace().collect();
        let [size, pct] = f.as_slice() else {
            return Err(ScenarioError::at(
                name,
                ln,
                "point",
                ErrorKind::Syntax,
                format!(
                    "expected 2 fields `<size_bytes> <cumulative_percent>`, found {}",
                    f.len()
                ),
            ));
        };
        let size = real(name, ln, "size_bytes", size)?;
        let pct = real(name, ln, "percent", pct)?;
        if size < 0.0 {
            return Err(ScenarioError::at(
                name,
                ln,
                "size_bytes",
                ErrorKind::Value,
                format!("negative size {size}"),
            ));
        }
        if !(0.0..=100.0).contains(&pct) {
            return Err(ScenarioError::at(
                name,
                ln,
                "percent",
                ErrorKind::Value,
                format!("must be in [0, 100], got {pct}"),
            ));
        }
        if let Some(&(ps, pp)) = points.last() {
            if size < ps {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    "size_bytes",
                    ErrorKind::Value,
                    format!("not monotone: {size} after {ps}"),
                ));
            }
            if pct < pp {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    "percent",
                    ErrorKind::Value,
                    format!("not monotone: {pct} after {pp}"),
                ));
            }
        }
        points.push((size, pct));
    }
    match points.last() {
        None => Err(ScenarioError::at(
            name,
            1,
            "point",
            ErrorKind::Missing,
            "no points",
        )),
        Some(&(_, p)) if (p - 100.0).abs() > 1e-9 => Err(ScenarioError::at(
            name,
            last_line,
            "percent",
            ErrorKind::Value,
            format!("the last point must be at 100 percent, got {p}"),
        )),
        Some(_) => Ok(Cdf { points }),
    }
}

impl Cdf {
    /// The points (size bytes, cumulative percent).
    #[must_use]
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// Mean flow size in bytes (trapezoid integral of the piecewise-linear CDF).
    #[must_use]
    pub fn mean_bytes(&self) -> f64 {
        let first = self.points.first().map_or(0.0, |&(x, y)| x * y / 100.0);
        first
            + self
                .points
                .windows(2)
                .map(|w| match w {
                    [(x0, y0), (x1, y1)] => (x0 + x1) / 2.0 * (y1 - y0) / 100.0,
                    _ => 0.0,
                })
                .sum::<f64>()
    }

    /// The size at cumulative percent `u` (in `[0, 100]`), linearly interpolated (continuous,
    /// before truncation).
    #[must_use]
    pub fn inverse(&self, u: f64) -> f64 {
        let Some(&(x_first, y_first)) = self.points.first() else {
            return 1.0;
        };
        if u <= y_first {
            return x_first;
        }
        for w in self.points.windows(2) {
            if let [(x0, y0), (x1, y1)] = *w {
                if u <= y1 {
                    return if y1 > y0 {
                        x0 + (x1 - x0) * (u - y0) / (y1 - y0)
                    } else {
                        x0
                    };
                }
            }
        }
        self.points.last().map_or(1.0, |&(x, _)| x)
    }

    /// A flow size for the uniform draw `u01` in `[0, 1)`: inverse CDF, truncated, 0 → 1.
    #[must_use]
    pub fn sample(&self, u01: f64) -> u64 {
        // `as` saturates for out-of-range floats; sizes are far below u64::MAX.
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "truncation toward zero is the reference's int() on a non-negative size"
        )]
        let s = self.inverse(u01 * 100.0) as u64;
        s.max(1)
    }

    /// The cumulative probability (0–1) at size `x` of the piecewise-linear distribution.
    #[must_use]
    pub fn cdf_at(&self, x: f64) -> f64 {
        let Some(&(x_first, y_first)) = self.points.first() else {
            return 1.0;
        };
        if x < x_first {
            return 0.0;
        }
        let mut p = y_first;
        for w in self.points.windows(2) {
            if let [(x0, y0), (x1, y1)] = *w {
                if x >= x1 {
                    p = y1;
                } else if x >= x0 {
                    p = if x1 > x0 {
                        y0 + (y1 - y0) * (x - x0) / (x1 - x0)
                    } else {
                        y1
                    };
                    break;
                }
            }
        }
        p / 100.0
    }
}
