//! Recall: a phrase ("that window", "刚才那个按钮", "微信", "mousepad") resolved against what
//! memory holds, to ranked candidates that each say *why* they matched.
//!
//! Everything returned is a typed fact: a window or an element memory recorded, its presence
//! (present, minimized, gone since when) and the reasons. Nothing is invented: a query that
//! matches nothing is [`Recall::NoMatch`] with the closest records memory has, each marked as
//! only close. Wording is the profile's job.

use deskpilot_types::{Point, Rect, Role, WindowId};

use super::aliases::{Aliases, holds};
use super::store::{ElementRecord, Recognition, WindowRecord};
use super::{MemoryState, UnixMillis};
use deskpilot_types::fold;

/// Candidates returned at most.
pub const MAX_CANDIDATES: usize = 5;

/// A reference to something recent rather than to a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deixis {
    /// "that window", "刚才那个窗口": the window focused last.
    LastWindow,
    /// "the previous window", "上一个窗口": the one focused before it.
    PreviousWindow,
    /// "the last button", "刚才那个按钮": the control of that role acted on (else seen) last.
    LastElement(Role),
    /// "刚才点的", "what I just clicked": the control acted on last, whatever its role.
    LastActed,
}

const WINDOW_PHRASES: &[(&str, Deixis)] = &[
    ("the previous window", Deixis::PreviousWindow),
    ("previous window", Deixis::PreviousWindow),
    ("上一个窗口", Deixis::PreviousWindow),
    ("前一个窗口", Deixis::PreviousWindow),
    ("that window", Deixis::LastWindow),
    ("this window", Deixis::LastWindow),
    ("the last window", Deixis::LastWindow),
    ("刚才那个窗口", Deixis::LastWindow),
    ("刚才的窗口", Deixis::LastWindow),
    ("那个窗口", Deixis::LastWindow),
    ("刚才点的", Deixis::LastActed),
    ("刚刚点的", Deixis::LastActed),
    ("just clicked", Deixis::LastActed),
    ("what i clicked", Deixis::LastActed),
];

const ELEMENT_PREFIXES: &[&str] = &[
    "the last ",
    "that ",
    "the previous ",
    "刚才那个",
    "刚才的",
    "上一个",
];

const ROLE_WORDS: &[(&str, Role)] = &[
    ("button", Role::Button),
    ("按钮", Role::Button),
    ("link", Role::Link),
    ("链接", Role::Link),
    ("field", Role::Edit),
    ("输入框", Role::Edit),
    ("menu item", Role::MenuItem),
    ("菜单项", Role::MenuItem),
    ("checkbox", Role::CheckBox),
    ("复选框", Role::CheckBox),
];

/// The deictic phrase a query uses, if any, and the phrase itself.
pub fn deixis(query: &str) -> Option<(Deixis, String)> {
    let q = query.trim().to_lowercase();
    for prefix in ELEMENT_PREFIXES {
        for (word, role) in ROLE_WORDS {
            let phrase = format!("{prefix}{word}");
            if q.contains(&phrase) {
                return Some((Deixis::LastElement(*role), phrase));
            }
        }
    }
    WINDOW_PHRASES
        .iter()
        .find(|(p, _)| q.contains(p))
        .map(|(p, d)| (*d, p.to_string()))
}

/// Whether a recalled thing can be acted on now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// Seen in the last window list and not minimized.
    Present,
    /// Exists but is minimized: focus it first.
    Minimized,
    /// Closed: last seen at `last_seen`, missing from the lists since `gone_at`.
    Gone {
        last_seen: UnixMillis,
        gone_at: UnixMillis,
    },
    /// An element whose window memory no longer holds.
    WindowUnknown,
}

/// What was recalled.
#[derive(Debug, Clone, PartialEq)]
pub enum Recalled {
    Window {
        id: WindowId,
        title: String,
        process: Option<String>,
        class: String,
        frame: Rect,
        /// Centre of the frame, physical pixels.
        center: Point,
        presence: Presence,
        last_seen: UnixMillis,
        /// The closed window this one was recognised as, reopened.
        recognized_as: Option<Recognition>,
    },
    Element {
        window: WindowId,
        role: Role,
        name: String,
        bounds: Rect,
        center: Point,
        path: String,
        /// The token it was last addressed by; it only holds while that snapshot does.
        token: Option<String>,
        presence: Presence,
        last_seen: UnixMillis,
        acted_on: Option<UnixMillis>,
    },
}

