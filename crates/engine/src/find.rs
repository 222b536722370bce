//! `find_elements`: rank a window's elements against a description.
//!
//! Text is folded first (case, full-width forms, punctuation), then compared per field
//! (name, value, description, role) by exact match, containment, and word / CJK-bigram
//! overlap — so "保存" finds "保存并关闭" and "the search box" finds an Edit named "Search".
//! Latin text matches in whole words only: "in" is no part of "retain", and a name that is a
//! whole-word part of the query counts only when it is a fair share of it. Text read by OCR
//! is also compared as OCR reads it ([`crate::matcher::text_match`]: spaces inside words and digit runs,
//! `0`/`O`, `1`/`l`/`I`), always scoring below an exact match.
//! Kind words ("button", "按钮", "field", "输入框" …) are taken out of the text and turned into
//! a role preference. Disabled and off-screen elements are demoted, not hidden. With
//! `annotate`, the window's screenshot is taken after ranking with the candidates drawn on it
//! as numbered pins (1 = best), so a vision model can pick by number.
//!
//! A password field is found by its name, label, description and role, never by its text: its
//! elements carry no value ([`crate::snapshots`]).

use deskpilot_types::{Rect, Role, WindowInfo};
use serde::Serialize;

use crate::coords::ViewGeometry;
use crate::decorate::Marker;
use crate::labels::{self, NameFrom};
use crate::matcher::{
    MIN_TOLERANT, TextMatch, contains_words, fold, is_cjk, letters, ocr_fold, terms, text_match,
};
use crate::note::Note;
use crate::tree::{Element, Snapshot, TreeRequest};
use crate::{
    capture::{CaptureTarget, ScreenshotRequest},
    error::Error,
    session::Session,
};

/// What to look for.
#[derive(Debug, Clone, PartialEq)]
pub struct FindRequest {
    pub tree: TreeRequest,
    /// Free text ("the save button", "保存").
    pub description: String,
    /// Exact substring filter instead of ranking (case-insensitive, over name, value, description).
    pub name_contains: String,
    /// Only this role (`"Button"`), case-insensitive.
    pub role: String,
    pub limit: usize,
    /// Draw the candidates as numbered pins (1 = best) on the screenshot.
    pub annotate: bool,
}

/// One ranked element.
#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    pub token: String,
    pub index: usize,
    pub role: Role,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub score: f64,
    pub why: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Rect>,
    /// The element's centre in the snapshot screenshot's pixel space.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<(u32, u32)>,
    pub enabled: bool,
    /// A password field: it has no `value` here, and its text is never matched.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub password: bool,
    pub actions: Vec<String>,
    /// Where the words it is known by came from, for a control with no name of its own:
    /// `label` (the label beside or above it) or `value`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_from: Option<NameFrom>,
    /// Those words: the label's text, or the value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub described_as: Option<String>,
    /// `accessibility` (an element of the snapshot, with a token) or `ocr` (text read off the
    /// window's pixels: no token, click it at `image` with `screenshot_id`).
    pub source: &'static str,
    /// The screenshot `image` is in, for an OCR candidate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screenshot_id: Option<u64>,
    /// The OCR engine's confidence, 0–100.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f32>,
}

/// A tree match scoring below this (nothing equals or contains the query) sends
/// `find_elements` to the window's pixels as well.
pub const GOOD_MATCH: f64 = 0.75;

/// An OCR line dressed as a text element, so the same ranking applies to it.
fn text_element(index: usize, text: &str, bounds: Rect) -> Element {
    Element {
        index,
        token: String::new(),
        parent: None,
        depth: 0,
        role: Role::Text,
        platform_role: "ocr".to_string(),
        name: text.to_string(),
        description: String::new(),
        value: None,
        enabled: true,
        focusable: false,
        focused: false,
        selected: false,
        checked: false,
        expanded: false,
        editable: false,
        onscreen: true,
        password: false,
        actions: Vec::new(),
        bounds: Some(bounds),
        handle: deskpilot_backend::ElementHandle(String::new()),
        states: Default::default(),
    }
}

