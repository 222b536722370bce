//! The rooms above the engine only word what the engine decided, and this test keeps it so.
//!
//! It reads every non-test source file of the crate (string literals and comments told apart by
//! a small lexer, `#[cfg(test)]` items left out) and fails on three kinds of line:
//!
//! - **text matching** anywhere in the crate: a profile that branches on a fact matches a typed
//!   value (`Note`, `Fallback`, an error code, a reason's variant), never a note's or a
//!   message's words. Every form counts: `.contains` / `starts_with` / `ends_with` / `find` /
//!   `strip_prefix` / `split` with a literal, `==` / `!=` against a literal, a `match` arm or
//!   `matches!` on literals, any of those methods on a note, message or `to_string()`, and
//!   regexes (`fallback` was once computed by searching notes for "covered", "blank",
//!   "instead"; tree notes were filtered on "token").
//! - **page script** in `profiles`: JavaScript source text belongs to the browser crate, and a
//!   profile asks the engine for what the script found.
//! - **platform code** in `profiles`: `std::fs`, `std::os`, `libc`, `cfg(unix)` /
//!   `cfg(windows)` / `target_os`; a profile hands files and platforms to the kit, the engine or
//!   the binary.
//!
//! Each exception is listed in [`ALLOWED`] with the reason it is not what the rule is about.
//! The scanner's own tests (at the end) prove that each rule bites on a small sample.

use std::path::{Path, PathBuf};

/// What a line breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    TextMatching,
    PageScript,
    Platform,
}