/// Which field a keyword was found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Title,
    Process,
    Class,
    Name,
}

/// Why a candidate matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// The query's deictic phrase points here.
    Deictic { phrase: String, deixis: Deixis },
    /// The query named an app alias that this window's process, class or title carries.
    Alias {
        said: String,
        matched: String,
        field: Field,
    },
    /// A word of the query appears in this field.
    Keyword { word: String, field: Field },
    /// No match: only the closest record memory has (`similarity` in percent, 0 means it
    /// is only the most recent).
    Closest { similarity: u8 },
}

/// One ranked answer.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallCandidate {
    pub target: Recalled,
    pub score: u32,
    pub why: Vec<Why>,
}

/// The answer to a query.
#[derive(Debug, Clone, PartialEq)]
pub enum Recall {
    /// Best first.
    Matched(Vec<RecallCandidate>),
    /// Nothing matched; the closest records, each with [`Why::Closest`] (empty when memory is).
    NoMatch { closest: Vec<RecallCandidate> },
}

impl Recall {
    pub fn candidates(&self) -> &[RecallCandidate] {
        match self {
            Recall::Matched(c) => c,
            Recall::NoMatch { closest } => closest,
        }
    }
}

fn window_presence(w: &WindowRecord) -> Presence {
    match w.gone_at {
        Some(gone_at) => Presence::Gone {
            last_seen: w.last_seen,
            gone_at,
        },
        None if w.state.minimized => Presence::Minimized,
        None => Presence::Present,
    }
}

fn presence_rank(p: Presence) -> u8 {
    match p {
        Presence::Present => 3,
        Presence::Minimized => 2,
        Presence::WindowUnknown => 1,
        Presence::Gone { .. } => 0,
    }
}

fn window_target(w: &WindowRecord) -> Recalled {
    Recalled::Window {
        id: w.id,
        title: w.title.clone(),
        process: w.process.clone(),
        class: w.class.clone(),
        frame: w.frame,
        center: w.frame.center(),
        presence: window_presence(w),
        last_seen: w.last_seen,
        recognized_as: w.recognized_as.clone(),
    }
}

fn element_target(state: &MemoryState, e: &ElementRecord) -> Recalled {
    Recalled::Element {
        window: e.window,
        role: e.role,
        name: e.name.clone(),
        bounds: e.bounds,
        center: e.bounds.center(),
        path: e.path.clone(),
        token: e.token.clone(),
        presence: state
            .windows
            .get(e.window)
            .map_or(Presence::WindowUnknown, window_presence),
        last_seen: e.last_seen,
        acted_on: e.acted_on,
    }
}

const STOP_WORDS: &[&str] = &[
    "the", "a", "an", "window", "app", "of", "in", "on", "to", "窗口", "的",
];

/// The words of a folded query worth looking for.
fn words(folded: &str) -> Vec<String> {
    folded
        .split(' ')
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(w))
        .filter(|w| w.chars().count() >= 2 || !w.is_ascii())
        .map(str::to_string)
        .collect()
}

/// Character-bigram similarity of two folded strings, in percent.
fn similarity(a: &str, b: &str) -> u8 {
    let grams = |s: &str| -> Vec<(char, char)> {
        let c: Vec<char> = s.chars().collect();
        c.windows(2).map(|w| (w[0], w[1])).collect()
    };
    let (ga, gb) = (grams(a), grams(b));
    if ga.is_empty() || gb.is_empty() {
        return 0;
    }
    let shared = ga.iter().filter(|g| gb.contains(g)).count();
    (200 * shared / (ga.len() + gb.len())).min(100) as u8
}

