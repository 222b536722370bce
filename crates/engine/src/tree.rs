//! `get_window_state`: a window's indexed element tree (and its screenshot) as one snapshot.
//!
//! Every snapshot gets an id; its elements are numbered in depth-first order and each has a
//! token `s<snapshot>:<index>`. Only the newest snapshot of a window resolves: an index or
//! token from an older one is `STALE_ELEMENT` ("take get_window_state again"), never
//! silently re-resolved against a tree that may have changed.
//!
//! Tree text is one line per element, tab-indented by depth:
//! `<index> <Role> "<name>" value="…" desc="…" <flags> actions=[…]`, budgeted by
//! `max_elements`, `max_depth` and `max_chars`; `query` keeps matches and their ancestors
//! with their original indexes. Truncation is always stated.

use std::time::{Duration, Instant};

use deskpilot_backend::TreeLimits;
use deskpilot_types::WindowInfo;

use crate::ids::IdKind;
use crate::limits::TREE_TIMEOUT_MS;
use crate::note::{NearlyEmpty, Note};
pub use crate::snapshots::{Element, ElementRef, parse_token};
use crate::window::WindowRef;
use crate::{
    capture::{CaptureTarget, Screenshot, ScreenshotRequest},
    error::Error,
    session::Session,
};

/// Default and largest tree read time.
pub const TREE_TIMEOUT: Duration = Duration::from_secs(5);

/// What `get_window_state` asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeRequest {
    pub window: WindowRef,
    pub include_screenshot: bool,
    pub max_elements: usize,
    pub max_depth: u32,
    pub max_chars: usize,
    /// Keep only elements whose role, name, value or description contains this (and their ancestors).
    pub query: Option<String>,
    pub max_width: Option<u32>,
    pub timeout: Duration,
    /// Read the whole tree from the app again instead of reusing an unchanged earlier read.
    pub fresh: bool,
}

impl TreeRequest {
    /// How long the tree read may take: `timeout` within [`TREE_TIMEOUT_MS`] (the one rule;
    /// a profile's deadline for the call is built on it).
    pub fn read_timeout(&self) -> Duration {
        crate::limits::clamp_duration(TREE_TIMEOUT_MS, self.timeout)
    }

    pub fn new(window: WindowRef) -> Self {
        TreeRequest {
            window,
            include_screenshot: true,
            max_elements: 600,
            max_depth: 64,
            max_chars: 40_000,
            query: None,
            max_width: None,
            timeout: TREE_TIMEOUT,
            fresh: false,
        }
    }
}

/// What a snapshot means for the tokens an agent already holds for its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tokens {
    /// A new snapshot id: tokens of earlier snapshots of the window are stale.
    New,
    /// The window's structure is unchanged: same id, its tokens still work.
    Kept,
    /// No fresh tree could be read; this is the previous snapshot, whose tokens stay valid.
    Previous,
}

/// A point-in-time observation of one window.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub id: u64,
    pub window: WindowInfo,
    pub elements: Vec<Element>,
    /// The tree text shown to the model.
    pub text: String,
    /// How many elements the text shows.
    pub shown: usize,
    pub source: String,
    pub complete: bool,
    /// Whether the tokens of an earlier read of this window still work.
    pub tokens: Tokens,
    pub notes: Vec<Note>,
    pub screenshot: Option<Screenshot>,
    pub tree_time: Duration,
}

fn quote(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max)
        .map(|c| match c {
            '\n' => '⏎',
            '\t' | '\r' => ' ',
            c => c,
        })
        .collect();
    if s.chars().count() > max {
        out.push('…');
    }
    out.replace('"', "\\\"")
}

/// One line of tree text (without indentation).
pub fn line(e: &Element) -> String {
    let mut l = format!("{} {} \"{}\"", e.index, e.role, quote(&e.name, 120));
    if let Some(v) = e.value.as_deref().filter(|v| !v.is_empty() && *v != e.name) {
        l.push_str(&format!(" value=\"{}\"", quote(v, 80)));
    }
    if !e.description.is_empty()
        && e.description != e.name
        && e.value.as_deref() != Some(e.description.as_str())
    {
        l.push_str(&format!(" desc=\"{}\"", quote(&e.description, 80)));
    }
    let flags = [
        (!e.enabled, "disabled"),
        (e.focusable, "focusable"),
        (e.focused, "FOCUSED"),
        (e.selected, "selected"),
        (e.checked, "checked"),
        (e.expanded, "expanded"),
        (e.editable, "editable"),
        // Its text, length and mask are never shown: the flag says why there is no value.
        (e.password, "password"),
        (!e.onscreen && e.bounds.is_some(), "offscreen"),
    ];
    for (on, flag) in flags {
        if on {
            l.push(' ');
            l.push_str(flag);
        }
    }
    if !e.actions.is_empty() {
        l.push_str(&format!(" actions=[{}]", e.actions.join(",")));
    }
    l
}