/// `(file, what the line contains, why it is allowed)`; `file` is relative to `src`.
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "kit/prompts/form.rs",
        "split_once('=')",
        "parses the agent's own fill_form values argument (key=value lines), not text the engine read",
    ),
    (
        "kit/resources.rs",
        "strip_prefix(\"screenshot/\")",
        "parses a URI of deskpilot's own resource scheme, as resources/read hands it over",
    ),
    (
        "kit/resources.rs",
        "strip_prefix(\"skill/\")",
        "parses a URI of deskpilot's own resource scheme",
    ),
    (
        "kit/resources.rs",
        "strip_prefix(\"window/\")",
        "parses a URI of deskpilot's own resource scheme",
    ),
    (
        "kit/resources.rs",
        "split_once('/')",
        "splits a window URI of deskpilot's own scheme into the id and tree|outline",
    ),
    (
        "kit/resources.rs",
        "strip_prefix(\"0x\")",
        "a window id in a URI of our own scheme is written in hex, as every tool prints it",
    ),
    (
        "kit/logging.rs",
        "target.split(\"::\")",
        "a tracing target is the module path of the code that logged: it says whose event it is",
    ),
    (
        "kit/logging.rs",
        "c == \"deskpilot\"",
        "a tracing target's crate name: only deskpilot's own crates are forwarded",
    ),
    (
        "kit/schema.rs",
        "contains(\"default\")",
        "reads the tool's own doc comment (our schema text) to keep a default it states",
    ),
    (
        "kit/schema.rs",
        "text.split(\"\\n\\n\")",
        "splits our own doc comment into paragraphs",
    ),
    (
        "kit/schema.rs",
        "strip_prefix(\"#/$defs/\")",
        "follows a `$ref` of the schema schemars generated for our own arguments",
    ),
    (
        "kit/schema.rs",
        "k == \"description\"",
        "a key of our own generated schema",
    ),
    (
        "kit/schema.rs",
        "== \"null\"",
        "a JSON-schema type name in our own generated schema",
    ),
    (
        "kit/schema.rs",
        "!= \"null\"",
        "a JSON-schema type name in our own generated schema",
    ),
    (
        "kit/schema.rs",
        ".strip_prefix(\"Default \")",
        "reads the tool's own doc comment (our schema text)",
    ),
    (
        "kit/args.rs",
        "strip_prefix(\"0x\")",
        "parses the agent's argument (a hex window id), not engine text",
    ),
    (
        "kit/args.rs",
        "strip_prefix(\"0X\")",
        "parses the agent's argument (a hex window id), not engine text",
    ),
    (
        "kit/args.rs",
        "path == \".\"",
        "the JSON path serde_path_to_error gives for the argument object",
    ),
    (
        "kit/args.rs",
        "serde.split(\" at line \")",
        "rewords serde's own parse error of the agent's arguments (no typed form exists)",
    ),
    (
        "kit/args.rs",
        "serde.strip_prefix(",
        "rewords serde's own parse error of the agent's arguments (no typed form exists)",
    ),
    (
        "kit/args.rs",
        "rest.split_once(",
        "rewords serde's own parse error of the agent's arguments (no typed form exists)",
    ),
    (
        "kit/args.rs",
        "valid.trim_start_matches(",
        "rewords serde's own parse error of the agent's arguments (no typed form exists)",
    ),
    (
        "kit/args.rs",
        "rest.split('`')",
        "rewords serde's own parse error of the agent's arguments (no typed form exists)",
    ),
    (
        "kit/args.rs",
        "got.strip_prefix(\"string \")",
        "rewords serde's own parse error of the agent's arguments (no typed form exists)",
    ),
    (
        "kit/args.rs",
        "unticked.strip_prefix(",
        "rewords serde's own parse error of the agent's arguments (no typed form exists)",
    ),
    (
        "kit/args.rs",
        "rest.trim_end_matches(",
        "rewords serde's own parse error of the agent's arguments (no typed form exists)",
    ),
    (
        "kit/schema.rs",
        "strip_suffix('.')",
        "reads the tool's own doc comment (our schema text)",
    ),
    (
        "profiles/deskpilot/browser.rs",
        "cursor.split_once(':')",
        "parses the agent's `cursor` argument (the `n:line` the tool itself handed out)",
    ),
    (
        "kit/filter.rs",
        "s.split(',')",
        "splits the deployment's tool list (an environment variable), not engine text",
    ),
    (
        "kit/shell.rs",
        "diagnose != \"diagnose\"",
        "compares the profile's own tool name for the diagnoser",
    ),
    (
        "kit/skills.rs",
        "verb == \"save\"",
        "the tool's own verb, chosen by the kit a line above",
    ),
    (
        "kit/pick.rs",
        "t[\"source\"] == \"ocr\"",
        "renders the pick's own context.json (written by the kit), whose source is a fixed token",
    ),
    (
        "profiles/deskpilot/browser.rs",
        "s == \"diff\"",
        "parses the agent's `snapshot` argument",
    ),
    (
        "profiles/deskpilot/elements.rs",
        "c.source == \"ocr\"",
        "the engine's candidate source is a fixed token (`&'static str`), not prose",
    ),
    (
        "profiles/dsh/elements.rs",
        "c.source == \"accessibility\"",
        "the engine's candidate source is a fixed token (`&'static str`), not prose",
    ),
    (
        "profiles/desktopos/cdp.rs",
        "url.trim() == \"about:blank\"",
        "reads the agent's own url argument: a blank start has no page load to wait past",
    ),
];

/// Methods that search, cut or compare text.
const TEXT_METHODS: &[&str] = &[
    ".contains(",
    ".starts_with(",
    ".ends_with(",
    ".find(",
    ".rfind(",
    ".strip_prefix(",
    ".strip_suffix(",
    ".split_once(",
    ".rsplit_once(",
    ".split(",
    ".rsplit(",
    ".matches(",
    ".match_indices(",
    ".trim_start_matches(",
    ".trim_end_matches(",
];

/// Words naming engine or backend text: a method of [`TEXT_METHODS`] (or a comparison) on one
/// of them reads prose, whatever its argument.
const TEXT_SOURCES: &[&str] = &[
    "note",
    "message",
    "to_string()",
    "stderr",
    "reason",
    "warning",
    "describe()",
];

/// Marks of JavaScript inside a string literal.
const SCRIPT_MARKS: &[&str] = &[
    "document.",
    "location.href",
    "querySelector",
    "() =>",
    "=> {",
    "function(",
    "function (",
    "instanceof",
    "JSON.stringify",
    "JSON.parse",
    "getBoundingClientRect",
    "addEventListener",
    ".innerText",
    ".textContent",
    "readyState",
];

/// Platform code a profile does not hold.
const PLATFORM_MARKS: &[&str] = &[
    "std::fs",
    "fs::",
    "std::os::",
    "libc",
    "cfg(unix)",
    "cfg(windows)",
    "cfg(not(unix))",
    "cfg(not(windows))",
    "target_os",
    "target_family",
];