/// Kind words and the roles they ask for.
const KINDS: &[(&str, &[Role])] = &[
    ("button", &[Role::Button, Role::ToggleButton]),
    ("btn", &[Role::Button, Role::ToggleButton]),
    ("按钮", &[Role::Button, Role::ToggleButton]),
    ("checkbox", &[Role::CheckBox, Role::CheckMenuItem]),
    ("check box", &[Role::CheckBox, Role::CheckMenuItem]),
    ("复选框", &[Role::CheckBox]),
    ("text editor", &[Role::Edit, Role::Document]),
    ("editor", &[Role::Edit, Role::Document]),
    ("text area", &[Role::Edit]),
    ("field", &[Role::Edit, Role::ComboBox]),
    ("input", &[Role::Edit]),
    ("entry", &[Role::Edit]),
    ("text box", &[Role::Edit]),
    ("textbox", &[Role::Edit]),
    ("search box", &[Role::Edit]),
    ("box", &[Role::Edit, Role::ComboBox, Role::CheckBox]),
    ("输入框", &[Role::Edit]),
    ("文本框", &[Role::Edit]),
    (
        "menu item",
        &[Role::MenuItem, Role::CheckMenuItem, Role::RadioMenuItem],
    ),
    ("menu", &[Role::Menu, Role::MenuItem]),
    ("菜单", &[Role::Menu, Role::MenuItem]),
    ("link", &[Role::Link]),
    ("链接", &[Role::Link]),
    ("tab", &[Role::Tab]),
    ("标签页", &[Role::Tab]),
    ("list", &[Role::List, Role::ListItem]),
    ("列表", &[Role::List, Role::ListItem]),
    ("slider", &[Role::Slider]),
    ("滑块", &[Role::Slider]),
    ("dropdown", &[Role::ComboBox]),
    ("combo", &[Role::ComboBox]),
    ("下拉框", &[Role::ComboBox]),
    ("radio", &[Role::RadioButton]),
    ("单选", &[Role::RadioButton]),
];

/// Words that carry no meaning in a description.
const FILLER: &[&str] = &[
    "the", "a", "an", "of", "for", "to", "on", "in", "that", "this", "的",
];

/// Splits kind words off the description: (what is left, wanted roles, kind words seen).
fn kinds(description: &str) -> (String, Vec<Role>, Vec<&'static str>) {
    let mut text = format!(" {} ", fold(description));
    let mut roles = Vec::new();
    let mut seen = Vec::new();
    for (word, r) in KINDS {
        let cjk = word.chars().any(is_cjk);
        let needle = if cjk {
            word.to_string()
        } else {
            format!(" {word} ")
        };
        if text.contains(&needle) {
            text = text.replacen(&needle, " ", 1);
            roles.extend_from_slice(r);
            seen.push(*word);
        }
    }
    let rest: Vec<&str> = text
        .split(' ')
        .filter(|w| !w.is_empty() && !FILLER.contains(w))
        .collect();
    (rest.join(" "), roles, seen)
}

/// How `similarity` compares: exactly, or also as OCR reads text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compare {
    Exact,
    /// The field was read by OCR.
    Ocr,
}

/// A name that is a whole-word part of the query counts when it carries at least this share
/// of the query's characters: "Save" in "save file", not "go" in "go back to settings".
const PART_SHARE: f64 = 0.4;