fn matches(e: &Element, needle: &str) -> bool {
    let n = needle.to_lowercase();
    e.name.to_lowercase().contains(&n)
        || e.value
            .as_deref()
            .is_some_and(|v| v.to_lowercase().contains(&n))
        || e.description.to_lowercase().contains(&n)
        || e.role.as_str().to_lowercase() == n
}

/// The tree text and how many elements it shows.
fn render(
    elements: &[Element],
    query: Option<&str>,
    max_chars: usize,
) -> (String, usize, Vec<Note>) {
    let mut keep = vec![query.is_none(); elements.len()];
    if let Some(q) = query {
        for e in elements.iter().filter(|e| matches(e, q)) {
            let mut at = Some(e.index);
            while let Some(i) = at {
                if keep[i] {
                    break;
                }
                keep[i] = true;
                at = elements[i].parent;
            }
        }
    }
    let mut text = String::new();
    let mut shown = 0;
    let mut notes = Vec::new();
    let candidates = keep.iter().filter(|k| **k).count();
    for e in elements.iter().filter(|e| keep[e.index]) {
        let l = format!("{}{}\n", "\t".repeat(e.depth as usize), line(e));
        if text.len() + l.len() > max_chars {
            notes.push(Note::TextTruncated {
                max_chars,
                shown,
                candidates,
            });
            break;
        }
        text.push_str(&l);
        shown += 1;
    }
    if let Some(q) = query {
        notes.push(Note::Query {
            query: q.to_string(),
            matching: elements.iter().filter(|e| matches(e, q)).count(),
            candidates,
            total: elements.len(),
        });
    }
    (text, shown, notes)
}

