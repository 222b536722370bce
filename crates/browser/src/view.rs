//! A page's snapshot as the agent asks to see it: the text shaping of a rendered snapshot
//! ([`render`](crate::snapshot::render)). A view can be scoped to the subtree of one ref, cut below a depth,
//! projected to the lines containing a query (with their ancestors), shown as only what changed
//! since an earlier snapshot of the page, and cut into parts of whole lines that a cursor
//! continues. The page's long prose is shortened in a whole-page view.
//!
//! [`Snapshots`] keeps a page's last [`KEPT`] rendered snapshots, so that a diff and a cursor
//! read the snapshot they name; the session decides which page and when to render, this module
//! only shapes what it kept. Nothing here talks to the browser.

use std::collections::{HashMap, VecDeque};

use crate::snapshot::Rendered;

/// The characters of page text (prose) a whole-page view shows per text.
pub const PROSE_CHARS: usize = 200;

/// How many snapshots of a page are kept for `since` and `cursor`.
pub const KEPT: usize = 8;

/// Lines a view shows unless told otherwise.
pub const LINES: usize = 2000;

/// What part of a page's snapshot to show.
#[derive(Debug, Clone)]
pub struct View {
    /// Only the subtree of this ref ("" for the whole page).
    pub scope: String,
    /// Levels shown below the top (`None`: all).
    pub depth: Option<usize>,
    /// Only lines containing this, with their ancestors ("" for all).
    pub query: String,
    pub max_lines: usize,
    /// At most this many bytes of lines (`None`: no byte budget); whole lines only.
    pub max_bytes: Option<usize>,
    /// Only what changed since this snapshot of the page (with the ancestors that place it).
    pub since: Option<u64>,
    /// Continue a cut view: the snapshot and the line it stopped at (the other fields as
    /// they were for the first part).
    pub cursor: Option<(u64, usize)>,
}

impl Default for View {
    /// The whole page, [`LINES`] lines at most.
    fn default() -> View {
        View {
            scope: String::new(),
            depth: None,
            query: String::new(),
            max_lines: LINES,
            max_bytes: None,
            since: None,
            cursor: None,
        }
    }
}

/// A view of one snapshot, as shown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shown {
    pub text: String,
    /// The snapshot shown.
    pub snapshot: u64,
    pub lines: usize,
    /// Lines of the view after this part (cut by `max_lines` or `max_bytes`).
    pub omitted: usize,
    /// Where the next part starts, when the view was cut: `cursor` for the next call.
    pub next: Option<(u64, usize)>,
    /// The view shows only what changed since this snapshot; `gone` of its lines went.
    pub since: Option<u64>,
    pub gone: usize,
    /// Why a view asked as changes shows the whole page instead.
    pub whole_because: Option<String>,
    /// Page texts cut to [`PROSE_CHARS`] characters in this view (a scope or a query shows
    /// them whole).
    pub shortened: usize,
}

/// Why a view cannot be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The scope names a ref that is on no line of the snapshot.
    NoScope(String),
    /// The cursor names a snapshot that is no longer the page's latest.
    NotLatest(u64),
}

/// A page's latest rendered snapshots, numbered from 1, the last [`KEPT`] of them kept.
#[derive(Debug, Clone, Default)]
pub struct Snapshots {
    taken: u64,
    kept: VecDeque<(u64, Rendered)>,
}

impl Snapshots {
    /// The number of the latest snapshot (0: none yet).
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// The text of snapshot `n`, while it is kept.
    fn text(&self, n: u64) -> Option<&str> {
        self.kept
            .iter()
            .find(|(m, _)| *m == n)
            .map(|(_, r)| r.text.as_str())
    }

    /// Keeps `r` as the page's newest snapshot and shows it as `view` asks (its `cursor`
    /// aside: a new snapshot is shown from its first line). The snapshot `since` names is
    /// looked up before `r` takes a place.
    pub fn take(&mut self, r: Rendered, view: &View) -> Result<Shown, Refused> {
        let before = view.since.and_then(|s| self.text(s)).map(str::to_string);
        if self.kept.len() == KEPT {
            self.kept.pop_front();
        }
        self.taken += 1;
        self.kept.push_back((self.taken, r));
        let latest = self.kept.back().map_or("", |(_, r)| r.text.as_str());
        show(latest, self.taken, 0, before.as_deref(), view)
    }

    /// The next part of a cut view: `view.cursor` names the snapshot, which must still be
    /// the latest, and the line to go on from.
    pub fn resume(&self, view: &View) -> Result<Shown, Refused> {
        let (n, from) = view.cursor.unwrap_or((self.taken, 0));
        let latest = self
            .kept
            .back()
            .filter(|(m, _)| *m == n && self.taken == n)
            .ok_or(Refused::NotLatest(n))?;
        let before = view.since.and_then(|s| self.text(s));
        show(&latest.1.text, n, from, before, view)
    }
}