/// How well `field` matches `query` (both folded): 0..=1 and a reason.
///
/// Exact beats tolerant: equal 1.0, contains 0.75–0.95; as OCR reads it (with [`Compare::Ocr`])
/// equal 0.74, contains 0.66–0.72; a whole-word part of the query 0.6; shared words up to
/// 0.65 by their share.
fn similarity(
    query: &str,
    qterms: &[String],
    field: &str,
    compare: Compare,
) -> (f64, &'static str) {
    if field.is_empty() || query.is_empty() {
        return (0.0, "");
    }
    if field == query {
        return (1.0, "equals the query");
    }
    if contains_words(field, query) {
        let ratio = query.chars().count() as f64 / field.chars().count() as f64;
        return (0.75 + 0.2 * ratio, "contains the query");
    }
    if compare == Compare::Ocr {
        let (f, q) = (ocr_fold(field), ocr_fold(query));
        if q.chars().count() >= MIN_TOLERANT && f.contains(&q) {
            if f == q {
                return (0.74, "equals the query as OCR reads text");
            }
            let ratio = q.chars().count() as f64 / f.chars().count() as f64;
            return (0.66 + 0.06 * ratio, "contains the query as OCR reads text");
        }
    }
    let cjk = field.chars().any(is_cjk);
    let part = if cjk {
        // CJK: no word boundaries to respect; two characters make a word.
        query.contains(field) && field.chars().count() >= 2
    } else {
        contains_words(query, field) && letters(field) as f64 >= PART_SHARE * letters(query) as f64
    };
    if part {
        return (0.6, "is part of the query");
    }
    let fterms = terms(field);
    let hits = qterms.iter().filter(|t| fterms.contains(t)).count();
    if hits == 0 {
        return (0.0, "");
    }
    (
        0.65 * hits as f64 / qterms.len() as f64,
        "shares words with the query",
    )
}

/// Ranks `elements` for `description`; kept when the score is at least 0.2.
#[cfg(test)]
fn rank(elements: &[Element], description: &str) -> Vec<(f64, String, usize)> {
    rank_with(
        elements,
        &labels::describe(elements),
        description,
        Compare::Exact,
    )
}

/// [`rank`] for lines read by OCR: a line that matches only as OCR reads text ("LATER 927 1"
/// for "later 9271") still counts, below every exact match.
fn rank_ocr(lines: &[Element], description: &str) -> Vec<(f64, String, usize)> {
    rank_with(lines, &vec![None; lines.len()], description, Compare::Ocr)
}

/// [`rank`] with the descriptions of unnamed controls ([`labels::describe`]) given: the label
/// beside them, else their value, is a field of its own.
fn rank_with(
    elements: &[Element],
    described: &[Option<labels::Described>],
    description: &str,
    compare: Compare,
) -> Vec<(f64, String, usize)> {
    let (rest, roles, seen) = kinds(description);
    let qterms = terms(&rest);
    let labelling: std::collections::HashSet<usize> =
        described.iter().flatten().filter_map(|d| d.label).collect();
    let mut out = Vec::new();
    for (at, (e, described)) in elements.iter().zip(described).enumerate() {
        let beside = described.as_ref().map(|d| {
            let field = match d.from {
                NameFrom::Label => format!("label \"{}\" beside it", d.text),
                NameFrom::Value => format!("value \"{}\" (it has no name)", d.text),
            };
            (field, fold(&d.text))
        });
        let mut fields = vec![
            ("name".to_string(), fold(&e.name), 1.0),
            (
                "value".to_string(),
                fold(e.value.as_deref().unwrap_or("")),
                0.7,
            ),
            ("description".to_string(), fold(&e.description), 0.6),
        ];
        if let Some((field, text)) = beside {
            fields.push((field, text, 0.9));
        }
        let mut best = (0.0, String::new());
        for (label, text, weight) in &fields {
            let (s, how) = similarity(&rest, &qterms, text, compare);
            if s * weight > best.0 {
                best = (s * weight, format!("{label} {how}"));
            }
        }
        let mut score = best.0;
        let mut why = best.1;
        if labelling.contains(&at) && score > 0.0 {
            // The control it labels is what an agent acts on.
            score *= 0.9;
            why.push_str("; the label of a control");
        }
        if rest.is_empty() && !roles.is_empty() {
            score = 0.3;
            why = "only a kind was given".to_string();
        }
        if score == 0.0 {
            continue;
        }
        if !roles.is_empty() {
            if roles.contains(&e.role) {
                score += 0.2;
                why.push_str(&format!("; a {} as asked ({})", e.role, seen.join(", ")));
            } else {
                score -= 0.15;
            }
        }
        if e.role.is_interactive() {
            score += 0.05;
        }
        if !e.enabled {
            score *= 0.75;
            why.push_str("; disabled");
        }
        if !e.onscreen {
            score *= 0.8;
            why.push_str("; off screen");
        }
        if score >= 0.2 {
            out.push((score, why, e.index));
        }
    }
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
    out
}