impl Session {
    /// Reads a window's tree (and screenshot) and records it as a new snapshot.
    pub fn window_state(&self, request: &TreeRequest) -> Result<Snapshot, Error> {
        if request.max_elements == 0 || request.max_elements > 10_000 {
            return Err(Error::InvalidArgument {
                message: format!("max_elements {} must be 1..=10000", request.max_elements),
            });
        }
        let mut notes = Vec::new();
        let window = self.resolve_window_noted(&request.window, &mut notes)?;
        let screenshot = if request.include_screenshot {
            match self.screenshot(&ScreenshotRequest {
                target: CaptureTarget::Window(window.id),
                max_width: request.max_width,
                format: None,
            }) {
                Ok(s) => Some(s),
                Err(e) => {
                    notes.push(Note::NoScreenshot {
                        code: e.code(),
                        error: e.to_string(),
                    });
                    None
                }
            }
        } else {
            None
        };
        let started = Instant::now();
        let limits = TreeLimits {
            max_elements: request.max_elements,
            max_depth: request.max_depth,
            timeout: request.read_timeout(),
            fresh: request.fresh,
        };
        let raw = match self.desktop().accessibility.tree(&window, &limits) {
            Ok(t) => t,
            Err(e) => {
                // What is known: the last tree of this window, plainly marked as such. Its
                // tokens stay valid (no newer snapshot of the window exists).
                let previous = self.snapshots_now().newest_of(window.id);
                if let Some((id, elements, age)) = previous {
                    notes.push(Note::PreviousTree {
                        error: e.to_string(),
                        age,
                        snapshot: id,
                    });
                    let (text, shown, render_notes) =
                        render(&elements, request.query.as_deref(), request.max_chars);
                    notes.extend(render_notes);
                    return Ok(Snapshot {
                        id,
                        window,
                        elements,
                        text,
                        shown,
                        source: "previous-snapshot".to_string(),
                        complete: false,
                        tokens: Tokens::Previous,
                        notes,
                        screenshot,
                        tree_time: started.elapsed(),
                    });
                }
                notes.push(Note::NoTree {
                    error: e.to_string(),
                });
                deskpilot_backend::RawTree {
                    source: "none".to_string(),
                    ..Default::default()
                }
            }
        };
        let tree_time = started.elapsed();
        let mut elements: Vec<Element> = raw
            .elements
            .into_iter()
            .enumerate()
            .map(|(index, r)| Element::from_raw(index, r))
            .collect();
        crate::snapshots::protect_descendants(&mut elements);
        let limits = (request.max_elements, request.max_depth);
        let (id, elements, unchanged) =
            self.snapshots_now()
                .record(window.clone(), elements, limits, || {
                    self.ids.issue(IdKind::Snapshot, self.id())
                });
        self.observe_window(window.id, "snapshot");
        self.aim_keys(crate::registry::KeyTarget::Window(
            crate::registry::Pin::of(&window),
        ));
        self.note_window(&window);
        self.remember_tree(window.id, &elements);
        if unchanged {
            notes.push(Note::TokensKept { snapshot: id });
        }
        notes.extend(raw.notes.into_iter().map(Note::Tree));
        // A timeout explains itself in the backend's notes; a budget cut is said here.
        if !raw.complete && elements.len() >= request.max_elements {
            notes.push(Note::TreeCut {
                elements: elements.len(),
                max_elements: request.max_elements,
                max_depth: request.max_depth,
            });
        }
        let big = window.frame.width >= 300 && window.frame.height >= 200;
        if big && elements.len() < 5 && raw.source != "none" {
            let port = window
                .pid
                .and_then(deskpilot_browser::launch::debug_port_of);
            let chromium = [&window.class, window.process.as_deref().unwrap_or("")]
                .iter()
                .any(|s| {
                    let s = s.to_ascii_lowercase();
                    ["chrom", "electron", "code", "msedge", "brave"]
                        .iter()
                        .any(|k| s.contains(k))
                });
            notes.push(Note::NearlyEmpty(match (port, chromium) {
                (Some(port), _) => NearlyEmpty::DevTools { port },
                (None, true) => NearlyEmpty::Chromium,
                (None, false) => NearlyEmpty::Plain,
            }));
        }
        let (text, shown, render_notes) =
            render(&elements, request.query.as_deref(), request.max_chars);
        notes.extend(render_notes);
        Ok(Snapshot {
            id,
            window,
            elements,
            text,
            shown,
            source: raw.source,
            complete: raw.complete,
            tokens: if unchanged { Tokens::Kept } else { Tokens::New },
            notes,
            screenshot,
            tree_time,
        })
    }

    /// The element behind a token (or an index of a snapshot) of the newest snapshot of its
    /// window, with that window as the snapshot saw it.
    pub fn element(&self, target: impl Into<ElementRef>) -> Result<(WindowInfo, Element), Error> {
        let target = target.into();
        let resolved = self.snapshots_now().resolve(&target);
        resolved.map_err(|e| {
            e.unwrap_or_else(|| {
                let snapshot = match &target {
                    ElementRef::At { snapshot, .. } => *snapshot,
                    ElementRef::Token(token) => parse_token(token).map_or(0, |(s, _)| s),
                };
                if self.foreign(IdKind::Snapshot, snapshot) {
                    Error::ForeignReference {
                        what: format!("element token {}", target.to_string().trim()),
                    }
                } else if self.ids.issued(IdKind::Snapshot, snapshot) {
                    Error::StaleElement {
                        token: target.to_string().trim().to_string(),
                        why: "that snapshot is too old to be remembered".to_string(),
                    }
                } else {
                    Error::ElementNotFound {
                        what: format!("snapshot {snapshot} was never taken"),
                    }
                }
            })
        })
    }