/// Snapshot `n` (`full`, its whole text) as `view` asks, from line `from`; `before` is the
/// text of the snapshot `view.since` names, when it is kept.
fn show(
    full: &str,
    n: u64,
    from: usize,
    before: Option<&str>,
    view: &View,
) -> Result<Shown, Refused> {
    let (whole, shortened) = shaped(full, view)?;
    let mut shown = Shown {
        snapshot: n,
        shortened,
        ..Shown::default()
    };
    let viewed = match (view.since, before) {
        (None, _) => whole,
        (Some(s), None) => {
            shown.whole_because = Some(format!(
                "snapshot {s} of this page is not kept (the last {KEPT} are)"
            ));
            whole
        }
        (Some(s), Some(before)) => {
            let before = shaped(before, view).unwrap_or_default().0;
            match changes(&before, &whole) {
                (Some(diff), gone) if diff.len() < whole.len() => {
                    (shown.since, shown.gone) = (Some(s), gone);
                    diff
                }
                (None, gone) => {
                    (shown.since, shown.gone) = (Some(s), gone);
                    String::new()
                }
                _ => {
                    shown.whole_because =
                        Some("the changes would be longer than the page".to_string());
                    whole
                }
            }
        }
    };
    let (text, next) = page(
        &viewed,
        from,
        view.max_lines.max(1),
        view.max_bytes.unwrap_or(usize::MAX),
    );
    shown.lines = text.lines().count();
    shown.omitted = viewed.lines().count().saturating_sub(from + shown.lines);
    shown.next = next.map(|line| (n, line));
    shown.text = text;
    Ok(shown)
}

/// A snapshot's text scoped, cut by depth and projected as `view` asks, with the whole
/// page's long prose shortened (a scope or a query shows it whole); and how many texts were
/// shortened.
fn shaped(text: &str, view: &View) -> Result<(String, usize), Refused> {
    let root = view.scope.trim();
    let scoped =
        scope(text, Some(root), view.depth).ok_or_else(|| Refused::NoScope(root.to_string()))?;
    let projected = project(&scoped, &view.query).unwrap_or_else(|| {
        format!(
            "(nothing matches {:?}; every ref of the page is still valid)\n",
            view.query
        )
    });
    Ok(if root.is_empty() && view.query.trim().is_empty() {
        shorten(&projected, PROSE_CHARS)
    } else {
        (projected, 0)
    })
}

fn depth_of(line: &str) -> usize {
    (line.len() - line.trim_start().len()) / 2
}

/// The part of `text` under the line carrying `[ref=…]` (that line and its descendants,
/// moved to depth 0) when `root` is given, cut below `depth` levels when given (a line whose
/// children were cut ends in ` …`). `None` when `root` is on no line.
fn scope(text: &str, root: Option<&str>, depth: Option<usize>) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, end, base) = match root.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => {
            let tag = format!("[ref={r}]");
            let start = lines.iter().position(|l| l.contains(&tag))?;
            let base = depth_of(lines[start]);
            let end = lines[start + 1..]
                .iter()
                .position(|l| depth_of(l) <= base)
                .map_or(lines.len(), |n| start + 1 + n);
            (start, end, base)
        }
        None => (0, lines.len(), 0),
    };
    let mut out = String::new();
    for i in start..end {
        let d = depth_of(lines[i]) - base;
        if depth.is_some_and(|max| d >= max) {
            continue;
        }
        out.push_str(&lines[i][base * 2..]);
        let cut_below = depth.is_some_and(|max| d + 1 == max)
            && lines
                .get(i + 1)
                .is_some_and(|n| i + 1 < end && depth_of(n) > depth_of(lines[i]));
        if cut_below {
            out.push_str(" …");
        }
        out.push('\n');
    }
    Some(out)
}