impl Session {
    /// Takes a fresh snapshot and ranks its elements; the candidates carry its tokens.
    pub fn find_elements(
        &self,
        request: &FindRequest,
    ) -> Result<(Snapshot, Vec<Candidate>), Error> {
        if request.description.trim().is_empty() && request.name_contains.trim().is_empty() {
            return Err(Error::InvalidArgument {
                message: "pass description (free text) or name_contains".to_string(),
            });
        }
        // With pins, the screenshot is taken once the candidates are known.
        let annotate = request.annotate && request.tree.include_screenshot;
        let mut snapshot = self.window_state(&TreeRequest {
            include_screenshot: request.tree.include_screenshot && !annotate,
            ..request.tree.clone()
        })?;
        let described = labels::describe(&snapshot.elements);
        let role = request.role.trim().to_lowercase();
        let role_ok = |e: &Element| role.is_empty() || e.role.as_str().to_lowercase() == role;
        let ranked: Vec<(f64, String, usize)> = if request.name_contains.trim().is_empty() {
            rank_with(
                &snapshot.elements,
                &described,
                &request.description,
                Compare::Exact,
            )
            .into_iter()
            .filter(|(_, _, i)| role_ok(&snapshot.elements[*i]))
            .collect()
        } else {
            let needle = request.name_contains.trim().to_lowercase();
            snapshot
                .elements
                .iter()
                .filter(|e| role_ok(e))
                .filter(|e| {
                    e.name.to_lowercase().contains(&needle)
                        || e.value
                            .as_deref()
                            .is_some_and(|v| v.to_lowercase().contains(&needle))
                        || e.description.to_lowercase().contains(&needle)
                        || described[e.index]
                            .as_ref()
                            .is_some_and(|d| d.text.to_lowercase().contains(&needle))
                })
                .map(|e| (1.0, "contains the text".to_string(), e.index))
                .collect()
        };
        let best = ranked.first().map_or(0.0, |r| r.0);
        let ranked: Vec<_> = ranked
            .into_iter()
            .take(request.limit.clamp(1, 50))
            .collect();
        if annotate {
            let bounds: Vec<Option<Rect>> = ranked
                .iter()
                .map(|(_, _, i)| snapshot.elements[*i].bounds)
                .collect();
            let pins = |view: &ViewGeometry| {
                bounds
                    .iter()
                    .enumerate()
                    .filter_map(|(n, b)| {
                        Some(Marker {
                            number: n + 1,
                            rect: view.physical_rect_to_image((*b)?)?,
                        })
                    })
                    .collect()
            };
            let request = ScreenshotRequest {
                target: CaptureTarget::Window(snapshot.window.id),
                max_width: request.tree.max_width,
                format: None,
            };
            match self.screenshot_with_pins(&request, &pins) {
                Ok(shot) => snapshot.screenshot = Some(shot),
                Err(e) => snapshot.notes.push(Note::NoScreenshot {
                    code: e.code(),
                    error: e.to_string(),
                }),
            }
        }
        let view = snapshot.screenshot.as_ref().map(|s| s.view);
        let candidates = ranked
            .into_iter()
            .map(|(score, why, i)| {
                let e = &snapshot.elements[i];
                let described = described[i].as_ref();
                let image = e.bounds.zip(view).and_then(|(b, v)| {
                    v.physical_to_image(deskpilot_types::Point::new(
                        b.x + b.width as i32 / 2,
                        b.y + b.height as i32 / 2,
                    ))
                });
                Candidate {
                    token: e.token.clone(),
                    index: e.index,
                    role: e.role,
                    name: e.name.clone(),
                    value: e.value.clone(),
                    score: (score * 100.0).round() / 100.0,
                    why,
                    bounds: e.bounds,
                    image,
                    enabled: e.enabled,
                    password: e.password,
                    actions: e.actions.clone(),
                    name_from: described.map(|d| d.from),
                    described_as: described.map(|d| d.text.clone()),
                    source: "accessibility",
                    screenshot_id: None,
                    confidence: None,
                }
            })
            .collect();
        let mut candidates: Vec<Candidate> = candidates;
        if best < GOOD_MATCH {
            self.ocr_candidates(request, &mut snapshot, &mut candidates);
        }
        Ok((snapshot, candidates))
    }
}