    /// Element `index` of snapshot `snapshot` as it is now: the snapshot's window is read again
    /// first (with the snapshot's own limits, no screenshot), so an unchanged structure keeps
    /// the snapshot and refreshes its elements, and a changed one supersedes it and the index
    /// is refused (`STALE_ELEMENT` saying what changed) — never re-resolved by position.
    pub fn element_at(&self, snapshot: u64, index: usize) -> Result<(WindowInfo, Element), Error> {
        let read = self.snapshots_now().read_of(snapshot);
        if let Some((window, max_elements, max_depth)) = read {
            self.window_state(&TreeRequest {
                include_screenshot: false,
                max_elements,
                max_depth,
                max_chars: 1,
                ..TreeRequest::new(WindowRef::Id(window.id))
            })?;
        }
        self.element(ElementRef::At { snapshot, index })
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::fake::{FakeWindow, element, tree};
    use deskpilot_backend::{ElementHandle, FakeDesktop, RawElement, RawTree};
    use deskpilot_types::{ErrorCode, Rect, Role, WindowId};

    use super::*;
    use crate::config::EngineConfig;

    fn el(parent: Option<usize>, depth: u32, role: Role, name: &str) -> RawElement {
        element(role, name)
            .parent(parent)
            .depth(depth)
            .platform_role(&role.as_str().to_lowercase())
            .bounds(Rect::new(10, 10, 50, 20))
            .build()
    }

    /// The tree the fake serves for `w` now.
    fn fake_tree(fake: &FakeDesktop, w: WindowId) -> RawTree {
        use deskpilot_backend::{Accessibility, Windows};
        let window = fake
            .list_windows()
            .unwrap()
            .into_iter()
            .find(|x| x.id == w)
            .unwrap();
        fake.tree(
            &window,
            &TreeLimits {
                max_elements: 1000,
                max_depth: 64,
                timeout: Duration::from_secs(1),
                fresh: true,
            },
        )
        .unwrap()
    }

    fn setup() -> (FakeDesktop, Session, WindowId) {
        let fake = FakeDesktop::new(800, 600);
        let w = fake.add_window(FakeWindow::new("Editor", Rect::new(0, 0, 400, 300)));
        let mut save = el(Some(1), 2, Role::Button, "保存并关闭");
        save.actions = vec!["click".into()];
        let mut off = el(Some(1), 2, Role::Button, "Disabled one");
        off.states.enabled = false;
        let mut entry = el(Some(0), 1, Role::Edit, "Name");
        entry.value = Some("张三 \"quoted\"".into());
        entry.states.editable = true;
        entry.states.focused = true;
        fake.set_tree(
            w,
            tree(vec![
                el(None, 0, Role::Window, "Editor"),
                el(Some(0), 1, Role::Group, ""),
                save,
                off,
                entry,
            ]),
        );
        let e = Session::standalone(fake.desktop(), EngineConfig::default());
        (fake, e, w)
    }

    #[test]
    fn tree_text_indexes_tokens_and_flags() {
        let (_fake, e, w) = setup();
        let s = e.window_state(&TreeRequest::new(WindowRef::Id(w))).unwrap();
        assert_eq!(s.elements.len(), 5);
        let lines: Vec<&str> = s.text.lines().collect();
        assert_eq!(lines[0], "0 Window \"Editor\"");
        assert_eq!(lines[2], "\t\t2 Button \"保存并关闭\" actions=[click]");
        assert_eq!(lines[3], "\t\t3 Button \"Disabled one\" disabled");
        assert_eq!(
            lines[4],
            "\t4 Edit \"Name\" value=\"张三 \\\"quoted\\\"\" FOCUSED editable"
        );
        assert_eq!(s.elements[2].token, format!("s{}:2", s.id));
        assert!(s.screenshot.is_some());
        let (win, el) = e.element(&s.elements[2].token).unwrap();
        assert_eq!((win.id, el.name.as_str()), (w, "保存并关闭"));
    }

    #[test]
    fn older_snapshots_are_stale_and_query_keeps_indexes() {
        let (fake, e, w) = setup();
        let first = e.window_state(&TreeRequest::new(WindowRef::Id(w))).unwrap();
        // Re-reading an unchanged window keeps the snapshot and its tokens.
        let again = e.window_state(&TreeRequest::new(WindowRef::Id(w))).unwrap();
        assert_eq!(again.id, first.id);
        assert!(e.element(&first.elements[2].token).is_ok());
        assert!(
            !first
                .notes
                .iter()
                .any(|n| matches!(n, Note::TokensKept { .. }))
        );
        assert!(
            again
                .notes
                .contains(&Note::TokensKept { snapshot: first.id })
        );
        assert_eq!((first.tokens, again.tokens), (Tokens::New, Tokens::Kept));
        // A structural change makes a new snapshot; the old tokens say what changed.
        let mut tree = fake_tree(&fake, w);
        tree.elements.push(el(Some(0), 1, Role::Button, "New"));
        fake.set_tree(w, tree);
        let second = e
            .window_state(&TreeRequest {
                query: Some("保存".into()),
                ..TreeRequest::new(WindowRef::Id(w))
            })
            .unwrap();
        assert_ne!(second.id, first.id);
        let stale = e.element(&first.elements[2].token).unwrap_err();
        assert_eq!(stale.code(), ErrorCode::StaleElement);
        assert!(stale.to_string().contains("1 elements appeared"), "{stale}");
        assert!(e.element(&second.elements[2].token).is_ok());
        assert_eq!(
            e.element(format!("s{}:99", second.id)).unwrap_err().code(),
            ErrorCode::ElementNotFound
        );
        assert_eq!(
            e.element("s999:1").unwrap_err().code(),
            ErrorCode::ElementNotFound
        );
        assert_eq!(
            e.element("x12").unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        // A bare index is an element of the newest snapshot.
        assert_eq!(e.element("2").unwrap().1.token, second.elements[2].token);
        assert_eq!(
            e.element("12").unwrap_err().code(),
            ErrorCode::ElementNotFound
        );
        let lines: Vec<&str> = second.text.lines().collect();
        assert_eq!(
            lines,
            [
                "0 Window \"Editor\"",
                "\t1 Group \"\"",
                "\t\t2 Button \"保存并关闭\" actions=[click]"
            ]
        );
        assert!(
            second
                .notes
                .iter()
                .any(|n| matches!(n, Note::Query { matching: 1, .. }))
        );
    }

    /// A re-sorted list keeps AT-SPI's positional cell handles: before, a token of the old
    /// order named whatever item now sat at its index. Renamed items are a new snapshot; a
    /// label's text or a field's value refreshes under the same id.
    #[test]
    fn renamed_items_make_a_new_snapshot_and_other_names_refresh_in_place() {
        let fake = FakeDesktop::new(800, 600);
        let w = fake.add_window(FakeWindow::new("Files", Rect::new(0, 0, 400, 300)));
        let mut status = el(Some(0), 1, Role::StatusBar, "3 items");
        status.handle = ElementHandle("status".into());
        let mut entry = el(Some(0), 1, Role::Edit, "Location");
        entry.value = Some("/home".into());
        let mut elements = vec![
            el(None, 0, Role::Window, "Files"),
            el(Some(0), 1, Role::List, "Files"),
        ];
        for (i, name) in ["a.txt", "b.txt", "c.txt"].iter().enumerate() {
            let mut item = el(Some(1), 2, Role::ListItem, name);
            item.handle = ElementHandle(format!("row{i}"));
            elements.push(item);
        }
        elements.extend([status, entry]);
        fake.set_tree(w, tree(elements));
        let e = Session::standalone(fake.desktop(), EngineConfig::default());
        let read = || e.window_state(&TreeRequest::new(WindowRef::Id(w))).unwrap();
        let first = read();
        // The status bar and the field change: same snapshot, tokens kept.
        fake.update_tree(w, |t| {
            t.elements[5].name = "2 selected".into();
            t.elements[6].value = Some("/tmp".into());
        });
        let again = read();
        assert_eq!((again.id, again.tokens), (first.id, Tokens::Kept));
        assert_eq!(again.elements[5].name, "2 selected");
        // Sorted descending: the same handles now name other files.
        fake.update_tree(w, |t| {
            for (i, name) in ["c.txt", "b.txt", "a.txt"].iter().enumerate() {
                t.elements[2 + i].name = name.to_string();
            }
        });
        let sorted = read();
        assert_ne!(sorted.id, first.id);
        assert_eq!(sorted.tokens, Tokens::New);
        let stale = e.element(&first.elements[2].token).unwrap_err();
        assert_eq!(stale.code(), ErrorCode::StaleElement);
        let why = stale.to_string();
        assert!(why.contains("2 elements were renamed"), "{why}");
        assert!(why.contains("\"a.txt\" now reads \"c.txt\""), "{why}");
        assert_eq!(
            e.element(&sorted.elements[2].token).unwrap().1.name,
            "c.txt"
        );
    }

    #[test]
    fn budgets_are_stated_and_a_missing_tree_still_returns_the_screenshot() {
        let (fake, e, w) = setup();
        let s = e
            .window_state(&TreeRequest {
                max_elements: 2,
                ..TreeRequest::new(WindowRef::Id(w))
            })
            .unwrap();
        assert_eq!(s.elements.len(), 2);
        assert!(
            s.notes.iter().any(|n| matches!(
                n,
                Note::TreeCut {
                    elements: 2,
                    max_elements: 2,
                    ..
                }
            )),
            "{:?}",
            s.notes
        );
        let s = e
            .window_state(&TreeRequest {
                max_chars: 25,
                ..TreeRequest::new(WindowRef::Id(w))
            })
            .unwrap();
        assert_eq!(s.shown, 1);
        assert!(
            s.notes
                .iter()
                .any(|n| matches!(n, Note::TextTruncated { max_chars: 25, .. }))
        );
        let bare = fake.add_window(FakeWindow::new("Bare", Rect::new(0, 0, 600, 400)));
        let s = e
            .window_state(&TreeRequest::new(WindowRef::Id(bare)))
            .unwrap();
        assert!(s.elements.is_empty() && s.screenshot.is_some());
        assert!(s.notes.iter().any(|n| matches!(n, Note::NoTree { .. })));
    }

    #[test]
    fn find_draws_numbered_pins_on_a_screenshot_taken_after_ranking() {
        let (fake, _, w) = setup();
        let e = Session::standalone(
            fake.desktop(),
            EngineConfig {
                format: crate::pipeline::ImageFormat::Png,
                ..EngineConfig::default()
            },
        );
        let find = |annotate| {
            e.find_elements(&crate::find::FindRequest {
                tree: TreeRequest::new(WindowRef::Id(w)),
                description: "保存".into(),
                name_contains: String::new(),
                role: String::new(),
                limit: 3,
                annotate,
            })
            .unwrap()
        };
        let rgb = |s: &Snapshot, x: usize, y: usize| {
            let shot = s.screenshot.as_ref().unwrap();
            let decoder = png::Decoder::new(std::io::Cursor::new(shot.image.bytes.clone()));
            let mut reader = decoder.read_info().unwrap();
            let mut buf = vec![0; reader.output_buffer_size().unwrap()];
            let info = reader.next_frame(&mut buf).unwrap();
            let at = (y * info.width as usize + x) * 3;
            [buf[at], buf[at + 1], buf[at + 2]]
        };
        let (plain, found) = find(false);
        let (pinned, found_pinned) = find(true);
        assert_eq!(found[0].name, "保存并关闭");
        assert_eq!(found[0].image, found_pinned[0].image, "same geometry");
        // The element spans (10, 10, 50x20) in a 1:1 window screenshot: its left edge is
        // outlined in pin red only when annotated.
        assert_eq!(rgb(&pinned, 10, 20), [230, 30, 60]);
        assert_ne!(rgb(&plain, 10, 20), [230, 30, 60]);
        assert_eq!(rgb(&pinned, 200, 200), rgb(&plain, 200, 200));
    }

    /// A GTK password dialog after 12 characters were typed (issue 39): the tree showed
    /// `Edit "" value="●●●●●●●●●●●●"`, one mask character per character typed.
    fn password_dialog() -> (FakeDesktop, Session, WindowId) {
        let fake = FakeDesktop::new(800, 600);
        let w = fake.add_window(FakeWindow::new("Password", Rect::new(0, 0, 400, 200)));
        fake.set_tree(
            w,
            tree(vec![
                el(None, 0, Role::Dialog, "Password"),
                el(Some(0), 1, Role::Text, "Type your password"),
                element(Role::Edit, "")
                    .child_of(0, 1)
                    .bounds(Rect::new(100, 80, 200, 30))
                    .password("hunter2hunter")
                    .into(),
                // A toolkit that keeps the field's text in a leaf of its own.
                element(Role::Text, "●●●●●●●●●●●●")
                    .child_of(2, 2)
                    .value("●●●●●●●●●●●●")
                    .into(),
                el(Some(0), 1, Role::Button, "OK"),
            ]),
        );
        let e = Session::standalone(fake.desktop(), EngineConfig::default());
        (fake, e, w)
    }

    #[test]
    fn a_password_field_shows_no_value_length_or_mask_only_that_it_is_one() {
        let (_fake, e, w) = password_dialog();
        let s = e.window_state(&TreeRequest::new(WindowRef::Id(w))).unwrap();
        let lines: Vec<&str> = s.text.lines().collect();
        assert_eq!(
            lines[2], "\t2 Edit \"\" focusable editable password",
            "{}",
            s.text
        );
        assert_eq!(lines[3], "\t\t3 Text \"\" password", "{}", s.text);
        assert!(!s.text.contains('●'), "{}", s.text);
        assert!(s.elements[2].password && s.elements[2].value.is_none());
        assert!(s.elements[3].password && s.elements[3].value.is_none());
        assert!(!s.elements[1].password && !s.elements[4].password);
        // Structured output says so, and carries no value either.
        let json = serde_json::to_value(&s.elements[2]).unwrap();
        assert_eq!(json["password"], true);
        assert!(json.get("value").is_none(), "{json}");
        assert!(
            serde_json::to_value(&s.elements[4])
                .unwrap()
                .get("password")
                .is_none()
        );
        // A query never matches a password field's text.
        let q = e
            .window_state(&TreeRequest {
                query: Some("●".into()),
                ..TreeRequest::new(WindowRef::Id(w))
            })
            .unwrap();
        assert!(
            q.notes
                .iter()
                .any(|n| matches!(n, Note::Query { matching: 0, .. })),
            "{:?}",
            q.notes
        );
        // get_element_text answers that it is one, without reading it.
        let (el, text) = e.element_text(&s.elements[2].token).unwrap();
        assert!(el.password);
        assert_eq!(text, None);
        let (_, text) = e.element_text(&s.elements[1].token).unwrap();
        assert_eq!(text.as_deref(), Some(""));
    }

    #[test]
    fn find_matches_a_password_field_by_its_name_or_kind_never_by_its_text() {
        let (fake, e, w) = password_dialog();
        // Named the way GTK dialogs usually name it, by the label beside it.
        fake.update_tree(w, |t| t.elements[2].name = "Password".into());
        let find = |description: &str, name_contains: &str| {
            e.find_elements(&crate::find::FindRequest {
                tree: TreeRequest {
                    include_screenshot: false,
                    ..TreeRequest::new(WindowRef::Id(w))
                },
                description: description.into(),
                name_contains: name_contains.into(),
                role: String::new(),
                limit: 10,
                annotate: false,
            })
            .unwrap()
            .1
        };
        for bullets in ["●●●●●●●●●●●●", "●"] {
            let found = find(bullets, "");
            assert!(
                found.iter().all(|c| c.source != "accessibility"),
                "{found:?}"
            );
            let found = find("", bullets);
            assert!(
                found.iter().all(|c| c.source != "accessibility"),
                "{found:?}"
            );
        }
        let found = find("the password field", "");
        assert_eq!(found[0].index, 2, "{found:?}");
        assert!(found[0].password && found[0].value.is_none());
        let json = serde_json::to_value(&found[0]).unwrap();
        assert_eq!(json["password"], true);
        assert!(!json.to_string().contains('●'), "{json}");
    }

    #[test]
    fn a_large_chromium_window_with_an_almost_empty_tree_names_browser_attach() {
        let fake = FakeDesktop::new(1600, 1000);
        let w = fake.add_window(FakeWindow {
            class: "Chromium".into(),
            process: "chromium".into(),
            ..FakeWindow::new("Fixture - Chromium", Rect::new(0, 0, 1200, 900))
        });
        fake.set_tree(
            w,
            tree(vec![
                el(None, 0, Role::Window, "Chromium"),
                el(Some(0), 1, Role::Group, ""),
            ]),
        );
        let e = Session::standalone(fake.desktop(), EngineConfig::default());
        let s = e.window_state(&TreeRequest::new(WindowRef::Id(w))).unwrap();
        assert!(
            s.notes.contains(&Note::NearlyEmpty(NearlyEmpty::Chromium)),
            "{:?}",
            s.notes
        );
        // A small dialog with few controls is normal.
        let d = fake.add_window(FakeWindow::new("Confirm", Rect::new(0, 0, 250, 120)));
        fake.set_tree(d, tree(vec![el(None, 0, Role::Dialog, "Confirm")]));
        let s = e.window_state(&TreeRequest::new(WindowRef::Id(d))).unwrap();
        assert!(!s.notes.iter().any(|n| matches!(n, Note::NearlyEmpty(_))));
    }
}
