//! Where a TOML scenario's errors point: the file being read ([`Cx`]) and the line and
//! `section.key` of a TOML parser span, found from the text around it.

use std::ops::Range;
use std::path::Path;

use toml::Spanned;

use crate::error::{ErrorKind, Result, ScenarioError};
use crate::text::resolve_relative;

/// The TOML file being read: its name in messages, its text and its path (relative file
/// names resolve against its directory).
pub(super) struct Cx<'a> {
    pub(super) file: &'a str,
    pub(super) text: &'a str,
    pub(super) path: &'a Path,
}

impl Cx<'_> {
    pub(super) fn err<T>(
        &self,
        s: &Spanned<T>,
        key: &str,
        kind: ErrorKind,
        msg: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError::at(
            self.file,
            line_of(self.text, s.span().start),
            key,
            kind,
            msg,
        )
    }

    /// Reads a file named at `s` with `read`; I/O errors are located at the naming key.
    pub(super) fn read<T>(
        &self,
        s: &Spanned<String>,
        key: &str,
        read: impl FnOnce(&Path) -> Result<T>,
    ) -> Result<T> {
        let p = resolve_relative(self.path, s.get_ref());
        read(&p).map_err(|e| e.io_at(self.file, line_of(self.text, s.span().start), key))
    }
}

/// Line (1-based) of a byte offset.
pub(super) fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |t| t.bytes().filter(|&b| b == b'\n').count() + 1)
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The key whose inline table is still open at the end of `prefix` (same line), if any.
fn inline_parent(prefix: &str) -> Option<String> {
    let mut depth = 0i32;
    let mut open_at = None;
    for (i, c) in prefix.char_indices().rev() {
        match c {
            '}' => depth += 1,
            '{' if depth == 0 => {
                open_at = Some(i);
                break;
            }
            '{' => depth -= 1,
            _ => {}
        }
    }
    let before = prefix.get(..open_at?)?;
    let before = before.trim_end_matches(|c: char| c.is_whitespace() || c == '[' || c == ',');
    let before = before.strip_suffix('=')?.trim_end();
    let k: String = before
        .chars()
        .rev()
        .take_while(|&c| is_key_char(c) || c == '.')
        .collect();
    (!k.is_empty()).then(|| k.chars().rev().collect())
}

/// The `section.key` a span points at (the key itself, or the value of `key = value`),
/// found from the text around the span.
pub(super) fn key_at(text: &str, span: &Range<usize>) -> String {
    let start = span.start.min(text.len());
    let before = text.get(..start).unwrap_or("");
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let prefix = before.get(line_start..).unwrap_or("");
    let at = text.get(start..span.end.min(text.len())).unwrap_or("");
    let trimmed = prefix.trim_end();
    let key = if let Some(p) = trimmed.strip_suffix('=') {
        let p = p.trim_end();
        let k: String = p
            .chars()
            .rev()
            .take_while(|&c| is_key_char(c) || c == '.')
            .collect();
        k.chars().rev().collect()
    } else {
        let k: String = at.chars().take_while(|&c| is_key_char(c)).collect();
        if k.is_empty() {
            // A table header or a whole table: name the header.
            let h = at.trim_start_matches('[').trim_start_matches('[');
            h.chars()
                .take_while(|&c| is_key_char(c) || c == '.')
                .collect()
        } else {
            k
        }
    };
    // Inside an inline table (`parent = { ... }` or `parent = [ { ... } ]`): prefix the parent.
    let key = match inline_parent(prefix) {
        Some(parent) if !key.is_empty() => format!("{parent}.{key}"),
        _ => key,
    };
    // The section: the last [header] at or before the span.
    let section = text
        .get(..line_start)
        .unwrap_or("")
        .lines()
        .rev()
        .find_map(|l| {
            let l = l.trim();
            l.starts_with('[')
                .then(|| l.trim_matches(|c| c == '[' || c == ']').trim().to_owned())
        });
    match section {
        Some(s) if !key.is_empty() && !key.starts_with(&s) => format!("{s}.{key}"),
        Some(s) if key.is_empty() => s,
        _ => {
            if key.is_empty() {
                "toml".to_owned()
            } else {
                key
            }
        }
    }
}
