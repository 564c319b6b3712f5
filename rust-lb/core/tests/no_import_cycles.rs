//! No import cycle between the modules of any rust-lb crate.
//!
//! Reads every `.rs` file of each crate under `rust-lb/` (from its `src/lib.rs` or
//! `src/main.rs`, following `mod` declarations, inline `mod name { ... }` blocks included),
//! collects the paths each module names — `use` trees and paths in code that start with
//! `crate::`, `super::`, `self::` or the name of one of the module's own child modules — and
//! resolves each to the deepest module it reaches: `use crate::error::ConfigError;` in
//! `switch/themis.rs` is the edge `switch::themis -> error`, `use super::PacketMeta;` in it the
//! edge `switch::themis -> switch`, `pub use agent::Verdict;` in `switch/mod.rs` the edge
//! `switch -> switch::agent`. A `mod` declaration alone is not an edge. The test fails naming
//! every cycle of that graph, with the file and line of each edge.
//!
//! Comments and string literals are skipped; macro bodies are read like code.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// One lexical token: enough of Rust to find `mod` items, `use` trees and paths.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    PathSep,
    /// A string literal's contents (raw or not; escapes left as written).
    Str(String),
    Punct(char),
}

/// Tokens of `src` with their line numbers (comments, whitespace, numbers and char literals
/// dropped).
fn lex(src: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let at = |k: usize| c.get(k).copied().unwrap_or('\0');
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if let Some(len) = raw_string_start(&c, i) {
            // r"..", r#".."#, br"..": ends at a quote followed by as many #.
            let hashes = len - if c[i] == 'b' { 3 } else { 2 };
            i += len;
            let start = i;
            loop {
                if i >= c.len() {
                    break;
                }
                if c[i] == '"' && (1..=hashes).all(|k| at(i + k) == '#') {
                    break;
                }
                if c[i] == '\n' {
                    line += 1;
                }
                i += 1;
            }
            out.push((Tok::Str(c[start..i.min(c.len())].iter().collect()), line));
            i += 1 + hashes;
        } else if ch == '"' || (ch == 'b' && at(i + 1) == '"') {
            i += if ch == 'b' { 2 } else { 1 };
            let start = i;
            let first_line = line;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    i += 1;
                }
                if at(i) == '\n' {
                    line += 1;
                }
                i += 1;
            }
            out.push((
                Tok::Str(c[start..i.min(c.len())].iter().collect()),
                first_line,
            ));
            i += 1;
        } else if ch == '\'' || (ch == 'b' && at(i + 1) == '\'') {
            // A char literal ('x', '\n', '\u{..}', b'x') or a lifetime ('a).
            let q = if ch == 'b' { i + 1 } else { i };
            if at(q + 1) == '\\' {
                i = q + 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(q + 2) == '\'' {
                i = q + 3;
            } else {
                i = q + 1; // lifetime: its name is read as an identifier next
            }
        } else if ch == 'r' && at(i + 1) == '#' && is_ident_start(at(i + 2)) {
            i += 2; // raw identifier
        } else if is_ident_start(ch) {
            let start = i;
            while i < c.len() && is_ident_continue(c[i]) {
                i += 1;
            }
            out.push((Tok::Ident(c[start..i].iter().collect()), line));
        } else if ch.is_ascii_digit() {
            while i < c.len()
                && (is_ident_continue(c[i]) || (c[i] == '.' && at(i + 1).is_ascii_digit()))
            {
                i += 1;
            }
        } else if ch == ':' && at(i + 1) == ':' {
            out.push((Tok::PathSep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// The length of a raw string's opening (`r"`, `r#"`, `br##"`, ...) at `i`, if one starts
/// there.
fn raw_string_start(c: &[char], i: usize) -> Option<usize> {
    let mut k = i;
    if c.get(k) == Some(&'b') {
        k += 1;
    }
    if c.get(k) != Some(&'r') {
        return None;
    }
    if i > 0 && is_ident_continue(c[i - 1]) {
        return None;
    }
    k += 1;
    while c.get(k) == Some(&'#') {
        k += 1;
    }
    (c.get(k) == Some(&'"')).then_some(k + 1 - i)
}

fn is_ident_start(ch: char) -> bool {
    ch.is_alphabetic() || ch == '_'
}

fn is_ident_continue(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// A module of the crate (keyed by its path from the crate root, empty for the root).
#[derive(Debug, Default)]
struct Module {
    children: BTreeSet<String>,
}

/// A path named inside a module, before resolution.
struct Mention {
    module: Vec<String>,
    segments: Vec<String>,
    file: PathBuf,
    line: usize,
}

/// One crate's module tree and the paths its modules name.
#[derive(Default)]
struct Crate {
    modules: BTreeMap<Vec<String>, Module>,
    mentions: Vec<Mention>,
}

impl Crate {
    fn load(root_file: &Path) -> Crate {
        let mut krate = Crate::default();
        krate.modules.insert(Vec::new(), Module::default());
        let mut queue = VecDeque::from([(root_file.to_path_buf(), Vec::new(), true)]);
        while let Some((file, module, owns_dir)) = queue.pop_front() {
            let text = fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
            // A mod.rs/lib.rs/main.rs file's child modules live next to it; foo.rs's in foo/.
            let dir = if owns_dir {
                file.parent().unwrap().to_path_buf()
            } else {
                file.with_extension("")
            };
            krate.scan(&file, &dir, &module, &lex(&text), &mut queue);
        }
        krate
    }

    fn add_module(&mut self, path: &[String]) {
        let (name, parent) = path.split_last().unwrap();
        self.modules
            .get_mut(parent)
            .unwrap()
            .children
            .insert(name.clone());
        self.modules.entry(path.to_vec()).or_default();
    }

    /// Reads one file's tokens: its `mod` items (queued or, inline, entered) and its paths.
    fn scan(
        &mut self,
        file: &Path,
        dir: &Path,
        file_module: &[String],
        toks: &[(Tok, usize)],
        queue: &mut VecDeque<(PathBuf, Vec<String>, bool)>,
    ) {
        let ident = |k: usize| match toks.get(k) {
            Some((Tok::Ident(s), _)) => Some(s.as_str()),
            _ => None,
        };
        let tok = |k: usize| toks.get(k).map(|t| &t.0);
        // (module path, directory of its child files, brace depth at which it closes)
        let mut stack: Vec<(Vec<String>, PathBuf, usize)> =
            vec![(file_module.to_vec(), dir.to_path_buf(), usize::MAX)];
        let mut depth = 0usize;
        let mut path_attr: Option<String> = None;
        let mut bridge_attr = false;
        let mut i = 0;
        while i < toks.len() {
            let (module, child_dir, _) = stack.last().unwrap().clone();
            let line = toks[i].1;
            match &toks[i].0 {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => {
                    depth = depth
                        .checked_sub(1)
                        .unwrap_or_else(|| panic!("{}:{line}: unbalanced }}", file.display()));
                    if stack.last().unwrap().2 == depth {
                        stack.pop();
                    }
                }
                // #[cxx::bridge] makes the next inline mod part of its file's module: its
                // declarations are the file's bridge, and its paths the file's imports.
                Tok::Punct('#')
                    if tok(i + 1) == Some(&Tok::Punct('['))
                        && ident(i + 2) == Some("cxx")
                        && tok(i + 3) == Some(&Tok::PathSep)
                        && ident(i + 4) == Some("bridge") =>
                {
                    bridge_attr = true;
                }
                // #[path = "..."] applies to the next mod item.
                Tok::Punct('#')
                    if tok(i + 1) == Some(&Tok::Punct('['))
                        && ident(i + 2) == Some("path")
                        && tok(i + 3) == Some(&Tok::Punct('=')) =>
                {
                    if let Some(Tok::Str(p)) = tok(i + 4) {
                        path_attr = Some(p.clone());
                    }
                }
                Tok::Ident(kw)
                    if kw == "mod"
                        && ident(i + 1).is_some()
                        && std::mem::take(&mut bridge_attr)
                        && tok(i + 2) == Some(&Tok::Punct('{')) =>
                {
                    // A cxx bridge: its body is read as the enclosing module's.
                    stack.push((module.clone(), child_dir.clone(), depth));
                    depth += 1;
                    i += 3;
                    continue;
                }
                Tok::Ident(kw) if kw == "mod" && ident(i + 1).is_some() => {
                    let name = ident(i + 1).unwrap();
                    let mut child = module.clone();
                    child.push(name.to_owned());
                    self.add_module(&child);
                    let attr = path_attr.take();
                    match tok(i + 2) {
                        Some(Tok::Punct(';')) => {
                            let (f, owns_dir) = match attr {
                                // Outside inline modules, relative to the file's directory.
                                Some(p) if stack.len() == 1 => {
                                    (file.parent().unwrap().join(p), true)
                                }
                                Some(p) => (child_dir.join(p), true),
                                None => {
                                    let flat = child_dir.join(format!("{name}.rs"));
                                    if flat.exists() {
                                        (flat, false)
                                    } else {
                                        (child_dir.join(name).join("mod.rs"), true)
                                    }
                                }
                            };
                            queue.push_back((f, child, owns_dir));
                        }
                        Some(Tok::Punct('{')) => {
                            stack.push((child, child_dir.join(name), depth));
                            depth += 1;
                        }
                        _ => {}
                    }
                    i += 3;
                    continue;
                }
                Tok::Ident(kw) if kw == "use" => {
                    let mut k = i + 1;
                    let mut found = Vec::new();
                    use_tree(toks, &mut k, &[], &mut found);
                    for segments in found {
                        self.mentions.push(Mention {
                            module: module.clone(),
                            segments,
                            file: file.to_path_buf(),
                            line,
                        });
                    }
                    i = k;
                    continue;
                }
                Tok::Ident(first) if tok(i + 1) == Some(&Tok::PathSep) => {
                    // A path in code: ident :: ident :: ...
                    let mut segments = vec![first.clone()];
                    let mut k = i + 1;
                    while tok(k) == Some(&Tok::PathSep) {
                        match ident(k + 1) {
                            Some(s) => segments.push(s.to_owned()),
                            None => break,
                        }
                        k += 2;
                    }
                    let after_dollar = i > 0 && tok(i - 1) == Some(&Tok::Punct('$'));
                    if after_dollar && first != "crate" {
                        // A macro's metavariable (`$name::$variant`), not a module path.
                        i = k;
                        continue;
                    }
                    let first = if after_dollar {
                        "crate" // $crate in a macro
                    } else {
                        first.as_str()
                    };
                    segments[0] = first.to_owned();
                    self.mentions.push(Mention {
                        module,
                        segments,
                        file: file.to_path_buf(),
                        line,
                    });
                    i = k;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// The module a path names from `module`, if it names one of this crate's.
    fn resolve(&self, module: &[String], segments: &[String]) -> Option<Vec<String>> {
        let mut base: Vec<String> = module.to_vec();
        let mut rest = segments;
        match segments.first()?.as_str() {
            "crate" => {
                base.clear();
                rest = &segments[1..];
            }
            "self" | "super" => {
                while let Some((s, tail)) = rest.split_first() {
                    match s.as_str() {
                        "self" => {}
                        "super" => {
                            base.pop()?;
                        }
                        _ => break,
                    }
                    rest = tail;
                }
            }
            first => {
                if !self.modules.get(module)?.children.contains(first) {
                    return None; // another crate, or an item in scope
                }
            }
        }
        for s in rest {
            let mut next = base.clone();
            next.push(s.clone());
            if !self.modules.contains_key(&next) {
                break;
            }
            base = next;
        }
        Some(base)
    }
}

/// Reads one `use` tree from `toks[*k]` (up to, not including, the `,`, `}` or `;` after
/// it), pushing every leaf path, with `prefix` in front, onto `found` (a `self` leaf names the
/// prefix itself, a glob the module it is in).
fn use_tree(toks: &[(Tok, usize)], k: &mut usize, prefix: &[String], found: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    let mut leaf = true;
    loop {
        match toks.get(*k).map(|t| &t.0) {
            Some(Tok::PathSep | Tok::Punct('*')) => *k += 1,
            Some(Tok::Ident(s)) if s == "as" => *k += 2,
            Some(Tok::Ident(s)) => {
                if s != "self" || path.is_empty() {
                    path.push(s.clone());
                }
                *k += 1;
            }
            Some(Tok::Punct('{')) => {
                *k += 1;
                leaf = false;
                loop {
                    match toks.get(*k).map(|t| &t.0) {
                        None => break,
                        Some(Tok::Punct('}')) => {
                            *k += 1;
                            break;
                        }
                        Some(Tok::Punct(',')) => *k += 1,
                        Some(_) => {
                            let before = *k;
                            use_tree(toks, k, &path, found);
                            if *k == before {
                                *k += 1;
                            }
                        }
                    }
                }
            }
            _ => break,
        }
    }
    if leaf {
        found.push(path);
    }
}

/// The edges `from -> to` of a crate's module graph, each with the first place that makes it.
fn edges(krate: &Crate) -> BTreeMap<(Vec<String>, Vec<String>), String> {
    let mut out = BTreeMap::new();
    for m in &krate.mentions {
        if let Some(to) = krate.resolve(&m.module, &m.segments) {
            if to != m.module {
                out.entry((m.module.clone(), to))
                    .or_insert_with(|| format!("{}:{}", m.file.display(), m.line));
            }
        }
    }
    out
}

fn name(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_owned()
    } else {
        module.join("::")
    }
}

/// A strongly connected component of the module graph (its modules, in order) and up to
/// [`MAX_CYCLES_SHOWN`] distinct shortest cycles in it, each as its edges with their places.
struct Tangle {
    modules: Vec<String>,
    cycles: Vec<Vec<(String, String)>>,
}

/// Cycles shown per component (one shortest cycle through each module, duplicates dropped).
const MAX_CYCLES_SHOWN: usize = 8;

/// The components of the graph that hold a cycle.
fn tangles(edges: &BTreeMap<(Vec<String>, Vec<String>), String>) -> Vec<Tangle> {
    let mut next: BTreeMap<&[String], Vec<&[String]>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    let reach = |start: &[String]| -> BTreeSet<Vec<String>> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start.to_vec()];
        while let Some(m) = todo.pop() {
            for n in next.get(m.as_slice()).into_iter().flatten() {
                if seen.insert(n.to_vec()) {
                    todo.push(n.to_vec());
                }
            }
        }
        seen
    };
    // The shortest cycle through `start` within `component` (breadth first), as its modules.
    let shortest = |start: &[String], component: &BTreeSet<Vec<String>>| -> Vec<Vec<String>> {
        let mut parent: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
        let mut todo = VecDeque::from([start.to_vec()]);
        let mut last = None;
        'bfs: while let Some(m) = todo.pop_front() {
            for n in next.get(m.as_slice()).into_iter().flatten() {
                if *n == start {
                    last = Some(m.clone());
                    break 'bfs;
                }
                if component.contains(*n) && !parent.contains_key(*n) {
                    parent.insert(n.to_vec(), m.clone());
                    todo.push_back(n.to_vec());
                }
            }
        }
        let mut path = Vec::new();
        let mut m = last.unwrap();
        while m != start {
            path.push(m.clone());
            m = parent[&m].clone();
        }
        path.push(start.to_vec());
        path.reverse();
        path
    };
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for start in next.keys() {
        if done.contains(*start) || !reach(start).contains(*start) {
            continue;
        }
        // Component of `start`: the modules it reaches that reach it back.
        let component: BTreeSet<Vec<String>> = reach(start)
            .into_iter()
            .filter(|m| reach(m).contains(*start))
            .collect();
        done.extend(component.iter().cloned());
        let mut seen = BTreeSet::new();
        let mut cycles = Vec::new();
        for m in &component {
            let mut path = shortest(m, &component);
            // The same cycle found from another of its modules: start it at its least module.
            let least = (0..path.len()).min_by_key(|&i| &path[i]).unwrap();
            path.rotate_left(least);
            if cycles.len() == MAX_CYCLES_SHOWN || !seen.insert(path.clone()) {
                continue;
            }
            path.push(path[0].clone());
            cycles.push(
                path.windows(2)
                    .map(|w| {
                        let at = edges[&(w[0].clone(), w[1].clone())].clone();
                        (format!("{} -> {}", name(&w[0]), name(&w[1])), at)
                    })
                    .collect(),
            );
        }
        out.push(Tangle {
            modules: component.iter().map(|m| name(m)).collect(),
            cycles,
        });
    }
    out
}

/// The import cycles of the crate whose root file is `root`, one block of lines per
/// component (empty if there is none); `label` names the crate, file names are shown relative
/// to `base`. Panics if a crate of more than one module shows no edge at all (the reader
/// would be broken).
fn crate_report(label: &str, root: &Path, base: &Path) -> String {
    let krate = Crate::load(root);
    let edges = edges(&krate);
    assert!(
        krate.modules.len() == 1 || !edges.is_empty(),
        "{label}: {} modules and not one import between them: is the reader broken?",
        krate.modules.len()
    );
    let mut report = String::new();
    for tangle in tangles(&edges) {
        let _ = writeln!(
            report,
            "{label}: import cycle among {} modules: {}",
            tangle.modules.len(),
            tangle.modules.join(", ")
        );
        for cycle in &tangle.cycles {
            let _ = writeln!(report, "  cycle:");
            for (edge, at) in cycle {
                let at = Path::new(at)
                    .strip_prefix(base)
                    .map_or(at.clone(), |p| p.display().to_string());
                let _ = writeln!(report, "    {edge:<50} ({at})");
            }
        }
    }
    report
}

#[test]
fn rust_lb_crates_have_no_import_cycle() {
    let rust_lb = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&rust_lb)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    let mut report = String::new();
    let mut crates = 0;
    for dir in dirs {
        let Some(root) = ["src/lib.rs", "src/main.rs"]
            .iter()
            .map(|f| dir.join(f))
            .find(|f| f.exists())
        else {
            continue;
        };
        crates += 1;
        let label = format!("rust-lb/{}", dir.file_name().unwrap().to_string_lossy());
        report += &crate_report(&label, &root, &rust_lb);
    }
    assert!(
        crates >= 4,
        "found only {crates} crates under {}",
        rust_lb.display()
    );
    // No tangle anywhere. (The bridge crate's root `#[cxx::bridge]` used to declare the shared
    // structs that config, host and switch read, a cycle through all five modules; each of
    // those modules now carries its own bridge, which the root's aliases.)
    assert!(!report.contains("import cycle among"), "\n{report}");
}

/// The reader on a planted crate: a cycle through a child file, a nested `use` tree and a
/// path in code is found, and one through a `#[cxx::bridge]` module (part of its file); `use`-like text in comments and strings, a `mod` declaration, a
/// macro's metavariable path and a test module's `use super::*` are not edges.
#[test]
fn a_planted_cycle_is_found_and_comments_are_not_read() {
    let dir = std::env::temp_dir().join(format!("rdma-lb-no-import-cycles-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("b")).unwrap();
    let files = [
        (
            "lib.rs",
            "//! Planted.\nmod a;\npub mod b;\nmod d;\nmod e;\nmod f;\nmod g;\nmod h;\npub use b::Thing;\n\
             pub use h::X;\n\
             #[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::a::f;\n}\n",
        ),
        (
            "a.rs",
            "use crate::b::{self, inner::{Deep as _}};\npub fn f() {}\n",
        ),
        (
            "b.rs",
            "pub mod inner;\npub struct Thing;\npub fn g() {\n    crate::a::f();\n}\n",
        ),
        (
            "b/inner.rs",
            "pub struct Deep;\nuse super::super::a as _x;\n",
        ),
        (
            "d.rs",
            "// use crate::e;\n/* use crate::e; /* nested */ use crate::e; */\n\
             const S: &str = \"crate::e::X\";\nconst R: &str = r#\"use crate::e;\"#;\n\
             const C: char = '\"';\n",
        ),
        ("e.rs", "use crate::d;\n"),
        // A cxx bridge is part of its file: f's bridge names g's type, g uses f's.
        ("f.rs", "#[cxx::bridge]\nmod ffi {\n    extern \"Rust\" {\n        type T = crate::g::T;\n    }\n}\n"),
        ("g.rs", "pub struct T;\nuse crate::f::ffi as _;\n"),
        // A macro's metavariable path (`$name::$v`) is not `$crate`: no h -> crate edge.
        (
            "h.rs",
            "pub struct X;\nmacro_rules! m {\n    ($name:ident, $v:ident) => { $name::$v };\n}\n",
        ),
    ];
    for (name, text) in files {
        fs::write(dir.join(name), text).unwrap();
    }
    let report = crate_report("planted", &dir.join("lib.rs"), &dir);
    let _ = fs::remove_dir_all(&dir);
    assert!(
        report.starts_with("planted: import cycle among 3 modules: a, b, b::inner\n"),
        "{report}"
    );
    assert!(report.contains("a -> b "), "{report}");
    assert!(report.contains("b -> a "), "{report}");
    assert!(report.contains("b::inner -> a "), "{report}");
    assert!(report.contains("(b/inner.rs:2)"), "{report}");
    assert!(
        report.contains("planted: import cycle among 2 modules: f, g\n"),
        "{report}"
    );
    assert_eq!(report.matches("import cycle").count(), 2, "{report}");
}