/// Resolves `query` against `state` (see the module doc).
pub fn recall(state: &MemoryState, aliases: &Aliases, query: &str) -> Recall {
    let mut out: Vec<RecallCandidate> = Vec::new();
    if let Some((d, phrase)) = deixis(query) {
        let why = vec![Why::Deictic { phrase, deixis: d }];
        let target = match d {
            Deixis::LastWindow => state
                .focus
                .current()
                .and_then(|f| state.windows.get(f.window))
                .map(window_target),
            Deixis::PreviousWindow => state
                .focus
                .previous()
                .and_then(|f| state.windows.get(f.window))
                .map(window_target),
            Deixis::LastElement(role) => state
                .elements
                .last_acted(Some(role))
                .or_else(|| state.elements.last_seen(role))
                .map(|e| element_target(state, e)),
            Deixis::LastActed => state
                .elements
                .last_acted(None)
                .map(|e| element_target(state, e)),
        };
        if let Some(target) = target {
            return Recall::Matched(vec![RecallCandidate {
                target,
                score: 100,
                why,
            }]);
        }
    }

    let folded = fold(query);
    let hits = aliases.hits(&folded);
    let words = words(&folded);
    for w in &state.windows.windows {
        let fields = [
            (Field::Process, fold(w.process.as_deref().unwrap_or(""))),
            (Field::Class, fold(&w.class)),
            (Field::Title, fold(&w.title)),
        ];
        let mut why = Vec::new();
        let mut score = 0;
        for hit in &hits {
            if let Some((field, matched)) = fields.iter().find_map(|(f, v)| {
                hit.terms
                    .iter()
                    .find(|t| holds(v, t))
                    .map(|t| (*f, t.clone()))
            }) {
                score += 40;
                why.push(Why::Alias {
                    said: hit.said.to_string(),
                    matched,
                    field,
                });
            }
        }
        for word in &words {
            if let Some((field, _)) = fields.iter().find(|(_, v)| v.contains(word.as_str())) {
                score += match field {
                    Field::Process => 30,
                    _ => 20,
                };
                why.push(Why::Keyword {
                    word: word.clone(),
                    field: *field,
                });
            }
        }
        if score > 0 {
            out.push(RecallCandidate {
                target: window_target(w),
                score,
                why,
            });
        }
    }
    for e in &state.elements.elements {
        let name = fold(&e.name);
        let why: Vec<Why> = words
            .iter()
            .filter(|w| name.contains(w.as_str()))
            .map(|w| Why::Keyword {
                word: w.clone(),
                field: Field::Name,
            })
            .collect();
        if !why.is_empty() {
            out.push(RecallCandidate {
                target: element_target(state, e),
                score: 15 * why.len() as u32,
                why,
            });
        }
    }
    if !out.is_empty() {
        sort(&mut out);
        out.truncate(MAX_CANDIDATES);
        return Recall::Matched(out);
    }

    let mut closest: Vec<RecallCandidate> = state
        .windows
        .windows
        .iter()
        .map(|w| {
            let s = similarity(&folded, &fold(&w.title)).max(similarity(
                &folded,
                &fold(w.process.as_deref().unwrap_or("")),
            ));
            RecallCandidate {
                target: window_target(w),
                score: s as u32,
                why: vec![Why::Closest { similarity: s }],
            }
        })
        .collect();
    sort(&mut closest);
    closest.truncate(MAX_CANDIDATES);
    Recall::NoMatch { closest }
}

fn last_seen(r: &Recalled) -> UnixMillis {
    match r {
        Recalled::Window { last_seen, .. } | Recalled::Element { last_seen, .. } => *last_seen,
    }
}

fn presence(r: &Recalled) -> Presence {
    match r {
        Recalled::Window { presence, .. } | Recalled::Element { presence, .. } => *presence,
    }
}