/// A source file told apart: its code per line (comments blanked, literals kept) and its
/// string literals with the line each starts on.
struct Lexed {
    code: Vec<String>,
    literals: Vec<(usize, String)>,
}

/// Splits Rust source into code and string literals; comments become spaces, and
/// `#[cfg(test)]` items are left out (blanked) as a whole.
fn lex(text: &str) -> Lexed {
    let chars: Vec<char> = text.chars().collect();
    // `out` is the code with comments blanked; `masked` also blanks literal contents (to count
    // braces when skipping test items).
    let mut out = String::with_capacity(text.len());
    let mut masked = String::with_capacity(text.len());
    let mut literals = Vec::new();
    let mut line = 0;
    let mut i = 0;
    let push = |out: &mut String, masked: &mut String, c: char, literal: bool| {
        out.push(c);
        masked.push(if literal && c != '\n' { ' ' } else { c });
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                push(&mut out, &mut masked, ' ', false);
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    push(&mut out, &mut masked, ' ', false);
                    push(&mut out, &mut masked, ' ', false);
                    i += 2;
                    continue;
                }
                if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    push(&mut out, &mut masked, ' ', false);
                    push(&mut out, &mut masked, ' ', false);
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                    continue;
                }
                if chars[i] == '\n' {
                    line += 1;
                }
                let blank = if chars[i] == '\n' { '\n' } else { ' ' };
                push(&mut out, &mut masked, blank, false);
                i += 1;
            }
            continue;
        }
        // A raw string: r"…", r#"…"#, br"…".
        let raw_at = if c == 'r' {
            Some(i + 1)
        } else if c == 'b' && next == Some('r') {
            Some(i + 2)
        } else {
            None
        };
        let ident_before = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if let Some(mut j) = raw_at.filter(|_| !ident_before) {
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) == Some(&'"') {
                for &c in &chars[i..=j] {
                    push(&mut out, &mut masked, c, false);
                }
                let start = line;
                let mut body = String::new();
                let mut k = j + 1;
                while k < chars.len() {
                    if chars[k] == '"' && (0..hashes).all(|h| chars.get(k + 1 + h) == Some(&'#')) {
                        break;
                    }
                    if chars[k] == '\n' {
                        line += 1;
                    }
                    body.push(chars[k]);
                    push(&mut out, &mut masked, chars[k], true);
                    k += 1;
                }
                for &c in &chars[k..(k + 1 + hashes).min(chars.len())] {
                    push(&mut out, &mut masked, c, false);
                }
                literals.push((start, body));
                i = (k + 1 + hashes).min(chars.len());
                continue;
            }
        }
        if c == '"' {
            push(&mut out, &mut masked, c, false);
            let start = line;
            let mut body = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    body.push(chars[i]);
                    body.push(chars[i + 1]);
                    push(&mut out, &mut masked, chars[i], true);
                    if chars[i + 1] == '\n' {
                        line += 1;
                    }
                    push(&mut out, &mut masked, chars[i + 1], true);
                    i += 2;
                    continue;
                }
                if chars[i] == '\n' {
                    line += 1;
                }
                body.push(chars[i]);
                push(&mut out, &mut masked, chars[i], true);
                i += 1;
            }
            if i < chars.len() {
                push(&mut out, &mut masked, '"', false);
            }
            literals.push((start, body));
            i += 1;
            continue;
        }
        // A char literal ('"', '\'', '{'); a lifetime ('a) is left as code.
        if c == '\'' {
            let close = if next == Some('\\') {
                chars[i + 2..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map(|p| i + 2 + p)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            if let Some(end) = close {
                for (k, &c) in chars.iter().enumerate().take(end + 1).skip(i) {
                    push(&mut out, &mut masked, c, k != i && k != end);
                }
                i = end + 1;
                continue;
            }
        }
        if c == '\n' {
            line += 1;
        }
        push(&mut out, &mut masked, c, false);
        i += 1;
    }
    let (out, skipped) = without_test_items(&out, &masked);
    let literals = literals
        .into_iter()
        .filter(|(l, _)| !skipped.contains(l))
        .collect();
    Lexed {
        code: out.lines().map(str::to_string).collect(),
        literals,
    }
}

