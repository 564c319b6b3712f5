//! Small helpers shared by the line-oriented parsers: reading files, numbered lines, numbers.

use std::path::{Path, PathBuf};

use crate::error::{ErrorKind, Result, ScenarioError};

/// Reads a whole file as UTF-8; the error names the file (and, via `what`, the key or option
/// that pointed to it).
pub(crate) fn read_file(path: &Path, what: &str) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| {
        ScenarioError::file(
            &path.display().to_string(),
            what,
            ErrorKind::Io,
            format!("cannot read: {e}"),
        )
    })
}

/// Non-blank lines with their 1-based numbers; `#` starts a comment when `comments` is set.
pub(crate) fn numbered_lines(text: &str, comments: bool) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter_map(move |(i, l)| {
        let l = if comments {
            l.split_once('#').map_or(l, |(a, _)| a)
        } else {
            l
        };
        let l = l.trim();
        (!l.is_empty()).then_some((i + 1, l))
    })
}

/// Parses an unsigned integer field.
pub(crate) fn uint<T: std::str::FromStr>(
    file: &str,
    line: usize,
    field: &str,
    token: &str,
) -> Result<T> {
    token.parse::<T>().map_err(|_| {
        ScenarioError::at(
            file,
            line,
            field,
            ErrorKind::Syntax,
            format!("`{token}` is not a non-negative integer"),
        )
    })
}

/// Parses a finite real number field.
pub(crate) fn real(file: &str, line: usize, field: &str, token: &str) -> Result<f64> {
    match token.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(ScenarioError::at(
            file,
            line,
            field,
            ErrorKind::Syntax,
            format!("`{token}` is not a number"),
        )),
    }
}

/// Resolves a path named inside `config`: relative paths are tried against the config file's
/// directory first, then against the current directory. Returns the first that exists (or
/// the config-relative one, so the error names a sensible path).
#[must_use]
pub fn resolve_relative(config: &Path, named: &str) -> PathBuf {
    let p = Path::new(named);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    let beside = config
        .parent()
        .map_or_else(|| p.to_path_buf(), |d| d.join(p));
    if beside.exists() {
        return beside;
    }
    if p.exists() {
        return p.to_path_buf();
    }
    beside
}