impl Session {
    /// Adds what OCR reads off the window's pixels that matches the request: for windows
    /// without a useful tree (terminals, canvases). Candidates stay ordered by score; an OCR
    /// failure is a note, never the call's failure.
    fn ocr_candidates(
        &self,
        request: &FindRequest,
        snapshot: &mut Snapshot,
        candidates: &mut Vec<Candidate>,
    ) {
        let read = match self.ocr(&crate::ocr::OcrRequest::new(CaptureTarget::Window(
            snapshot.window.id,
        ))) {
            Ok(read) => read,
            Err(e) => {
                snapshot.notes.push(Note::OcrUnreadable {
                    code: e.code(),
                    error: e.to_string(),
                });
                return;
            }
        };
        let lines: Vec<Element> = read
            .lines
            .iter()
            .enumerate()
            .map(|(i, l)| text_element(i, &l.line.text, l.line.bounds))
            .collect();
        let ranked: Vec<(f64, String, usize)> = if request.name_contains.trim().is_empty() {
            rank_ocr(&lines, &request.description)
        } else {
            let mut found: Vec<(f64, String, usize)> = lines
                .iter()
                .filter_map(|e| match text_match(&e.name, &request.name_contains)? {
                    TextMatch::Exact => Some((1.0, "contains the text".to_string(), e.index)),
                    TextMatch::Tolerant => Some((
                        0.9,
                        "contains the text, as OCR reads it".to_string(),
                        e.index,
                    )),
                })
                .collect();
            found.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
            found
        };
        let found = ranked.len();
        for (score, why, i) in ranked {
            let line = &read.lines[i];
            candidates.push(Candidate {
                token: String::new(),
                index: i,
                role: Role::Text,
                name: line.line.text.clone(),
                value: None,
                score: (score * 100.0).round() / 100.0,
                why: format!("{why} (read off the pixels by OCR)"),
                bounds: Some(line.line.bounds),
                image: line.image_centre,
                enabled: true,
                password: false,
                actions: Vec::new(),
                name_from: None,
                described_as: None,
                source: "ocr",
                screenshot_id: Some(read.screenshot.id),
                confidence: Some((line.line.confidence * 10.0).round() / 10.0),
            });
        }
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
        candidates.truncate(request.limit.clamp(1, 50));
        snapshot.notes.push(Note::OcrSearched {
            found,
            lines: read.lines.len(),
            screenshot: read.screenshot.id,
        });
    }
}

/// A control picked by its visible name ([`Session::element_named`]).
#[derive(Debug, Clone)]
pub enum ByName {
    /// The one control so named.
    One(Element),
    /// No on-screen control is so named; `activatable` are the named on-screen controls that
    /// activate, in tree order (what the window offers instead).
    Missing {
        window: WindowInfo,
        activatable: Vec<Element>,
    },
    /// Several controls are so named, after preferring those that activate.
    Several(Vec<Element>),
}

/// The on-screen elements named `want` (trimmed, lower case): exact names before containing
/// ones; of several, the ones that activate (a label inside a button with the same name is
/// the button, not a second control).
fn named<'a>(elements: &'a [Element], want: &str) -> Vec<&'a Element> {
    let with = |exact: bool| -> Vec<&Element> {
        elements
            .iter()
            .filter(|e| e.onscreen)
            .filter(|e| {
                let n = e.name.trim().to_lowercase();
                if exact { n == want } else { n.contains(want) }
            })
            .collect()
    };
    let mut found = with(true);
    if found.is_empty() {
        found = with(false);
    }
    if found.len() > 1 {
        let acting: Vec<&Element> = found
            .iter()
            .copied()
            .filter(|e| e.affordance().activates())
            .collect();
        if !acting.is_empty() {
            found = acting;
        }
    }
    found
}