/// `code` with every `#[cfg(test)]` item blanked (found in `masked`, where literals cannot
/// hold braces), and the lines blanked.
fn without_test_items(code: &str, masked: &str) -> (String, Vec<usize>) {
    let mut out: Vec<char> = code.chars().collect();
    let m: Vec<char> = masked.chars().collect();
    let marker: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut skipped = Vec::new();
    let mut i = 0;
    while i + marker.len() <= m.len() {
        if m[i..i + marker.len()] != marker[..] {
            i += 1;
            continue;
        }
        // The item ends at its first `;` before any brace, or at the brace that closes its body.
        let mut j = i + marker.len();
        let mut depth = 0;
        while j < m.len() {
            match m[j] {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                ';' if depth == 0 => break,
                _ => {}
            }
            j += 1;
        }
        let end = j.min(m.len().saturating_sub(1));
        for c in &mut out[i..=end] {
            if *c != '\n' {
                *c = ' ';
            }
        }
        let first = m[..i].iter().filter(|&&c| c == '\n').count();
        let last = m[..=end].iter().filter(|&&c| c == '\n').count();
        skipped.extend(first..=last);
        i = end + 1;
    }
    (out.into_iter().collect(), skipped)
}

/// Whether `code` names engine or backend text (a note, a message, a `to_string()`).
fn prose(code: &str) -> bool {
    let lower = code.to_lowercase();
    TEXT_SOURCES.iter().any(|s| lower.contains(s))
}

/// What `matches!(…)` holds, up to its closing parenthesis.
fn macro_body(code: &str) -> Option<&str> {
    let at = code.find("matches!(")? + "matches!(".len();
    let mut depth = 1;
    for (i, c) in code[at..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&code[at..at + i]);
                }
            }
            _ => {}
        }
    }
    Some(&code[at..])
}

/// Whether a line of code matches text (see the module doc); `scrutinee` is the line of the
/// `match` whose arms the line may be.
fn text_matching(code: &str, scrutinee: &str) -> bool {
    let trimmed = code.trim_start();
    let on_literal = TEXT_METHODS
        .iter()
        .any(|m| code.contains(&format!("{m}\"")) || code.contains(&format!("{m}'")));
    let compared = ["== \"", "!= \"", "\" ==", "\" !="]
        .iter()
        .any(|p| code.contains(p));
    // A `match` on prose with literal arms (a `match` on the agent's own argument is parsing).
    let arm = trimmed.starts_with('"') && code.contains("=>") && prose(scrutinee);
    let macro_arm = macro_body(code).is_some_and(|b| b.contains('"'));
    let regex = code.contains("Regex") || code.contains("regex::");
    let on_prose = prose(code)
        && (TEXT_METHODS.iter().any(|m| code.contains(m))
            || code.contains("==")
            || code.contains("!="));
    on_literal || compared || arm || macro_arm || regex || on_prose
}

/// Whether a string literal is page script.
fn page_script(literal: &str) -> bool {
    SCRIPT_MARKS.iter().any(|m| literal.contains(m))
}

/// Whether a line of code is platform code.
fn platform(code: &str) -> bool {
    PLATFORM_MARKS.iter().any(|m| code.contains(m))
}

