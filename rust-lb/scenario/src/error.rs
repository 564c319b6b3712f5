//! The one error type of the scenario parsers: where (file, line, key or field) and what.
//!
//! Every message renders as `file:line: key: message` (or `file: key: message` when no line
//! can be named, e.g. a file that cannot be opened at all), so the CLI and the ns-3 scenario
//! program print the same single line.

use std::fmt;

/// What kind of problem was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A file could not be read.
    Io,
    /// The text is not in the expected format (wrong column count, not a number, bad TOML).
    Syntax,
    /// A key or field that the format does not define.
    UnknownKey,
    /// A key given twice where only one is allowed.
    Duplicate,
    /// A required key or field is missing.
    Missing,
    /// A number with a missing or unknown unit.
    Unit,
    /// A value outside its allowed range or otherwise inconsistent.
    Value,
    /// A node id that does not exist, or a host where a switch is needed (or vice versa).
    Node,
    /// A count line that does not match the records that follow.
    Count,
    /// A valid input naming something rdma-lb does not model (e.g. HPCC, ConWeave's own LB).
    Unsupported,
}

/// A located error: `file:line: key: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file (as given by the user, or the in-memory name passed to `parse_*_str`).
    pub file: String,
    /// 1-based line number, when known.
    pub line: Option<usize>,
    /// The key (config formats) or field (column formats) at fault.
    pub key: String,
    /// The category.
    pub kind: ErrorKind,
    /// What is wrong, in words.
    pub message: String,
}

impl ScenarioError {
    /// An error at `file:line` about `key`.
    #[must_use]
    pub fn at(
        file: &str,
        line: usize,
        key: &str,
        kind: ErrorKind,
        message: impl Into<String>,
    ) -> Self {
        ScenarioError {
            file: file.to_owned(),
            line: Some(line),
            key: key.to_owned(),
            kind,
            message: message.into(),
        }
    }

    /// An error about `key` of `file` with no line (e.g. the file itself cannot be read).
    #[must_use]
    pub fn file(file: &str, key: &str, kind: ErrorKind, message: impl Into<String>) -> Self {
        ScenarioError {
            file: file.to_owned(),
            line: None,
            key: key.to_owned(),
            kind,
            message: message.into(),
        }
    }

    /// A file named at `file:line` by `key` could not be read: this error, if it is an I/O
    /// error, moved to that line (naming the unreadable file in the message); any other
    /// error, about the file's contents, stays where it is.
    #[must_use]
    pub fn io_at(self, file: &str, line: usize, key: &str) -> Self {
        if self.kind == ErrorKind::Io {
            let message = format!("{}: {}", self.file, self.message);
            ScenarioError::at(file, line, key, ErrorKind::Io, message)
        } else {
            self
        }
    }
}

/// Keeps a message on one line: line breaks become `; `, other control characters are
/// escaped (`\u{0}`), so even text quoted from a hostile input prints as one line.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for part in text.trim().split('\n') {
        if !out.is_empty() {
            out.push_str("; ");
        }
        for c in part.trim_end_matches('\r').chars() {
            if c.is_control() {
                out.extend(c.escape_default());
            } else {
                out.push(c);
            }
        }
    }
    out
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (key, msg) = (one_line(&self.key), one_line(&self.message));
        match self.line {
            Some(line) => write!(f, "{}:{}: {key}: {msg}", self.file, line),
            None => write!(f, "{}: {key}: {msg}", self.file),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Result of every parser in this crate.
pub type Result<T> = std::result::Result<T, ScenarioError>;