/// `text` with every page text longer than `max_chars` characters (a `text: "…"` line: prose,
/// never a control's name) cut at a word boundary before it and ended with `…`; and how many
/// were cut.
fn shorten(text: &str, max_chars: usize) -> (String, usize) {
    let mut cut = 0;
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let prose = body
            .strip_prefix("- text: \"")
            .and_then(|t| t.strip_suffix('"'));
        match prose {
            Some(p) if p.chars().count() > max_chars => {
                let end = p.char_indices().nth(max_chars).map_or(p.len(), |(i, _)| i);
                let head = &p[..end];
                let head = head.rfind(' ').map_or(head, |space| &head[..space]);
                out.push_str(&format!("{indent}- text: \"{}…\"\n", head.trim_end()));
                cut += 1;
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    (out, cut)
}

/// The lines of `text` that contain `query` (case-insensitive), with their ancestors (by
/// indentation) so each match keeps its place; `None` when nothing matches.
fn project(text: &str, query: &str) -> Option<String> {
    let q = query.trim().to_lowercase();
    if q.is_empty() {
        return Some(text.to_string());
    }
    with_ancestors(text, |l| l.to_lowercase().contains(&q))
}

/// The lines of `text` that `pick` chooses, each with its ancestors (by indentation);
/// `None` when it chooses none.
fn with_ancestors(text: &str, mut pick: impl FnMut(&str) -> bool) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let depth = depth_of;
    let mut keep = vec![false; lines.len()];
    let mut stack: Vec<usize> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        while stack.last().is_some_and(|&j| depth(lines[j]) >= depth(l)) {
            stack.pop();
        }
        if pick(l) {
            keep[i] = true;
            for &a in &stack {
                keep[a] = true;
            }
        }
        stack.push(i);
    }
    let kept: Vec<&str> = lines
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(l, _)| *l)
        .collect();
    (!kept.is_empty()).then(|| kept.join("\n") + "\n")
}

/// What changed from snapshot text `old` to `new`: the lines of `new` that `old` does not
/// have (new, or changed in name, value, state or place), each with its ancestors so it can
/// be placed, and how many lines of `old` are gone. Lines are compared whole, counted (a line
/// twice in `new` and once in `old` is new once).
fn changes(old: &str, new: &str) -> (Option<String>, usize) {
    let mut before: HashMap<&str, usize> = HashMap::new();
    for l in old.lines() {
        *before.entry(l).or_default() += 1;
    }
    let diff = with_ancestors(new, |l| match before.get_mut(l) {
        Some(n) if *n > 0 => {
            *n -= 1;
            false
        }
        _ => true,
    });
    (diff, before.values().sum())
}

/// One page of `text`: whole lines from line `from`, at most `max_lines` of them and at most
/// `max_bytes` bytes (at least one line, so a page always moves on), and the line the next page
/// starts at when something is left.
fn page(text: &str, from: usize, max_lines: usize, max_bytes: usize) -> (String, Option<usize>) {
    let mut out = String::new();
    for (shown, l) in text.lines().skip(from).enumerate() {
        if shown >= max_lines.max(1) || (shown > 0 && out.len() + l.len() + 1 > max_bytes) {
            return (out, Some(from + shown));
        }
        out.push_str(l);
        out.push('\n');
    }
    (out, None)
}

#[cfg(test)]
mod paging_tests {
    use super::*;

    #[test]
    fn changes_keep_their_ancestors_and_count_what_went() {
        let old = "- form\n  - textbox \"Name\" [ref=e1]\n  - textbox \"City\" [ref=e2]\n- link \"Home\" [ref=e3]\n";
        let new = "- form\n  - textbox \"Name\" value=\"Ada\" [ref=e1]\n  - textbox \"City\" [ref=e2]\n- link \"Home\" [ref=e3]\n";
        let (diff, gone) = changes(old, new);
        assert_eq!(
            diff.as_deref(),
            Some("- form\n  - textbox \"Name\" value=\"Ada\" [ref=e1]\n")
        );
        assert_eq!(gone, 1, "the old line of the changed field");
        assert_eq!(changes(new, new), (None, 0));
    }

    #[test]
    fn pages_cut_between_lines_and_lose_none() {
        let text: String = (0..10)
            .map(|i| format!("- link \"L{i}\" [ref=e{i}]\n"))
            .collect();
        let mut from = 0;
        let mut seen = String::new();
        let mut pages = 0;
        loop {
            let (part, next) = page(&text, from, usize::MAX, 60);
            assert!(part.len() <= 60, "{part}");
            seen.push_str(&part);
            pages += 1;
            match next {
                Some(n) => from = n,
                None => break,
            }
        }
        assert_eq!(seen, text, "every line once, in order");
        assert!(pages > 3);
        // One line longer than the budget still goes out whole.
        assert_eq!(
            page(&text, 0, 5, 3),
            ("- link \"L0\" [ref=e0]\n".into(), Some(1))
        );
    }
}