/// Score, then what can be acted on now, then the most recent.
fn sort(c: &mut [RecallCandidate]) {
    c.sort_by(|a, b| {
        (
            b.score,
            presence_rank(presence(&b.target)),
            last_seen(&b.target),
        )
            .cmp(&(
                a.score,
                presence_rank(presence(&a.target)),
                last_seen(&a.target),
            ))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ElementObservation;
    use crate::store::tests::obs;
    use deskpilot_types::WindowId;

    /// mousepad (1), xterm (2) and kcalc (3) seen; focus went 1 → 2 → 1 → 3; an OK button was
    /// clicked in mousepad, a Save link only seen; kcalc then minimized, xterm closed.
    fn desk() -> MemoryState {
        let mut s = MemoryState::default();
        let list = [
            obs(1, "Untitled - Mousepad", "mousepad"),
            obs(2, "bash - Terminal", "xterm"),
            obs(3, "KCalc", "kcalc"),
        ];
        for (t, active) in [(10, 1), (20, 2), (30, 1), (40, 3)] {
            s.observe_windows(&list, Some(WindowId(active)), t);
        }
        let el = |name: &str, role| ElementObservation {
            window: WindowId(1),
            role,
            name: name.into(),
            bounds: Rect::new(200, 300, 80, 30),
            path: "0/4".into(),
            token: None,
            value: None,
            password: false,
        };
        s.elements.observe(&el("OK", Role::Button), true, 41);
        s.elements.observe(&el("Save", Role::Link), false, 42);
        let mut kcalc = list[2].clone();
        kcalc.state.minimized = true;
        s.observe_windows(&[list[0].clone(), kcalc], None, 50);
        s
    }

    fn first(r: &Recall) -> (&Recalled, &[Why]) {
        let c = &r.candidates()[0];
        (&c.target, &c.why)
    }

    fn window_id(r: &Recalled) -> Option<u64> {
        match r {
            Recalled::Window { id, .. } => Some(id.0),
            Recalled::Element { .. } => None,
        }
    }

    #[test]
    fn deictic_phrases_resolve_in_english_and_chinese() {
        let s = desk();
        let a = Aliases::default();
        let cases: &[(&str, Deixis, Option<u64>, Option<&str>)] = &[
            ("that window", Deixis::LastWindow, Some(3), None),
            ("刚才那个窗口", Deixis::LastWindow, Some(3), None),
            ("the previous window", Deixis::PreviousWindow, Some(1), None),
            ("上一个窗口", Deixis::PreviousWindow, Some(1), None),
            (
                "the last button",
                Deixis::LastElement(Role::Button),
                None,
                Some("OK"),
            ),
            (
                "刚才那个按钮",
                Deixis::LastElement(Role::Button),
                None,
                Some("OK"),
            ),
            ("刚才点的", Deixis::LastActed, None, Some("OK")),
            (
                "that link",
                Deixis::LastElement(Role::Link),
                None,
                Some("Save"),
            ),
        ];
        for (q, d, win, name) in cases {
            let r = recall(&s, &a, q);
            assert!(matches!(r, Recall::Matched(_)), "{q}");
            let (target, why) = first(&r);
            assert!(
                matches!(&why[0], Why::Deictic { deixis, .. } if deixis == d),
                "{q}"
            );
            assert_eq!(window_id(target), *win, "{q}");
            if let (Some(n), Recalled::Element { name, presence, .. }) = (name, target) {
                assert_eq!((name.as_str(), *presence), (*n, Presence::Present), "{q}");
            }
        }
    }

    #[test]
    fn names_and_aliases_find_windows_with_their_presence() {
        let s = desk();
        let a = Aliases::default();
        let gone = Presence::Gone {
            last_seen: 40,
            gone_at: 50,
        };
        let cases: &[(&str, u64, Presence)] = &[
            ("mousepad", 1, Presence::Present),
            ("记事本", 1, Presence::Present),
            ("计算器", 3, Presence::Minimized),
            ("kcalc", 3, Presence::Minimized),
            ("终端", 2, gone),
            ("Terminal", 2, gone),
            ("bash", 2, gone),
        ];
        for (q, id, p) in cases {
            let r = recall(&s, &a, q);
            assert!(matches!(r, Recall::Matched(_)), "{q}");
            match first(&r).0 {
                Recalled::Window {
                    id: got,
                    presence,
                    center,
                    ..
                } => {
                    assert_eq!((got.0, *presence), (*id, *p), "{q}");
                    assert_eq!(*center, Point::new(300, 250), "{q}");
                }
                other => panic!("{q}: {other:?}"),
            }
        }
        let r = recall(&s, &a, "记事本");
        assert!(matches!(
            &first(&r).1[0],
            Why::Alias { said, matched, field: Field::Process } if said == "记事本" && matched == "mousepad"
        ));
    }

    #[test]
    fn no_match_says_so_and_lists_the_closest() {
        let s = desk();
        let r = recall(&s, &Aliases::default(), "mousepod");
        let Recall::NoMatch { closest } = &r else {
            panic!("{r:?}");
        };
        assert_eq!(window_id(&closest[0].target), Some(1));
        assert!(matches!(closest[0].why[0], Why::Closest { similarity } if similarity > 50));
        let empty = recall(&MemoryState::default(), &Aliases::default(), "that window");
        assert_eq!(empty, Recall::NoMatch { closest: vec![] });
    }
}