impl Session {
    /// The control of a fresh read of `tree.window` whose visible name is `name`
    /// (case-insensitive): exact names win over containing ones, and of several the ones
    /// that activate. An empty name is `INVALID_ARGUMENT`.
    pub fn element_named(&self, tree: &TreeRequest, name: &str) -> Result<ByName, Error> {
        let snapshot = self.window_state(tree)?;
        let want = name.trim().to_lowercase();
        if want.is_empty() {
            return Err(Error::InvalidArgument {
                message: "name is empty: pass the control's visible text".to_string(),
            });
        }
        let found = named(&snapshot.elements, &want);
        Ok(match found.as_slice() {
            [] => ByName::Missing {
                activatable: snapshot
                    .elements
                    .iter()
                    .filter(|e| {
                        e.onscreen && !e.name.trim().is_empty() && e.affordance().activates()
                    })
                    .cloned()
                    .collect(),
                window: snapshot.window,
            },
            [one] => ByName::One((*one).clone()),
            many => ByName::Several(many.iter().map(|e| (*e).clone()).collect()),
        })
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::fake::element;

    use super::*;

    fn el(index: usize, role: Role, name: &str, enabled: bool) -> Element {
        let raw = element(role, name).states(|s| s.enabled = enabled).build();
        Element {
            token: format!("s1:{index}"),
            ..Element::from_raw(index, raw)
        }
    }

    /// The GTK file chooser as read: the name entry is unnamed, "Name:" sits on its left, a
    /// column header is called "Name" and OCR would read "Name" too.
    #[test]
    fn an_unnamed_field_is_found_by_the_label_beside_it() {
        let at = |mut e: Element, parent: Option<usize>, b: Rect| {
            e.parent = parent;
            e.bounds = Some(b);
            e
        };
        let elements = vec![
            at(
                el(0, Role::Dialog, "Save File", true),
                None,
                Rect::new(0, 0, 800, 600),
            ),
            at(
                el(1, Role::Group, "", true),
                Some(0),
                Rect::new(10, 10, 780, 40),
            ),
            at(
                el(2, Role::Text, "Name:", true),
                Some(1),
                Rect::new(20, 20, 50, 20),
            ),
            at(
                el(3, Role::Edit, "", true),
                Some(1),
                Rect::new(80, 16, 400, 28),
            ),
            at(
                el(4, Role::ColumnHeader, "Name", true),
                Some(0),
                Rect::new(200, 100, 200, 20),
            ),
        ];
        let r = rank(&elements, "file name field");
        assert_eq!(r[0].2, 3, "{r:?}");
        assert!(r[0].1.contains("label \"Name:\" beside it"), "{r:?}");
        let r = rank(&elements, "Name");
        let place = |i: usize| r.iter().position(|x| x.2 == i);
        assert!(
            place(3) < place(2),
            "the field before the label that names it: {r:?}"
        );
    }

    #[test]
    fn kind_words() {
        assert_eq!(
            kinds("the Save button"),
            (
                "save".to_string(),
                vec![Role::Button, Role::ToggleButton],
                vec!["button"]
            )
        );
        assert_eq!(kinds("保存按钮").0, "保存");
        // A Qt editor's only large Edit has no name: "text editor" is a kind, nothing more.
        assert_eq!(
            kinds("the text editor"),
            (
                String::new(),
                vec![Role::Edit, Role::Document],
                vec!["text editor"]
            )
        );
    }

    #[test]
    fn cjk_prefix_kind_words_and_demotion() {
        let elements = vec![
            el(0, Role::Text, "保存设置说明", true),
            el(1, Role::Button, "保存并关闭", true),
            el(2, Role::Button, "关闭", true),
            el(3, Role::Button, "Save", false),
            el(4, Role::Text, "Save", true),
            el(5, Role::Button, "Save As…", true),
        ];
        let r = rank(&elements, "保存");
        assert_eq!(r[0].2, 1, "{r:?}");
        assert!(
            r.iter().all(|(_, _, i)| *i != 2),
            "关闭 does not match 保存: {r:?}"
        );
        let r = rank(&elements, "save button");
        assert_eq!(
            r[0].2, 5,
            "an enabled Save-ish button beats a disabled exact one: {r:?}"
        );
        assert!(r.iter().position(|x| x.2 == 3) < r.iter().position(|x| x.2 == 4).or(Some(99)));
        let r = rank(&elements, "ＳＡＶＥ");
        assert_eq!(
            r[0].2, 4,
            "full-width folds; the enabled exact match leads: {r:?}"
        );
        assert!(r[0].1.contains("name equals"));
    }

    /// Ranks Text elements named `names` for `query` and renders the result, one candidate a
    /// line: score, name, reason.
    fn ranked(compare: Compare, names: &[&str], query: &str) -> String {
        let elements: Vec<Element> = names
            .iter()
            .enumerate()
            .map(|(i, n)| el(i, Role::Text, n, true))
            .collect();
        rank_with(&elements, &labels::describe(&elements), query, compare)
            .iter()
            .map(|(score, why, i)| format!("{score:.2} \"{}\" {why}\n", names[*i]))
            .collect()
    }

    #[test]
    fn latin_matches_whole_words_and_a_part_must_be_a_fair_share() {
        use Compare::Exact;
        // (query, names, ranking)
        let cases: &[(&str, &[&str], &str)] = &[
            // Regression (issue 22): a Chromium page's "in" was offered for "retain".
            ("retain", &["in", "Text", "retained"], ""),
            (
                "retain",
                &["in", "Retain cycles", "retain"],
                "1.00 \"retain\" name equals the query\n\
                 0.84 \"Retain cycles\" name contains the query\n",
            ),
            ("save", &["Unsaved changes", "autosave"], ""),
            (
                "save file",
                &["Save", "file"],
                "0.60 \"Save\" name is part of the query\n\
                 0.60 \"file\" name is part of the query\n",
            ),
            // "open" is a whole word of the query but a small share of it: only shared words.
            (
                "open recent files",
                &["Open"],
                "0.22 \"Open\" name shares words with the query\n",
            ),
            // CJK keeps substring and bigram rules.
            (
                "保存文件",
                &["保存", "文"],
                "0.60 \"保存\" name is part of the query\n",
            ),
            (
                "保存",
                &["保存并关闭", "关闭"],
                "0.83 \"保存并关闭\" name contains the query\n",
            ),
            (
                "保存 file",
                &["保存file"],
                "0.65 \"保存file\" name shares words with the query\n",
            ),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .filter(|(query, names, want)| ranked(Exact, names, query) != *want)
            .map(|(query, names, _)| {
                format!("{query:?} over {names:?}:\n{}", ranked(Exact, names, query))
            })
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn ocr_lines_match_as_ocr_reads_text_below_every_exact_match() {
        let cases: &[(&str, &[&str], &str)] = &[
            // Regression (issue 22): OCR split "9271" into "927 1".
            (
                "LATER 9271",
                &["LATER 927 1 READY", "LATER 9271 READY", "Invoice 4711"],
                "0.88 \"LATER 9271 READY\" name contains the query\n\
                 0.70 \"LATER 927 1 READY\" name contains the query as OCR reads text\n",
            ),
            (
                "Invoice 4711",
                &["lnvoice 47I1", "Invoice 4711"],
                "1.00 \"Invoice 4711\" name equals the query\n\
                 0.74 \"lnvoice 47I1\" name equals the query as OCR reads text\n",
            ),
            (
                "total 98.50",
                &["T0TAL 98. 50"],
                "0.74 \"T0TAL 98. 50\" name equals the query as OCR reads text\n",
            ),
            // Full-width forms fold before anything else: an exact match.
            (
                "LATER 9271",
                &["ＬＡＴＥＲ　９２７１"],
                "1.00 \"ＬＡＴＥＲ　９２７１\" name equals the query\n",
            ),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .filter(|(query, names, want)| ranked(Compare::Ocr, names, query) != *want)
            .map(|(query, names, _)| {
                format!(
                    "{query:?} over {names:?}:\n{}",
                    ranked(Compare::Ocr, names, query)
                )
            })
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        // The tree is never matched tolerantly: only the shared word counts there.
        assert_eq!(
            ranked(Compare::Exact, &["LATER 927 1 READY"], "LATER 9271"),
            "0.33 \"LATER 927 1 READY\" name shares words with the query\n"
        );
    }
}