#[cfg(test)]
mod shorten_tests {
    #[test]
    fn long_prose_is_cut_at_a_word_and_said() {
        let long = "word ".repeat(60);
        let text = format!(
            "- main\n  - text: \"{}\"\n  - text: \"short\"\n  - link \"{}\" [ref=e1]\n",
            long.trim(),
            long.trim()
        );
        let (out, cut) = super::shorten(&text, 20);
        assert_eq!(cut, 1);
        assert!(
            out.contains("  - text: \"word word word word…\"\n"),
            "{out}"
        );
        assert!(out.contains("- text: \"short\""), "{out}");
        // A control's name is never cut.
        assert!(
            out.contains(&format!("link \"{}\" [ref=e1]", long.trim())),
            "{out}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(text: &str) -> Rendered {
        Rendered {
            text: text.to_string(),
            ..Rendered::default()
        }
    }

    #[test]
    fn a_query_keeps_matches_and_their_ancestors() {
        let text = "- RootWebArea \"Fixture\"\n  - button \"Submit\" [ref=e1]\n  - textbox \"名前\" [ref=e2]\n  - Iframe\n    - link \"Next page\" [ref=e3]\n";
        assert_eq!(
            project(text, "next").unwrap(),
            "- RootWebArea \"Fixture\"\n  - Iframe\n    - link \"Next page\" [ref=e3]\n"
        );
        assert_eq!(project(text, "nothing like it"), None);
    }

    #[test]
    fn scoping_by_ref_and_depth_keeps_the_subtree() {
        let text = "- main\n  - form \"Sign in\" [ref=e1]\n    - textbox \"Name\" [ref=e12]\n    - group \"More\"\n      - checkbox \"Stay\" [ref=e13]\n  - link \"Help\" [ref=e2]\n";
        assert_eq!(
            scope(text, Some("e1"), None).unwrap(),
            "- form \"Sign in\" [ref=e1]\n  - textbox \"Name\" [ref=e12]\n  - group \"More\"\n    - checkbox \"Stay\" [ref=e13]\n"
        );
        assert_eq!(
            scope(text, Some("e1"), Some(2)).unwrap(),
            "- form \"Sign in\" [ref=e1]\n  - textbox \"Name\" [ref=e12]\n  - group \"More\" …\n"
        );
        assert_eq!(scope(text, None, Some(1)).unwrap(), "- main …\n");
        assert_eq!(scope(text, Some("e9"), None), None);
        // "e1" is not a prefix match of "e12".
        assert_eq!(
            scope(text, Some("e12"), None).unwrap(),
            "- textbox \"Name\" [ref=e12]\n"
        );
    }

    #[test]
    fn a_view_is_cut_and_continued_and_a_diff_names_its_snapshot() {
        let mut kept = Snapshots::default();
        let first = "- main\n  - textbox \"Name\" [ref=e1]\n  - link \"Help\" [ref=e2]\n";
        let view = View {
            max_lines: 2,
            ..View::default()
        };
        let shown = kept.take(rendered(first), &view).unwrap();
        assert_eq!(
            (shown.snapshot, shown.lines, shown.omitted, shown.next),
            (1, 2, 1, Some((1, 2)))
        );
        let rest = kept
            .resume(&View {
                cursor: shown.next,
                ..view.clone()
            })
            .unwrap();
        assert_eq!(rest.text, "  - link \"Help\" [ref=e2]\n");
        assert_eq!(rest.next, None);
        let second = first.replace("\"Name\"", "\"Name\" value=\"Ada\"");
        let diff = kept
            .take(
                rendered(&second),
                &View {
                    since: Some(1),
                    ..View::default()
                },
            )
            .unwrap();
        assert_eq!(
            (diff.since, diff.gone, diff.text.as_str()),
            (
                Some(1),
                1,
                "- main\n  - textbox \"Name\" value=\"Ada\" [ref=e1]\n"
            )
        );
        // The first snapshot's cursor no longer holds; a scope on no line is refused.
        assert_eq!(
            kept.resume(&View {
                cursor: Some((1, 2)),
                ..View::default()
            }),
            Err(Refused::NotLatest(1))
        );
        assert_eq!(
            kept.resume(&View {
                scope: "e9".into(),
                ..View::default()
            }),
            Err(Refused::NoScope("e9".into()))
        );
    }

    #[test]
    fn a_diff_against_a_snapshot_no_longer_kept_shows_the_whole_page() {
        let mut kept = Snapshots::default();
        for n in 0..=KEPT {
            kept.take(
                rendered(&format!("- link \"L{n}\" [ref=e1]\n")),
                &View::default(),
            )
            .unwrap();
        }
        let view = View {
            since: Some(1),
            ..View::default()
        };
        let shown = kept
            .take(rendered("- link \"New\" [ref=e1]\n"), &view)
            .unwrap();
        assert_eq!(shown.since, None);
        assert!(shown.whole_because.unwrap().contains("is not kept"));
        assert_eq!(shown.text, "- link \"New\" [ref=e1]\n");
    }
}
