//! Every `.rs` file of the workspace starts with a `//!` line saying what it is for.
//!
//! The test walks the whole workspace from its root (`CARGO_MANIFEST_DIR/../..`): every
//! crate's `src`, `tests`, `benches` and `examples`, `build.rs` files, and anything under
//! `fixtures/`, `tests/` or `scripts/`. It skips `target/` and hidden directories (`.git`,
//! `.ci`, …) and `node_modules/`, and lists every offender at once, so one run names them all.
//! It deliberately checks only the first line: what the doc says is for review to judge.

use std::path::{Path, PathBuf};

/// Directories never walked: build output, dependencies, hidden directories.
fn skipped(name: &str) -> bool {
    name == "target" || name == "node_modules" || name.starts_with('.')
}

/// Every `.rs` file under `dir`, sorted for a stable report.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry
            .file_type()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if kind.is_dir() {
            if !skipped(&name) {
                rust_files(&path, out);
            }
        } else if kind.is_file() && name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// Why `text` (a whole file) fails the rule, if it does.
fn problem(text: &str) -> Option<&'static str> {
    let first = text.strip_prefix('\u{feff}').unwrap_or(text).lines().next();
    match first {
        None => Some("the file is empty"),
        Some(line) => match line.strip_prefix("//!") {
            None => Some("the first line is not a `//!` doc line"),
            Some(rest) if rest.trim().is_empty() => Some("the first `//!` line says nothing"),
            Some(_) => None,
        },
    }
}

#[test]
fn every_rust_file_starts_with_a_module_doc_line() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root
        .canonicalize()
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()));
    assert!(
        root.join("Cargo.toml").is_file() && root.join("crates").is_dir(),
        "{} is not the workspace root",
        root.display()
    );
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    // A walk that found almost nothing looked in the wrong place.
    assert!(
        files.len() > 50 && files.iter().any(|f| f.ends_with("crates/types/src/lib.rs")),
        "only {} .rs files under {}",
        files.len(),
        root.display()
    );
    let offenders: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let text =
                std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let why = problem(&text)?;
            let shown = f.strip_prefix(&root).unwrap_or(f);
            Some(format!("  {}: {why}", shown.display()))
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "{} of {} .rs files lack their `//!` first line (what the module does, what it does not, its invariants):\n{}",
        offenders.len(),
        files.len(),
        offenders.join("\n")
    );
}

#[test]
fn the_rule_reads_only_the_first_line() {
    assert_eq!(problem("//! Geometry.\nuse std::fmt;\n"), None);
    assert_eq!(problem("\u{feff}//! With a byte-order mark.\n"), None);
    assert!(problem("").is_some());
    assert!(problem("//!\n//! Late.\n").is_some());
    assert!(problem("/// An item doc.\nfn f() {}\n").is_some());
    assert!(problem("\n//! After a blank line.\n").is_some());
    assert!(problem("#![cfg(unix)]\n//! After an attribute.\n").is_some());
}
