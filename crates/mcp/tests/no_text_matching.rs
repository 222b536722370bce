//! Nothing above the engine reads engine text to decide something: a profile that branches on
//! a fact matches a typed value (`Note`, `Fallback`, an error code), never a note's or a
//! message's words (issue 22: `fallback` was computed by searching notes for "covered",
//! "blank", "instead"; tree notes were filtered on "token").
//!
//! This test reads every non-test source file of the crate and fails on `.contains("…")`
//! (and `starts_with` / `ends_with` / `find` with a string literal) outside the allow-list
//! below, where each entry says why it is not reading engine text.

use std::path::{Path, PathBuf};

/// `(file, what the line contains, why it is allowed)`.
const ALLOWED: &[(&str, &str, &str)] = &[(
    "kit/schema.rs",
    "contains(\"default\")",
    "reads the tool's own doc comment (our schema text) to keep a default it states",
)];

/// Literal-string searches that would be text matching.
const PATTERNS: &[&str] = &[
    ".contains(\"",
    ".starts_with(\"",
    ".ends_with(\"",
    ".find(\"",
    ".rfind(\"",
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file without its unit tests (everything from the first `#[cfg(test)]` on).
fn without_tests(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |at| &text[..at])
}

#[test]
fn no_profile_or_kit_code_matches_engine_text() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(files.len() > 10, "found the sources: {files:?}");
    let mut found = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in without_tests(&text).lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if !PATTERNS.iter().any(|p| code.contains(p)) {
                continue;
            }
            let allowed = ALLOWED
                .iter()
                .any(|(f, what, _)| rel == *f && code.contains(what));
            if !allowed {
                found.push(format!("{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "text matching above the engine (match a typed value instead, or allow-list it with a reason):\n{}",
        found.join("\n")
    );
}
