//! The module graph of one crate as its imports draw it, shared by the crates' no-import-circle
//! tests: every `crate::…` path (in `use` lines, multi-line `use` blocks and inline paths) of a
//! module's non-test code is an edge to the module it names, a name re-exported by `lib.rs`
//! counting as its module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The top-level items of a `{…}` group (`s` starts after the `{`): the first name of each.
fn group_heads(s: &str) -> Vec<&str> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                heads.push(ident(s[start..i].trim_start()));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                heads.push(ident(s[start..i].trim_start()));
                start = i + 1;
            }
            _ => {}
        }
    }
    heads.retain(|h| !h.is_empty());
    heads
}

/// The names each path prefix (`crate::`, and `super::` where it means the crate) leads to.
fn heads<'a>(code: &'a str, prefix: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = code[at + prefix.len()..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            out.extend(group_heads(group));
        } else {
            out.push(ident(rest));
        }
    }
    out
}

/// The file's code without comments and without its unit tests.
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text
        .find("#[cfg(test)]")
        .map_or(&text[..], |at| &text[..at]);
    text.lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The edges between the modules of the crate whose sources are in `src`, read from its
/// `lib.rs` (which must declare at least `min_modules` modules).
pub fn graph(src: &Path, min_modules: usize) -> BTreeMap<String, BTreeSet<String>> {
    let lib = code_of(&src.join("lib.rs"));
    let modules: BTreeSet<&str> = lib
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            l.strip_prefix("mod ")?.strip_suffix(';')
        })
        .collect();
    assert!(
        modules.len() >= min_modules,
        "read the modules of lib.rs: {modules:?}"
    );
    // Names `lib.rs` re-exports, and the module each comes from.
    let mut reexported: BTreeMap<&str, &str> = BTreeMap::new();
    for (at, _) in lib.match_indices("pub use ") {
        let rest = &lib[at + "pub use ".len()..];
        let module = ident(rest);
        let body = &rest[module.len()..rest.find(';').unwrap()];
        for name in body.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if modules.contains(module) && !name.is_empty() && name != "as" && name != "self" {
                reexported.insert(name, module);
            }
        }
    }
    let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for &module in &modules {
        let mut files = Vec::new();
        let dir = src.join(module);
        if dir.is_dir() {
            rs_files(&dir, &mut files);
        } else {
            files.push(src.join(format!("{module}.rs")));
        }
        let targets = edges.entry(module).or_default();
        for file in files {
            let code = code_of(&file);
            let top = file.parent() == Some(src) || file == dir.join("mod.rs");
            let mut names = heads(&code, "crate::");
            if top {
                names.extend(heads(&code, "super::"));
            }
            for name in names {
                let target = if modules.contains(name) {
                    modules.get(name).copied()
                } else {
                    reexported.get(name).copied()
                };
                if let Some(target) = target.filter(|t| *t != module) {
                    targets.insert(target);
                }
            }
        }
    }
    edges
        .into_iter()
        .map(|(m, to)| (m.to_string(), to.into_iter().map(str::to_string).collect()))
        .collect()
}

/// Every import circle in `edges`, each as "a -> b -> a".
pub fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let edges: BTreeMap<&str, BTreeSet<&str>> = edges
        .iter()
        .map(|(m, to)| (m.as_str(), to.iter().map(String::as_str).collect()))
        .collect();
    let modules: Vec<&str> = edges.keys().copied().collect();
    // Depth-first search; a module met again while on the path closes a circle.
    fn visit<'a>(
        m: &'a str,
        edges: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
        circles: &mut Vec<String>,
    ) {
        if let Some(at) = path.iter().position(|p| *p == m) {
            let mut circle = path[at..].to_vec();
            circle.push(m);
            circles.push(circle.join(" -> "));
            return;
        }
        if !done.insert(m) {
            return;
        }
        path.push(m);
        for next in edges.get(m).into_iter().flatten() {
            visit(next, edges, path, done, circles);
        }
        path.pop();
    }
    let mut circles = Vec::new();
    let mut done = BTreeSet::new();
    for &m in &modules {
        visit(m, &edges, &mut Vec::new(), &mut done, &mut circles);
    }
    circles
}