/// Every finding of one file: `(line number, rule, the line's text)`; `in_profiles` turns on
/// the page-script and platform rules.
fn scan(text: &str, in_profiles: bool) -> Vec<(usize, Rule, String)> {
    let lexed = lex(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut scrutinee = "";
    for (n, code) in lexed.code.iter().enumerate() {
        let line = lines.get(n).copied().unwrap_or_default().trim().to_string();
        if let Some(at) = code.find("match ") {
            scrutinee = &code[at..];
        }
        if text_matching(code, scrutinee) {
            found.push((n + 1, Rule::TextMatching, line.clone()));
        }
        if in_profiles && platform(code) {
            found.push((n + 1, Rule::Platform, line));
        }
    }
    if in_profiles {
        for (n, literal) in &lexed.literals {
            if page_script(literal) {
                let line = lines.get(*n).copied().unwrap_or_default().trim();
                found.push((
                    n + 1,
                    Rule::PageScript,
                    format!("{line} (literal: {literal})"),
                ));
            }
        }
    }
    found
}

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

#[test]
fn profiles_and_kit_only_word_what_the_engine_decided() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(files.len() > 10, "found the sources: {files:?}");
    let mut found = Vec::new();
    let mut used = vec![false; ALLOWED.len()];
    for file in &files {
        let rel = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(file).unwrap();
        for (n, rule, line) in scan(&text, rel.starts_with("profiles/")) {
            let mut covered = false;
            for (i, (f, what, _)) in ALLOWED.iter().enumerate() {
                if rel == *f && line.contains(what) {
                    used[i] = true;
                    covered = true;
                }
            }
            if !covered {
                found.push(format!("{rel}:{n}: {rule:?}: {line}"));
            }
        }
    }
    // An allowance nothing needs any more is taken out, so it cannot cover a new line later.
    let stale: Vec<String> = ALLOWED
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
        .map(|((f, what, _), _)| format!("{f}: {what}"))
        .collect();
    assert!(
        stale.is_empty(),
        "allow-list entries that match nothing:\n{}",
        stale.join("\n")
    );
    assert!(
        found.is_empty(),
        "above the engine, match a typed value instead of text; page scripts belong to the \
         browser crate and files and platforms to the kit, engine or binary (or allow-list the \
         line with a reason):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_allowed_exception_says_why() {
    for (file, what, why) in ALLOWED {
        assert!(!file.is_empty() && !what.is_empty(), "{file}: {what}");
        assert!(why.len() > 20, "{file}: {what} needs a reason");
    }
}

#[test]
fn the_scanner_bites_on_text_matching_in_every_form() {
    let rules = |text: &str| -> Vec<Rule> { scan(text, false).into_iter().map(|f| f.1).collect() };
    for bad in [
        "if note.to_string().contains(\"covered\") {}",
        "let blank = text.starts_with(\"blank\");",
        "if e.to_string() == \"window not found\" {}",
        "if \"instead\" == n.text {}",
        "let parts: Vec<_> = note.split(';').collect();",
        "if notes.iter().any(|n| n.to_string().contains(&word)) {}",
        "let hit = matches!(msg.as_str(), \"gone\" | \"stale\");",
        "let re = Regex::new(\"cover(ed)?\");",
        "let tail = message.strip_suffix(&suffix);",
        "match e.to_string().as_str() {\n    \"gone\" => 1,\n    _ => 0,\n}",
    ] {
        assert_eq!(rules(bad), [Rule::TextMatching], "{bad}");
    }
    for fine in [
        "if matches!(n, Note::Covered { .. }) {}",
        "text.push_str(\"Note: the window is covered\");",
        "let s = format!(\"{} == {}\", a, b);",
        "// if note.contains(\"covered\") {}",
        "/* e.to_string() == \"x\" */",
        "let q = '\"';",
        "match a.kind.as_str() {\n    \"stable\" => 1,\n    _ => 0,\n}",
        "let x = if matches!(s.reason, Reason::Host(_)) { \"exited\" } else { \"running\" };",
        "#[cfg(test)]\nmod tests {\n    fn t() { assert!(e.to_string().contains(\"x\")); }\n}",
    ] {
        assert_eq!(rules(fine), [], "{fine}");
    }
}

#[test]
fn the_scanner_bites_on_page_script_and_platform_code_in_profiles() {
    let rules = |text: &str, profiles: bool| -> Vec<Rule> {
        scan(text, profiles).into_iter().map(|f| f.1).collect()
    };
    let script = "let js = \"document.querySelector('a').click()\";";
    assert_eq!(rules(script, true), [Rule::PageScript]);
    assert_eq!(rules(script, false), []);
    let raw = "let js = r#\"\n  (() => {\n    return 1;\n  })()\n\"#;";
    assert_eq!(rules(raw, true), [Rule::PageScript]);
    for bad in [
        "std::fs::write(&path, bytes)?;",
        "use std::os::unix::fs::MetadataExt;",
        "let uid = unsafe { libc::getuid() };",
        "#[cfg(unix)]\nfn f() {}",
        "#[cfg(target_os = \"linux\")]\nfn f() {}",
    ] {
        assert_eq!(rules(bad, true), [Rule::Platform], "{bad}");
        assert_eq!(rules(bad, false), [], "{bad}");
    }
    assert_eq!(rules("let x = \"plain words, no script\";", true), []);
}
