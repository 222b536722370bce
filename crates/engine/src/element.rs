//! Acting on elements of a snapshot by token: semantic first, pixels as the fallback.
//!
//! `click` on a token does what a person's click does, through the accessibility API where it
//! can: a row or cell is selected in its container (never activated: that opens the file), a
//! text field gets the keyboard focus, anything else runs its default action (click / press /
//! activate …). When that cannot be done, or the app refuses it, the pointer clicks the
//! element's centre — after checking the window has not moved since the snapshot and that no
//! other app covers the point. Every result says which route ran, and every click judges its
//! effect from the element's states, name and value and the window list, read before and after.
//!
//! `set_value` is verified: read back, typed when the app ignored the accessibility interface,
//! and `VALUE_NOT_SET` when the field still holds something else.
//!
//! A token names an element, not a position: before acting, the element is re-read in its
//! application. Gone, another role, or another name on an item-like role (a re-sorted list's
//! positional cells) is `STALE_ELEMENT`, like a token from an older snapshot; moved inside its
//! window, it is acted on where it is now. A pointer fallback first asks the toolkit's hit
//! test whether the centre reaches the element, and refuses (`ELEMENT_COVERED`) when it does not.

use std::time::{Duration, Instant};

use deskpilot_backend::{Button, ElementStates};
use deskpilot_types::{Key, Point, Rect, Role, WindowInfo};

use crate::action::{Effect, Outcome, Route};
use crate::pointer::Receipt;
use crate::registry::Pin;
use crate::snapshots::{ElementRef, same_element};
use crate::tree::Element;
use crate::verify::VerifyTarget;
use crate::{config::HitTestMode, error::Error, safety::Mutation, session::Session};

/// Operations with a meaning of their own, checked against the element's states afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementOp {
    /// Flip a check box, toggle button or switch.
    Toggle,
    /// Open a combo box, tree node, expander or menu.
    Expand,
    /// Close what `Expand` opened.
    Collapse,
    /// Select a list row, tab or tree item in its container.
    Select,
}

impl ElementOp {
    pub fn parse(s: &str) -> Option<ElementOp> {
        match s.trim().to_ascii_lowercase().as_str() {
            "toggle" => Some(ElementOp::Toggle),
            "expand" => Some(ElementOp::Expand),
            "collapse" => Some(ElementOp::Collapse),
            "select" => Some(ElementOp::Select),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ElementOp::Toggle => "toggle",
            ElementOp::Expand => "expand",
            ElementOp::Collapse => "collapse",
            ElementOp::Select => "select",
        }
    }

    /// Advertised actions that carry the operation out, best first.
    fn actions(self) -> &'static [&'static str] {
        match self {
            // Gecko names a check box's action after what it will do: "check" / "uncheck".
            ElementOp::Toggle => &["toggle", "click", "press", "activate", "check", "uncheck"],
            ElementOp::Expand => &[
                "expand",
                "expand or contract",
                "open",
                "toggle",
                "press",
                "click",
                "activate",
            ],
            ElementOp::Collapse => &[
                "collapse",
                "expand or contract",
                "close",
                "toggle",
                "press",
                "click",
                "activate",
            ],
            ElementOp::Select => &["select"],
        }
    }

    /// Whether `states` show the operation's effect, given the states before it.
    fn done(self, before: &ElementStates, now: &ElementStates) -> bool {
        match self {
            ElementOp::Toggle => now.checked != before.checked,
            ElementOp::Expand => now.expanded,
            ElementOp::Collapse => !now.expanded,
            ElementOp::Select => now.selected,
        }
    }
}

/// How long an operation's effect may take to show in the element's states.
const EFFECT_WAIT: Duration = Duration::from_millis(1500);

/// What an element action did.
#[derive(Debug, Clone)]
pub struct ElementOutcome {
    pub element: Element,
    pub window: WindowInfo,
    /// Accessibility or input.
    pub route: Route,
    /// The action that ran (`"click"`), or what the pointer did.
    pub detail: String,
    pub receipt: Option<Receipt>,
    pub notes: Vec<ElementNote>,
    /// `Confirmed` / `SuspectedNoop` when the element's states (or its text read back) were
    /// checked afterwards; `None` when nothing could be checked.
    pub effect: Option<(Effect, &'static str)>,
    /// The effect was judged from part of what the action may change (a click: the element
    /// and the window list), so a change on screen outweighs its `SuspectedNoop`.
    pub judged_in_part: bool,
}

/// A fact beside an element action's outcome. `Display` is the default wording; it serializes
/// as that wording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElementNote {
    /// The accessibility action failed; the pointer clicked instead.
    ActionFailed { action: String, error: String },
    /// The element advertises no click action; the pointer clicked.
    NoClickAction { actions: Vec<String> },
    /// The text read back after `set_value` differs from what was set.
    ReadsOtherwise { read: String },
    /// The element's states did not show the operation's effect in time.
    StatesUnchanged { op: ElementOp, waited: Duration },
    /// The element went away with the action.
    Gone,
    /// Nothing a click could be seen to change (the element's states, name and value, the
    /// window list) changed within `waited`.
    NothingChanged { waited: Duration },
    /// The application did not answer the reads after the action in time (busy or hung):
    /// its effect was not judged.
    NoAnswer { waited: Duration },
    /// The application accepted `set_value` but read otherwise afterwards; the text was typed.
    SetValueIgnored { read: String },
    /// A text field the application did not give the focus through the accessibility
    /// interface: the pointer clicked it.
    FocusIgnored,
    /// A row or cell whose container offers no selection interface: the pointer clicked it.
    NoSelection,
    /// The element moved inside its window since the snapshot; the action used where it is now.
    Moved { from: Rect, to: Rect },
}

impl std::fmt::Display for ElementNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ElementNote::ActionFailed { action, error } => write!(
                f,
                "the accessibility action \"{action}\" failed ({error}); clicked with the pointer instead"
            ),
            ElementNote::NoClickAction { actions } => write!(
                f,
                "the element advertises no click action (it has [{}]); clicked with the pointer",
                actions.join(", ")
            ),
            ElementNote::ReadsOtherwise { read } => write!(
                f,
                "the element now reads \"{read}\", not exactly what was set (the app may format or limit it)"
            ),
            ElementNote::StatesUnchanged { op, waited } => write!(
                f,
                "the element's states did not show it {} within {} ms",
                match op {
                    ElementOp::Toggle => "toggled",
                    ElementOp::Expand => "expanded",
                    ElementOp::Collapse => "collapsed",
                    ElementOp::Select => "selected",
                },
                waited.as_millis()
            ),
            ElementNote::Gone => {
                f.write_str("the element is gone after the action; read the window's tree again")
            }
            ElementNote::NoAnswer { waited } => write!(
                f,
                "the application did not answer within {} ms after the action (it may be busy): its effect was not judged; read the window again once it answers",
                waited.as_millis()
            ),
            ElementNote::NothingChanged { waited } => write!(
                f,
                "nothing changed within {} ms: the element's states, name and value and the window list read as before (pass verify: true to compare the screen too)",
                waited.as_millis()
            ),
            ElementNote::SetValueIgnored { read } => write!(
                f,
                "the application took the value through the accessibility interface but then read \"{read}\"; it was typed instead"
            ),
            ElementNote::FocusIgnored => f.write_str(
                "the application did not move the keyboard focus to it through the accessibility interface; clicked it with the pointer, as a person would"
            ),
            ElementNote::NoSelection => f.write_str(
                "its container offers no selection to the accessibility interface; clicked it with the pointer, as a person would"
            ),
            ElementNote::Moved { from, to } => write!(
                f,
                "the element moved since the snapshot (from {from} to {to}); acted where it is now"
            ),
        }
    }
}

impl serde::Serialize for ElementNote {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// `set_value`'s outcome and the text read back.
impl Outcome for (ElementOutcome, String) {
    fn route(&self) -> Route {
        self.0.route
    }

    fn judged(&self) -> Option<(Effect, &'static str)> {
        self.0.effect
    }
}

/// What an element operation's effect is read from.
const STATES: &str = "the element's states";
/// What a click's effect was looked for in, when nothing changed.
const LOOKED: &str = "the element's states, name and value, and the window list";

impl Outcome for ElementOutcome {
    fn route(&self) -> Route {
        self.route
    }

    fn judged(&self) -> Option<(Effect, &'static str)> {
        self.effect
    }

    fn screen_outweighs_noop(&self) -> bool {
        self.judged_in_part
    }
}

/// A backend failure of an operation on `element`, as the agent needs it: gone from the
/// app → `STALE_ELEMENT`; not supported by the element → `ACTION_UNSUPPORTED` naming what it
/// does offer; anything else as it is.
fn element_err(element: &Element, what: &str, e: deskpilot_backend::Error) -> Error {
    use deskpilot_backend::Error as B;
    match e {
        B::ElementGone { reason } => Error::StaleElement {
            token: element.token.clone(),
            why: format!("the element no longer exists in the application ({reason})"),
        },
        B::Unsupported { reason, .. } => unsupported(element, what, &reason),
        e => Error::Backend(e),
    }
}

/// `ACTION_UNSUPPORTED` for `what` on `element`.
fn unsupported(element: &Element, what: &str, reason: &str) -> Error {
    Error::ActionUnsupported(Box::new(crate::error::Unsupported {
        token: element.token.clone(),
        role: element.role.to_string(),
        name: element.name.clone(),
        action: what.to_string(),
        offered: element.actions.clone(),
        editable: element.editable,
        reason: reason.to_string(),
    }))
}

/// The first of `preferred` the element advertises, spelled as the element spells it.
fn advertised(element: &Element, preferred: &[&str]) -> Option<String> {
    preferred.iter().find_map(|want| {
        element
            .actions
            .iter()
            .find(|a| a.eq_ignore_ascii_case(want))
            .cloned()
    })
}

/// `toggle CheckBox "Enable logging" (s3:19) in "Title" (process, pid N)`.
pub(crate) fn label(what: &str, element: &Element, window: &WindowInfo) -> String {
    format!(
        "{what} {} \"{}\" ({}) in {}",
        element.role,
        element.name,
        element.token,
        window.label()
    )
}

/// How long a click's effect may take to show in what [`Look`] reads.
const CLICK_WAIT: Duration = Duration::from_millis(500);
/// How long a read-back must stay the same to be the answer when it is not the value set.
const SETTLED: Duration = Duration::from_millis(150);
/// The longest `set_value` waits for its read-back.
const READ_BACK_MAX: Duration = Duration::from_secs(3);

/// How long one look at an element may take before the application counts as busy.
const LOOK_LIMIT: Duration = Duration::from_millis(1000);

/// Reads what a click may change: the element (through `live`, else `states`; its value when
/// `value`) and the window list.
fn read_look(
    desktop: &deskpilot_backend::Desktop,
    handle: &deskpilot_backend::ElementHandle,
    value: bool,
) -> Look {
    use deskpilot_backend::Error as B;
    let accessibility = &desktop.accessibility;
    let mut look = Look::default();
    match accessibility.live(handle) {
        Ok(l) => {
            look.states = Some(l.states);
            look.name = Some(l.name);
        }
        Err(B::ElementGone { .. }) => look.gone = true,
        Err(_) => match accessibility.states(handle) {
            Ok(s) => look.states = Some(s),
            Err(B::ElementGone { .. }) => look.gone = true,
            Err(_) => {}
        },
    }
    if value && !look.gone {
        look.value = accessibility.read_text(handle).ok();
    }
    look.windows = desktop.windows.list_windows().ok().map(|ws| {
        (
            ws.iter().map(|w| w.id).collect(),
            ws.iter().find(|w| w.state.active).map(|w| w.id),
        )
    });
    look
}

/// What a click's effect is judged from: the element and the window list, read before the
/// click and polled after it.
#[derive(Debug, Clone, Default)]
struct Look {
    /// `None`: the element's states could not be read.
    states: Option<ElementStates>,
    name: Option<String>,
    /// Read only for elements that hold a value.
    value: Option<String>,
    /// The application says the element no longer exists.
    gone: bool,
    /// The reads did not finish in time (the application is busy or hung).
    unanswered: bool,
    /// Every window's id, and the active one.
    windows: Option<(
        Vec<deskpilot_types::WindowId>,
        Option<deskpilot_types::WindowId>,
    )>,
}

impl Look {
    /// Whether anything of the element itself could be read.
    fn readable(&self) -> bool {
        self.states.is_some() || self.value.is_some()
    }

    /// What changed since `before`, named as an effect's evidence; `None` when nothing did.
    fn change_since(&self, before: &Look) -> Option<&'static str> {
        if self.gone && !before.gone {
            return Some("the element going away");
        }
        if let (Some(a), Some(b)) = (&before.states, &self.states) {
            let seen =
                |s: &ElementStates| (s.checked, s.expanded, s.selected, s.focused, s.enabled);
            if seen(a) != seen(b) {
                return Some(STATES);
            }
        }
        if let (Some(a), Some(b)) = (&before.name, &self.name)
            && a != b
        {
            return Some("the element's name");
        }
        if let (Some(a), Some(b)) = (&before.value, &self.value)
            && a != b
        {
            return Some("the element's value");
        }
        if let (Some((a, active_a)), Some((b, active_b))) = (&before.windows, &self.windows)
            && (active_a != active_b
                || b.iter().any(|w| !a.contains(w))
                || a.iter().any(|w| !b.contains(w)))
        {
            return Some("the window list");
        }
        None
    }
}

/// Whether a click's effect is looked for in the element's value too: fields and other
/// elements showing one (not a document, whose whole text may be long).
fn reads_value(element: &Element) -> bool {
    (element.editable || element.value.is_some()) && element.role != Role::Document
}

/// A click's route, what ran, its receipt, whose states show its effect and what they
/// should come to.
type ClickRoute = (
    Route,
    String,
    Option<Receipt>,
    deskpilot_backend::ElementHandle,
    Option<fn(&ElementStates) -> bool>,
);

/// Whether `read` is plausibly the application's formatting of `wanted` rather than a value
/// that did not take. It must not be empty (unless `wanted` is), and be one of: the same text
/// up to case and spacing ("ABC" for "abc"); the same number ("5.00" or "5 px" for "5",
/// "1,000" for "1000"); or the same digits with only punctuation between them ("555-1234" for
/// "5551234", "2024/01/05" for "2024-01-05"). Anything else — an empty field, the old text,
/// a part of the value (keys still arriving, or a length limit the agent must hear of),
/// other text — did not take.
pub(crate) fn reads_as_formatted(wanted: &str, read: &str) -> bool {
    if read.trim().is_empty() {
        return wanted.trim().is_empty();
    }
    let fold = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    if fold(wanted) == fold(read) {
        return true;
    }
    if let (Some(a), Some(b)) = (number(wanted, 0), number(read, 4)) {
        return (a - b).abs() <= 1e-9 * a.abs().max(1.0);
    }
    let digits = |s: &str| s.chars().filter(char::is_ascii_digit).collect::<String>();
    let wanted_digits = digits(wanted);
    if wanted_digits.len() >= 3
        && digits(read) == wanted_digits
        && !read.chars().any(char::is_alphabetic)
    {
        return true;
    }
    false
}

/// `s` as a number: grouping marks (`,`, `_`, `'`, spaces) left out, up to `affix` signs
/// before it (`$`, `€`) and up to `affix` characters of a unit after it (` %`, ` px`).
fn number(s: &str, affix: usize) -> Option<f64> {
    let bare: String = s
        .trim()
        .chars()
        .filter(|c| !matches!(c, ',' | '_' | '\'' | ' ' | '\u{a0}' | '\u{202f}'))
        .collect();
    let numeric = |c: char| c.is_ascii_digit() || matches!(c, '.' | '-' | '+');
    let start = bare.find(numeric)?;
    let end = bare.rfind(|c: char| c.is_ascii_digit() || c == '.')? + 1;
    // A currency sign may lead ("$5"); a unit may follow ("5 px", "50 %").
    if start > affix
        || bare[..start].chars().any(char::is_alphanumeric)
        || bare.len() - end > affix
        || start >= end
    {
        return None;
    }
    bare[start..end].parse().ok()
}

/// Whether a person's click on `element` is for typing into it: a text field (not a combo
/// box, whose click opens its list).
fn focuses_on_click(element: &Element) -> bool {
    (element.editable || element.role == Role::Edit) && element.role != Role::ComboBox
}

/// Roles a person's click selects rather than opens: rows, cells, list and tree items.
fn selects_on_click(role: Role) -> bool {
    matches!(
        role,
        Role::ListItem | Role::Cell | Role::Row | Role::TreeItem
    )
}

/// How a selection through the container is said: the element's own, or the row holding it.
fn selected_detail(element: &Element, item: &Element) -> String {
    if item.index == element.index {
        "selected in its container".to_string()
    } else {
        format!(
            "selected its {} \"{}\" in the container",
            item.role, item.name
        )
    }
}

/// An element re-checked just before an action: its window as the snapshot saw it and as it
/// is now, the element as it is now, and what the re-check found worth saying.
pub(crate) struct Target {
    pub(crate) seen: WindowInfo,
    pub(crate) now: WindowInfo,
    pub(crate) element: Element,
    pub(crate) notes: Vec<ElementNote>,
}

/// Re-reads `element` in its application and refreshes it (bounds, name, states), or refuses
/// it when the handle now stands for another element.
fn recheck(s: &Session, element: &mut Element, notes: &mut Vec<ElementNote>) -> Result<(), Error> {
    use deskpilot_backend::Error as B;
    let live = match s.desktop().accessibility.live(&element.handle) {
        Ok(live) => live,
        Err(B::ElementGone { reason }) => {
            return Err(Error::StaleElement {
                token: element.token.clone(),
                why: format!("the element no longer exists in the application ({reason})"),
            });
        }
        Err(e) => {
            // Unsupported here, or a slow answer: act as the snapshot saw it.
            tracing::debug!(error = %e, "the element could not be re-read before acting");
            return Ok(());
        }
    };
    if !same_element(element.role, &element.name, live.role, &live.name) {
        return Err(Error::StaleElement {
            token: element.token.clone(),
            why: format!(
                "the element there is now {} \"{}\", not the {} \"{}\" the snapshot saw",
                live.role, live.name, element.role, element.name
            ),
        });
    }
    if let (Some(from), Some(to)) = (element.bounds, live.bounds)
        && from != to
    {
        notes.push(ElementNote::Moved { from, to });
    }
    if live.bounds.is_some() {
        element.bounds = live.bounds;
    }
    element.name = live.name;
    let (onscreen, protected) = (element.states.onscreen, element.states.protected);
    element.states = ElementStates {
        onscreen,
        // A role in AT-SPI: a live state read does not know it.
        protected: protected || live.states.protected,
        ..live.states
    };
    element.enabled = live.states.enabled;
    element.focused = live.states.focused;
    element.selected = live.states.selected;
    element.checked = live.states.checked;
    element.expanded = live.states.expanded;
    Ok(())
}

/// Refuses to act on a control that is disabled now (as re-read just before acting): a
/// person's click or typing would do nothing, and the effect of a later enabling must not be
/// taken for the action's.
pub(crate) fn enabled_now(element: &Element) -> Result<(), Error> {
    if element.enabled || !element.role.is_interactive() {
        return Ok(());
    }
    Err(Error::ElementDisabled {
        token: element.token.clone(),
        role: element.role.to_string(),
        name: element.name.clone(),
    })
}

impl Session {
    /// Resolves `target`, checks its window still exists with the same owner, and re-checks
    /// the element itself in its application ([`Accessibility::live`]): gone, another role, or
    /// (for an item-like role) another name is `STALE_ELEMENT` saying what it is now; moved
    /// inside the window, it is acted on where it is now and an [`ElementNote::Moved`] says so.
    /// A backend that cannot re-read elements leaves the snapshot's element as it was.
    ///
    /// [`Accessibility::live`]: deskpilot_backend::Accessibility::live
    pub(crate) fn live_element(&self, target: &ElementRef) -> Result<Target, Error> {
        let (seen, mut element) = self.element(target.clone())?;
        let windows = self.desktop().windows.list_windows()?;
        let now = windows
            .into_iter()
            .find(|w| w.id == seen.id)
            .ok_or(Error::TargetWindowGone(seen.id))?;
        if now.pid != seen.pid {
            return Err(Error::TargetWindowChanged {
                id: seen.id,
                was: seen.pid,
                now: now.pid,
            });
        }
        let mut notes = Vec::new();
        recheck(self, &mut element, &mut notes)?;
        self.aim(VerifyTarget::Window(now.id));
        let path = self
            .snapshots_now()
            .newest_of(now.id)
            .and_then(|(_, elements, _)| {
                crate::paths::paths(&elements)
                    .into_iter()
                    .nth(element.index)
            })
            .unwrap_or_default();
        self.note_element(&now, &element, path);
        Ok(Target {
            seen,
            now,
            element,
            notes,
        })
    }

    /// Reads what a click may change: the element (through `live`, else `states`; its value
    /// when `value`) and the window list.
    fn look(&self, handle: &deskpilot_backend::ElementHandle, value: bool) -> Look {
        self.look_within(handle, value, LOOK_LIMIT)
    }

    /// [`look`](Self::look) that gives up after `within`: the reads run on a thread of their
    /// own, so an application that hangs (after a click that made it busy) costs the action
    /// `within`, never the backend's whole operation timeout. Given up, the look is
    /// `unanswered` and the thread finishes on its own.
    fn look_within(
        &self,
        handle: &deskpilot_backend::ElementHandle,
        value: bool,
        within: Duration,
    ) -> Look {
        let desktop = self.desktop();
        let owned = handle.clone();
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let spawned = std::thread::Builder::new()
            .name("deskpilot-look".into())
            .spawn(move || {
                let _ = tx.send(read_look(&desktop, &owned, value));
            });
        match spawned {
            Ok(_) => rx.recv_timeout(within).unwrap_or(Look {
                unanswered: true,
                ..Look::default()
            }),
            Err(_) => read_look(&self.desktop(), handle, value),
        }
    }

    /// Judges a click on `handle` against `before`: polls up to [`CLICK_WAIT`] until something
    /// changed (or `goal` holds in its states) → `Confirmed`; nothing changed though the element
    /// could be read → `SuspectedNoop` with a note; nothing could be read → `None`.
    fn judge_click(
        &self,
        handle: &deskpilot_backend::ElementHandle,
        before: &Look,
        goal: Option<fn(&ElementStates) -> bool>,
    ) -> (Option<(Effect, &'static str)>, Option<ElementNote>) {
        let deadline = Instant::now() + CLICK_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let now = self.look_within(
                handle,
                before.value.is_some(),
                left.max(Duration::from_millis(300)),
            );
            if now.unanswered {
                let waited = CLICK_WAIT.max(Duration::from_millis(300));
                return (None, Some(ElementNote::NoAnswer { waited }));
            }
            if let (Some(goal), Some(s)) = (goal, &now.states)
                && goal(s)
            {
                return (Some((Effect::Confirmed, STATES)), None);
            }
            if let Some(what) = now.change_since(before) {
                return (Some((Effect::Confirmed, what)), None);
            }
            if Instant::now() >= deadline {
                return if before.readable() && now.readable() {
                    (
                        Some((Effect::SuspectedNoop, LOOKED)),
                        Some(ElementNote::NothingChanged { waited: CLICK_WAIT }),
                    )
                } else {
                    (None, None)
                };
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Gives `element` the keyboard focus through the accessibility interface and waits up to
    /// [`CLICK_WAIT`] for its states to show it. `false` when the backend cannot focus it or
    /// the application did not move the focus (the caller clicks it instead); `true` also when
    /// states cannot be read to check.
    fn focus_confirmed(&self, element: &Element) -> Result<bool, Error> {
        use deskpilot_backend::Error as B;
        let accessibility = &self.desktop().accessibility;
        match accessibility.focus(&element.handle) {
            Ok(()) => {}
            Err(B::ElementGone { reason }) => {
                return Err(Error::StaleElement {
                    token: element.token.clone(),
                    why: format!("the element no longer exists in the application ({reason})"),
                });
            }
            Err(_) => return Ok(false),
        }
        let deadline = Instant::now() + CLICK_WAIT;
        loop {
            match accessibility.states(&element.handle) {
                Ok(s) if s.focused => return Ok(true),
                Ok(_) if Instant::now() >= deadline => return Ok(false),
                Ok(_) => std::thread::sleep(Duration::from_millis(20)),
                Err(_) => return Ok(true),
            }
        }
    }

    /// `element` and the item-like elements holding it (a cell's row), innermost first, as
    /// the newest snapshot of `window` has them: what a selection may go through.
    fn item_chain(&self, element: &Element, window: deskpilot_types::WindowId) -> Vec<Element> {
        let mut chain = vec![element.clone()];
        if let Some((_, elements, _)) = self.snapshots_now().newest_of(window) {
            let mut at = elements.get(element.index).and_then(|e| e.parent);
            while let Some(p) = at.and_then(|i| elements.get(i)) {
                if !crate::snapshots::item_like(p.role) {
                    break;
                }
                chain.push(p.clone());
                at = p.parent;
            }
        }
        chain
    }

    /// Selects `element` through its container's selection (`Accessibility::select`); when its
    /// own container has none, the item holding it (a cell's row) is selected instead. `None`
    /// when no container on the way offers a selection.
    fn select_item(
        &self,
        element: &Element,
        window: deskpilot_types::WindowId,
    ) -> Result<Option<Element>, Error> {
        use deskpilot_backend::Error as B;
        for item in self.item_chain(element, window) {
            match self.desktop().accessibility.select(&item.handle) {
                Ok(()) => return Ok(Some(item)),
                Err(B::Unsupported { .. }) => continue,
                Err(e) => return Err(element_err(element, "select", e)),
            }
        }
        Ok(None)
    }

    /// Clicks an element: its default action, else the pointer at its centre. A row, cell,
    /// list or tree item is selected (as a person's click does), never activated.
    pub fn click_element(
        &self,
        target: impl Into<ElementRef>,
        button: Button,
        count: u8,
        mode: HitTestMode,
    ) -> Result<ElementOutcome, Error> {
        crate::pointer::check_count(count)?;
        let target = target.into();
        let Target {
            seen,
            now,
            element,
            mut notes,
        } = self.live_element(&target)?;
        enabled_now(&element)?;
        self.gate(Mutation::Other, &label("click", &element, &now))?;
        // The element, and for a row or cell the items holding it (the row a cell's click may
        // select), as they are before the click.
        let mut befores = vec![(
            element.handle.clone(),
            self.look(&element.handle, reads_value(&element)),
        )];
        if selects_on_click(element.role) {
            for item in self.item_chain(&element, now.id).into_iter().skip(1) {
                let look = self.look(&item.handle, false);
                befores.push((item.handle, look));
            }
        }
        let (route, detail, receipt, watch, goal) = self.click_route(
            &target, &seen, &now, &element, button, count, mode, &mut notes,
        )?;
        let before = befores
            .into_iter()
            .find(|(h, _)| *h == watch)
            .map(|(_, look)| look)
            .unwrap_or_default();
        let (effect, note) = self.judge_click(&watch, &before, goal);
        notes.extend(note);
        Ok(ElementOutcome {
            element,
            window: now,
            route,
            detail,
            receipt,
            notes,
            effect,
            judged_in_part: true,
        })
    }

    /// How a click reaches the element: the container's selection for a row or cell, the
    /// element's own click action, else the pointer. Returns the route, what ran, the
    /// pointer's receipt, whose states show the effect and what they should come to.
    #[allow(clippy::too_many_arguments)]
    fn click_route(
        &self,
        target: &ElementRef,
        seen: &WindowInfo,
        now: &WindowInfo,
        element: &Element,
        button: Button,
        count: u8,
        mode: HitTestMode,
        notes: &mut Vec<ElementNote>,
    ) -> Result<ClickRoute, Error> {
        if button == Button::Left && count == 1 && selects_on_click(element.role) {
            // A person's click on a row or a cell selects it; the item's own "activate" would
            // open the file. The container's selection, else the pointer.
            match self.select_item(element, now.id)? {
                Some(item) => {
                    return Ok((
                        Route::Accessibility,
                        selected_detail(element, &item),
                        None,
                        item.handle,
                        Some(|s: &ElementStates| s.selected),
                    ));
                }
                None => notes.push(ElementNote::NoSelection),
            }
        } else if button == Button::Left && count == 1 && focuses_on_click(element) {
            // A person's click on a text field puts the keyboard focus in it; its own
            // "activate" may do nothing of the kind (LibreOffice's Name Box).
            if self.focus_confirmed(element)? {
                return Ok((
                    Route::Accessibility,
                    "focus".to_string(),
                    None,
                    element.handle.clone(),
                    Some(|s: &ElementStates| s.focused),
                ));
            }
            notes.push(ElementNote::FocusIgnored);
        } else if button == Button::Left && count == 1 {
            match advertised(element, crate::affordance::CLICK) {
                Some(action) => match self
                    .desktop()
                    .accessibility
                    .do_action(&element.handle, &action)
                {
                    Ok(()) => {
                        return Ok((
                            Route::Accessibility,
                            action,
                            None,
                            element.handle.clone(),
                            None,
                        ));
                    }
                    Err(e) => {
                        let e = element_err(element, "click", e);
                        if matches!(e, Error::StaleElement { .. }) {
                            return Err(e);
                        }
                        notes.push(ElementNote::ActionFailed {
                            action: action.to_string(),
                            error: e.to_string(),
                        });
                    }
                },
                None => notes.push(ElementNote::NoClickAction {
                    actions: element.actions.clone(),
                }),
            }
        }
        let receipt = self.click_centre(target, seen, element, button, count, mode)?;
        Ok((
            Route::Input,
            format!("{} click", format!("{button:?}").to_lowercase()),
            Some(receipt),
            element.handle.clone(),
            None,
        ))
    }

    fn click_centre(
        &self,
        target: &ElementRef,
        seen: &WindowInfo,
        element: &Element,
        button: Button,
        count: u8,
        mode: HitTestMode,
    ) -> Result<Receipt, Error> {
        let Some(b) = element.bounds else {
            return Err(Error::ElementNotFound {
                what: format!("{target} has no position on screen to click"),
            });
        };
        let centre = Point::new(b.x + b.width as i32 / 2, b.y + b.height as i32 / 2);
        // The same checks as a screenshot click, pinned to the window as the snapshot saw it:
        // moved → TARGET_WINDOW_MOVED, covered → CLICK_WRONG_WINDOW.
        let mut checked = self.hit_check(&[centre], Some(Pin::of(seen)), mode)?;
        // Then the toolkit's own hit test: a click there must reach this element (a page that
        // inserted a banner above it has moved it from under its old centre).
        use deskpilot_backend::Error as B;
        match self.desktop().accessibility.hits(&element.handle, centre) {
            Ok(true) => {}
            Ok(false) => {
                return Err(Error::ElementNotAtPoint {
                    token: element.token.clone(),
                    role: element.role.to_string(),
                    name: element.name.clone(),
                    point: centre,
                });
            }
            Err(B::ElementGone { reason }) => {
                return Err(Error::StaleElement {
                    token: element.token.clone(),
                    why: format!("the element no longer exists in the application ({reason})"),
                });
            }
            Err(e) => {
                tracing::debug!(error = %e, "no hit test for the element; clicking its centre")
            }
        }
        let outcome = self.click_checked(checked.remove(0), button, count, &[])?;
        Ok(outcome.receipt)
    }

    /// Invokes an element through its own activation action (click, press, activate, …) —
    /// never a pointer click: an element that advertises none is `ACTION_UNSUPPORTED`
    /// (dsh-computer-use's `ui_element invoke`, which leaves coordinates to the caller).
    pub fn invoke_element(&self, target: impl Into<ElementRef>) -> Result<ElementOutcome, Error> {
        let Target {
            now,
            element,
            notes,
            ..
        } = self.live_element(&target.into())?;
        enabled_now(&element)?;
        let Some(action) = advertised(&element, crate::affordance::CLICK) else {
            return Err(unsupported(
                &element,
                "invoke",
                "it advertises no click, press or activate action",
            ));
        };
        self.gate(Mutation::Other, &label("invoke", &element, &now))?;
        let before = self.look(&element.handle, reads_value(&element));
        self.desktop()
            .accessibility
            .do_action(&element.handle, &action)
            .map_err(|e| element_err(&element, "invoke", e))?;
        let (effect, note) = self.judge_click(&element.handle, &before, None);
        let mut notes = notes;
        notes.extend(note);
        Ok(ElementOutcome {
            element,
            window: now,
            route: Route::Accessibility,
            detail: action,
            receipt: None,
            judged_in_part: true,
            notes,
            effect,
        })
    }

    /// Runs one of the actions the element advertises.
    pub fn perform_action(
        &self,
        target: impl Into<ElementRef>,
        action: &str,
    ) -> Result<ElementOutcome, Error> {
        let Target {
            now,
            element,
            notes,
            ..
        } = self.live_element(&target.into())?;
        enabled_now(&element)?;
        let Some(name) = element
            .actions
            .iter()
            .find(|a| a.eq_ignore_ascii_case(action.trim()))
            .cloned()
        else {
            return Err(unsupported(
                &element,
                action.trim(),
                "the element does not advertise it",
            ));
        };
        self.gate(
            Mutation::Other,
            &label(&format!("perform \"{action}\" on"), &element, &now),
        )?;
        let before = self.look(&element.handle, reads_value(&element));
        self.desktop()
            .accessibility
            .do_action(&element.handle, &name)
            .map_err(|e| element_err(&element, &name, e))?;
        let (effect, note) = self.judge_click(&element.handle, &before, None);
        let mut notes = notes;
        notes.extend(note);
        Ok(ElementOutcome {
            element,
            window: now,
            route: Route::Accessibility,
            detail: name,
            receipt: None,
            judged_in_part: true,
            notes,
            effect,
        })
    }

    /// Sets an element's text or value, verified: through the accessibility interface, read
    /// back; when the element reads otherwise (Gecko accepts `SetTextContents` and keeps its
    /// text), the element is focused, its text selected (ctrl+a) and the value typed, then read
    /// back again. Still otherwise is `VALUE_NOT_SET` naming what it holds. A read-back the app
    /// plausibly formatted ([`reads_as_formatted`]) is a success with a note.
    pub fn set_element_value(
        &self,
        target: impl Into<ElementRef>,
        value: &str,
    ) -> Result<(ElementOutcome, String), Error> {
        use deskpilot_backend::Error as B;
        let Target {
            seen,
            now,
            element,
            mut notes,
        } = self.live_element(&target.into())?;
        enabled_now(&element)?;
        self.gate(
            Mutation::Other,
            &label(
                &format!("set {} into", crate::safety::quoted(value)),
                &element,
                &now,
            ),
        )?;
        let accessibility = &self.desktop().accessibility;
        // A password field reads back as its mask: one character per character held. It is
        // judged by that count, and its text (or length) is never handed back.
        let protected = element.states.protected;
        let took = |read: &str| {
            if protected {
                read.chars().count() == value.chars().count()
            } else {
                read == value || reads_as_formatted(value, read)
            }
        };
        let hidden = |read: String| {
            if protected {
                "(a password field: its text is not shown)".to_string()
            } else {
                read
            }
        };
        let first = match accessibility.set_value(&element.handle, value) {
            Ok(()) => Some(self.read_back(&element, value, CLICK_WAIT)?),
            // Editable text without an interface to replace it: typing does it.
            Err(B::Unsupported { .. }) if element.editable => None,
            Err(e) => return Err(element_err(&element, "set_value", e)),
        };
        let (route, detail, read) = match first {
            Some(read) if took(&read) => (Route::Accessibility, "set_value".to_string(), read),
            first => {
                self.type_value(&seen, &now, &element, value)?;
                // Typed keys take a moment per character to arrive.
                let typing = CLICK_WAIT + Duration::from_millis(5) * value.chars().count() as u32;
                let read = self.read_back(&element, value, typing)?;
                if !took(&read) {
                    return Err(Error::ValueNotSet(Box::new(crate::error::NotSet {
                        token: element.token.clone(),
                        role: element.role.to_string(),
                        name: element.name.clone(),
                        wanted: value.to_string(),
                        read: hidden(read),
                        how: if first.is_some() {
                            "after setting it through the accessibility interface and after typing it"
                        } else {
                            "after typing it"
                        },
                    })));
                }
                if let Some(first) = first {
                    notes.push(ElementNote::SetValueIgnored {
                        read: hidden(first),
                    });
                }
                (
                    Route::Input,
                    "focused, selected all (ctrl+a) and typed".to_string(),
                    read,
                )
            }
        };
        let evidence = if protected {
            "the password field's mask count"
        } else if read == value {
            "the value read back"
        } else {
            notes.push(ElementNote::ReadsOtherwise { read: read.clone() });
            "the value read back, as the application formats it"
        };
        Ok((
            ElementOutcome {
                element,
                window: now,
                route,
                detail,
                receipt: None,
                judged_in_part: false,
                effect: Some((Effect::Confirmed, evidence)),
                notes,
            },
            if protected { String::new() } else { read },
        ))
    }

    /// The element's text once it reads `value`, else once it has settled: unchanged for
    /// [`SETTLED`] after at least `wait` (an app applies a value, or takes typed keys, a moment
    /// later; a read half-way through typing is never the answer), at most [`READ_BACK_MAX`].
    fn read_back(&self, element: &Element, value: &str, wait: Duration) -> Result<String, Error> {
        let start = Instant::now();
        let mut last: Option<(String, Instant)> = None;
        loop {
            let read = self
                .desktop()
                .accessibility
                .read_text(&element.handle)
                .map_err(|e| element_err(element, "read its text", e))?;
            let now = Instant::now();
            if read == value {
                return Ok(read);
            }
            let since = match &last {
                Some((text, at)) if *text == read => *at,
                _ => now,
            };
            if (now >= start + wait && now >= since + SETTLED) || now >= start + READ_BACK_MAX {
                return Ok(read);
            }
            last = Some((read, since));
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The input route of `set_value`: focus the element (through the accessibility interface,
    /// else a click at its centre), make its window the active one, wait for the element to
    /// hold the focus where its states can be read, then select all (ctrl+a) and type the value
    /// (an empty value: backspace). Keys are never sent while another element or window holds
    /// the focus.
    pub(crate) fn type_value(
        &self,
        seen: &WindowInfo,
        now: &WindowInfo,
        element: &Element,
        value: &str,
    ) -> Result<(), Error> {
        if !self.focus_for_keys(seen, now, element)? {
            let accessibility = &self.desktop().accessibility;
            return Err(Error::ValueNotSet(Box::new(crate::error::NotSet {
                token: element.token.clone(),
                role: element.role.to_string(),
                name: element.name.clone(),
                wanted: value.to_string(),
                read: if element.states.protected {
                    "(a password field: its text is not shown)".to_string()
                } else {
                    accessibility.read_text(&element.handle).unwrap_or_default()
                },
                how: "and it did not take the keyboard focus, so nothing was typed",
            })));
        }
        self.send_chord(&[Key::Ctrl, Key::Char('a')])?;
        if value.is_empty() {
            self.send_chord(&[Key::Backspace])
        } else {
            self.desktop()
                .keyboard
                .type_text(value)
                .map_err(Error::from)
        }
    }

    /// Gives `element` the keyboard focus (its accessibility interface, else a click on its
    /// centre) in its window made active; `false` when it still has not taken it after
    /// [`CLICK_WAIT`] (an element whose states cannot be read counts as focused).
    pub(crate) fn focus_for_keys(
        &self,
        seen: &WindowInfo,
        now: &WindowInfo,
        element: &Element,
    ) -> Result<bool, Error> {
        use deskpilot_backend::Error as B;
        let accessibility = &self.desktop().accessibility;
        match accessibility.focus(&element.handle) {
            Ok(()) => {}
            Err(B::Unsupported { .. }) => {
                self.click_centre(
                    &ElementRef::from(&element.token),
                    seen,
                    element,
                    Button::Left,
                    1,
                    HitTestMode::Fail,
                )?;
            }
            Err(e) => return Err(element_err(element, "focus", e)),
        }
        self.activate_for_keys(now)?;
        let deadline = Instant::now() + CLICK_WAIT;
        loop {
            match accessibility.states(&element.handle) {
                Ok(s) if s.focused => return Ok(true),
                Ok(_) if Instant::now() >= deadline => return Ok(false),
                Ok(_) => std::thread::sleep(Duration::from_millis(20)),
                Err(_) => return Ok(true),
            }
        }
    }

    /// Makes `window` the active one when it is not (keys go to the active window).
    pub(crate) fn activate_for_keys(&self, window: &WindowInfo) -> Result<(), Error> {
        let active = |ws: &[WindowInfo]| ws.iter().any(|w| w.id == window.id && w.state.active);
        if active(&self.desktop().windows.list_windows()?) {
            return Ok(());
        }
        self.desktop()
            .window_control
            .window_op(window.id, deskpilot_backend::WindowOp::Activate)?;
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            let windows = self.desktop().windows.list_windows()?;
            if active(&windows) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Error::FocusRefused {
                    id: window.id,
                    title: window.title.clone(),
                    active: windows
                        .iter()
                        .find(|w| w.state.active)
                        .map(|w| format!("\"{}\" ({})", w.title, w.id)),
                });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// An element's full text (or value) as it is now. `None` for a password field (or a part
    /// of one, [`Element::password`]): its text is never read, so nothing of it — not its mask
    /// characters, not their count — can be shown.
    pub fn element_text(
        &self,
        target: impl Into<ElementRef>,
    ) -> Result<(Element, Option<String>), Error> {
        let Target { element, .. } = self.live_element(&target.into())?;
        if element.password || element.states.protected {
            return Ok((element, None));
        }
        let text = self
            .desktop()
            .accessibility
            .read_text(&element.handle)
            .map_err(|e| element_err(&element, "read its text", e))?;
        Ok((element, Some(text)))
    }

    /// Gives an element keyboard focus.
    pub fn focus_element(&self, target: impl Into<ElementRef>) -> Result<ElementOutcome, Error> {
        let Target {
            now,
            element,
            notes,
            ..
        } = self.live_element(&target.into())?;
        self.gate(Mutation::Other, &label("focus", &element, &now))?;
        self.desktop()
            .accessibility
            .focus(&element.handle)
            .map_err(|e| element_err(&element, "focus", e))?;
        Ok(ElementOutcome {
            element,
            window: now,
            route: Route::Accessibility,
            detail: "focus".to_string(),
            receipt: None,
            judged_in_part: false,
            notes,
            effect: None,
        })
    }

    /// Toggles, expands, collapses or selects an element, then watches its states for the
    /// effect. Asking for what already holds (expand an expanded combo box) does nothing and
    /// says so.
    pub fn element_op(
        &self,
        target: impl Into<ElementRef>,
        op: ElementOp,
    ) -> Result<ElementOutcome, Error> {
        let Target {
            now,
            element,
            notes: moved,
            ..
        } = self.live_element(&target.into())?;
        enabled_now(&element)?;
        self.gate(Mutation::Other, &label(op.name(), &element, &now))?;
        let accessibility = &self.desktop().accessibility;
        // A backend that cannot read states leaves the snapshot's (as re-read) to go by.
        let before = match accessibility.states(&element.handle) {
            Ok(s) => s,
            Err(deskpilot_backend::Error::Unsupported { .. }) => element.states,
            Err(e) => return Err(element_err(&element, "read its states", e)),
        };
        let already = match op {
            ElementOp::Expand if before.expanded => Some("already expanded"),
            ElementOp::Collapse if !before.expanded => Some("already collapsed"),
            ElementOp::Select if before.selected => Some("already selected"),
            _ => None,
        };
        if let Some(already) = already {
            return Ok(ElementOutcome {
                element,
                window: now,
                route: Route::Accessibility,
                detail: format!("nothing to do: {already}"),
                receipt: None,
                judged_in_part: false,
                notes: moved,
                effect: Some((Effect::Confirmed, STATES)),
            });
        }
        // Toolkits flag tree nodes and expanders as expandable; combo boxes and menus open a
        // popup instead (the backend reports an open popup as expanded).
        let opens = before.expandable
            || before.expanded
            || matches!(
                element.role,
                Role::ComboBox | Role::Menu | Role::MenuItem | Role::TreeItem
            )
            || element
                .actions
                .iter()
                .any(|a| a.to_ascii_lowercase().contains("expand"));
        if matches!(op, ElementOp::Expand | ElementOp::Collapse) && !opens {
            return Err(unsupported(&element, op.name(), "it is not expandable"));
        }
        let mut route_detail = None;
        // Whose states show the effect: the element, or the row selected for it.
        let mut watch = element.handle.clone();
        if op == ElementOp::Select
            && let Some(item) = self.select_item(&element, now.id)?
        {
            route_detail = Some(selected_detail(&element, &item));
            watch = item.handle;
        }
        // An open menu of a menu bar closes when the bar's selection is cleared; its own click
        // action would only open it again.
        if op == ElementOp::Collapse && element.role == Role::Menu {
            match accessibility.deselect(&element.handle) {
                Ok(()) => route_detail = Some("deselected in its container".to_string()),
                Err(deskpilot_backend::Error::Unsupported { .. }) => {}
                Err(e) => return Err(element_err(&element, op.name(), e)),
            }
        }
        let detail = match route_detail {
            Some(d) => d,
            None => {
                let action = advertised(&element, op.actions());
                let Some(action) = action else {
                    return Err(unsupported(
                        &element,
                        op.name(),
                        if op == ElementOp::Select {
                            "it offers no select action and its container has no selection; click it instead"
                        } else {
                            "it offers no action that does it"
                        },
                    ));
                };
                accessibility
                    .do_action(&element.handle, &action)
                    .map_err(|e| element_err(&element, &action, e))?;
                action
            }
        };
        let deadline = Instant::now() + EFFECT_WAIT;
        let (effect, mut notes) = loop {
            match accessibility.states(&watch) {
                Ok(s) if op.done(&before, &s) => {
                    break (Some((Effect::Confirmed, STATES)), Vec::new());
                }
                Ok(_) if Instant::now() >= deadline => {
                    break (
                        Some((Effect::SuspectedNoop, STATES)),
                        vec![ElementNote::StatesUnchanged {
                            op,
                            waited: EFFECT_WAIT,
                        }],
                    );
                }
                Ok(_) => std::thread::sleep(Duration::from_millis(20)),
                Err(deskpilot_backend::Error::Unsupported { .. }) => break (None, Vec::new()),
                // The element went away with the action (a menu item that closed its menu):
                // nothing left to check.
                Err(_) => {
                    break (None, vec![ElementNote::Gone]);
                }
            }
        };
        let mut moved = moved;
        moved.append(&mut notes);
        let notes = moved;
        Ok(ElementOutcome {
            element,
            window: now,
            route: Route::Accessibility,
            detail,
            receipt: None,
            judged_in_part: false,
            notes,
            effect,
        })
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::fake::{FakeWindow, element, tree};
    use deskpilot_backend::{ElementHandle, FakeDesktop, RawElement};
    use deskpilot_types::{ErrorCode, Rect};

    use super::*;
    use crate::{config::EngineConfig, tree::TreeRequest, window::WindowRef};

    fn el(parent: Option<usize>, role: Role, name: &str, actions: &[&str]) -> RawElement {
        element(role, name)
            .parent(parent)
            .depth(parent.map_or(0, |_| 1))
            .actions(actions)
            .bounds(Rect::new(10, 10, 40, 20))
            .build()
    }

    /// A button greyed out since the snapshot (or in it) is not clicked, and a later enabling
    /// is never taken for the click's effect.
    #[test]
    fn a_disabled_control_is_refused_and_nothing_is_done() {
        let fake = FakeDesktop::new(800, 600);
        let w = fake.add_window(FakeWindow::new("Save", Rect::new(0, 0, 400, 300)));
        fake.set_tree(
            w,
            tree(vec![
                el(None, Role::Window, "Save", &[]),
                el(Some(0), Role::Button, "OK", &["click"]),
                el(Some(0), Role::Edit, "Name", &[]),
                el(Some(0), Role::Text, "Label", &[]),
            ]),
        );
        let e = Session::standalone(fake.desktop(), EngineConfig::default());
        let s = e.window_state(&TreeRequest::new(WindowRef::Id(w))).unwrap();
        let token = |i: usize| s.elements[i].token.clone();
        fake.update_tree(w, |t| {
            for e in &mut t.elements {
                e.states.enabled = false;
            }
        });
        let err = e
            .click_element(token(1), Button::Left, 1, HitTestMode::Fail)
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::ElementDisabled, "{err}");
        assert_eq!(crate::action::refused_effect(&err), Some(Effect::Refused));
        let err = e.set_element_value(token(2), "x").unwrap_err();
        assert_eq!(err.code(), ErrorCode::ElementDisabled, "{err}");
        assert!(fake.actions_done().is_empty(), "{:?}", fake.actions_done());
        assert!(fake.pointer_events().is_empty());
        assert_eq!(fake.typed(), "");
        // Not a control: a text's enabled state says nothing about a click on it.
        assert!(!matches!(
            e.click_element(token(3), Button::Left, 1, HitTestMode::Fail),
            Err(Error::ElementDisabled { .. })
        ));
    }

    #[test]
    fn operations_are_checked_against_the_states_and_skip_what_already_holds() {
        let fake = FakeDesktop::new(800, 600);
        let w = fake.add_window(FakeWindow::new("Form", Rect::new(0, 0, 400, 300)));
        fake.set_tree(
            w,
            tree(vec![
                el(None, Role::Window, "Form", &[]),
                el(Some(0), Role::CheckBox, "Logging", &["click"]),
                el(Some(0), Role::ComboBox, "Size", &["press"]),
                el(Some(0), Role::Button, "Apply", &["click"]),
                el(Some(0), Role::Button, "Inert", &["activate"]),
                // Gecko's check box, its action named after what it will do.
                el(Some(0), Role::CheckBox, "Gift wrap", &["check"]),
            ]),
        );
        let e = Session::standalone(fake.desktop(), EngineConfig::default());
        let s = e.window_state(&TreeRequest::new(WindowRef::Id(w))).unwrap();
        let token = |i: usize| s.elements[i].token.clone();

        let o = e.element_op(token(1), ElementOp::Toggle).unwrap();
        assert_eq!(
            (o.detail.as_str(), o.effect.map(|e| e.0)),
            ("click", Some(Effect::Confirmed))
        );
        let o = e.element_op(token(5), ElementOp::Toggle).unwrap();
        assert_eq!(
            (o.detail.as_str(), o.effect.map(|e| e.0)),
            ("check", Some(Effect::Confirmed))
        );
        let o = e.element_op(token(2), ElementOp::Expand).unwrap();
        assert_eq!(
            (o.detail.as_str(), o.effect.map(|e| e.0)),
            ("press", Some(Effect::Confirmed))
        );
        let o = e.element_op(token(2), ElementOp::Expand).unwrap();
        assert!(o.detail.contains("already expanded"), "{}", o.detail);
        let o = e.element_op(token(2), ElementOp::Collapse).unwrap();
        assert_eq!(o.effect.map(|e| e.0), Some(Effect::Confirmed));
        // A button is not expandable; "activate" that changes nothing is a suspected no-op.
        let err = e.element_op(token(3), ElementOp::Expand).unwrap_err();
        assert_eq!(err.code(), ErrorCode::ActionUnsupported);
        assert!(err.to_string().contains("[click]"), "{err}");
        let o = e.element_op(token(4), ElementOp::Toggle).unwrap();
        assert_eq!(o.effect.map(|e| e.0), Some(Effect::SuspectedNoop));
        // No selection interface and no "select" action: say what to do instead.
        let err = e.element_op(token(3), ElementOp::Select).unwrap_err();
        assert!(err.to_string().contains("click it instead"), "{err}");
    }

    /// A window with a list of three files, a button without actions and a text field.
    fn files() -> (FakeDesktop, Session, crate::tree::Snapshot) {
        let fake = FakeDesktop::new(800, 600);
        let w = fake.add_window(FakeWindow::new("Files", Rect::new(0, 0, 400, 300)));
        let mut list = el(Some(0), Role::List, "Files", &[]);
        list.handle = ElementHandle("list".into());
        let mut elements = vec![el(None, Role::Window, "Files", &[]), list];
        for (i, name) in ["a.txt", "b.txt", "c.txt"].iter().enumerate() {
            let mut item = el(Some(1), Role::ListItem, name, &["activate"]);
            item.depth = 2;
            item.handle = ElementHandle(format!("row{i}"));
            item.bounds = Some(Rect::new(10, 40 + 20 * i as i32, 200, 20));
            elements.push(item);
        }
        let mut send = el(Some(0), Role::Button, "Send", &[]);
        send.bounds = Some(Rect::new(250, 100, 60, 20));
        let mut field = el(Some(0), Role::Edit, "Name", &[]);
        field.bounds = Some(Rect::new(250, 200, 100, 20));
        field.value = Some(String::new());
        field.states.editable = true;
        field.states.focusable = true;
        // A details view: table → row → cell, the file's name in the cell.
        let table = el(Some(0), Role::Table, "Details", &[]);
        let mut row = el(Some(7), Role::Row, "", &[]);
        row.depth = 2;
        row.bounds = Some(Rect::new(10, 250, 200, 20));
        let mut cell = el(Some(8), Role::Cell, "x.odt", &["activate"]);
        cell.depth = 3;
        cell.bounds = Some(Rect::new(10, 250, 100, 20));
        elements.extend([send, field, table, row, cell]);
        fake.set_tree(w, tree(elements));
        let mut config = EngineConfig::default();
        config.safety.action_delay = Duration::ZERO;
        let e = Session::standalone(fake.desktop(), config);
        let s = e.window_state(&TreeRequest::new(WindowRef::Id(w))).unwrap();
        (fake, e, s)
    }

    fn presses(fake: &FakeDesktop) -> Vec<Point> {
        fake.pointer_events()
            .into_iter()
            .filter_map(|ev| match ev {
                deskpilot_backend::fake::PointerEvent::Button { down: true, at, .. } => Some(at),
                _ => None,
            })
            .collect()
    }

    /// A token names an element, not a position: a re-sorted list (AT-SPI's positional cell
    /// handles), a vanished element and a moved one are re-checked before anything is sent.
    #[test]
    fn acting_rechecks_the_element_renamed_gone_or_moved() {
        let (fake, e, s) = files();
        let w = s.window.id;
        fake.update_tree(w, |t| {
            for (i, name) in ["c.txt", "b.txt", "a.txt"].iter().enumerate() {
                t.elements[2 + i].name = name.to_string();
            }
        });
        let err = e
            .click_element(&s.elements[2].token, Button::Left, 1, HitTestMode::Fail)
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::StaleElement);
        assert!(err.to_string().contains("now ListItem \"c.txt\""), "{err}");
        assert!(fake.actions_done().is_empty() && presses(&fake).is_empty());
        // Moved inside the window: clicked where it is now, and said.
        fake.update_tree(w, |t| {
            t.elements[5].bounds = Some(Rect::new(250, 180, 60, 20))
        });
        let o = e
            .click_element(&s.elements[5].token, Button::Left, 1, HitTestMode::Fail)
            .unwrap();
        assert_eq!(presses(&fake), [Point::new(280, 190)]);
        assert!(
            o.notes
                .iter()
                .any(|n| matches!(n, ElementNote::Moved { .. })),
            "{:?}",
            o.notes
        );
        // Gone from the application.
        fake.update_tree(w, |t| {
            t.elements[6].handle = ElementHandle("another".into())
        });
        let err = e.focus_element(&s.elements[6].token).unwrap_err();
        assert_eq!(err.code(), ErrorCode::StaleElement);
        assert!(err.to_string().contains("no longer exists"), "{err}");
    }

    /// A page inserted a banner above a field: a backend that cannot re-read the element
    /// still has its toolkit's hit test, and the old centre is refused, never clicked.
    #[test]
    fn a_pointer_fallback_refuses_a_point_that_does_not_reach_the_element() {
        let (fake, e, s) = files();
        let w = s.window.id;
        fake.lack("live");
        fake.update_tree(w, |t| {
            t.elements[5].bounds = Some(Rect::new(250, 280, 60, 20))
        });
        let err = e
            .click_element(&s.elements[5].token, Button::Left, 1, HitTestMode::Fail)
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::ElementCovered);
        assert!(err.to_string().contains("(280, 110)"), "{err}");
        assert_eq!(crate::action::refused_effect(&err), Some(Effect::Refused));
        assert!(presses(&fake).is_empty(), "nothing was clicked");
        // Re-read, it is clicked where it is; covered by something else, it is refused.
        let s = e.window_state(&TreeRequest::new(WindowRef::Id(w))).unwrap();
        e.click_element(&s.elements[5].token, Button::Left, 1, HitTestMode::Fail)
            .unwrap();
        assert_eq!(presses(&fake), [Point::new(280, 290)]);
        fake.cover_element(&s.elements[5].handle);
        let err = e
            .click_element(&s.elements[5].token, Button::Left, 1, HitTestMode::Fail)
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::ElementCovered);
        // Without a hit test either, the centre is clicked as the snapshot saw it.
        fake.lack("hits");
        e.click_element(&s.elements[5].token, Button::Left, 1, HitTestMode::Fail)
            .unwrap();
        assert_eq!(presses(&fake).len(), 2);
    }

    /// A click on a file in a file manager selects it, as a person's click does; before, the
    /// cell's "activate" ran and opened the file. `select` works through the container even
    /// when the cell advertises no "select" (a details view selects the cell's row).
    #[test]
    fn a_click_on_a_row_or_cell_selects_it_and_never_activates() {
        let (fake, e, s) = files();
        fake.allow_selection(&ElementHandle("list".into()));
        let o = e
            .click_element(&s.elements[3].token, Button::Left, 1, HitTestMode::Fail)
            .unwrap();
        assert_eq!(
            (o.route, o.detail.as_str()),
            (Route::Accessibility, "selected in its container")
        );
        assert!(fake.element(&s.elements[3].handle).unwrap().states.selected);
        assert!(fake.actions_done().is_empty(), "{:?}", fake.actions_done());
        // No selection in the details view's row: the pointer clicks the cell, still no action.
        let o = e
            .click_element(&s.elements[9].token, Button::Left, 1, HitTestMode::Fail)
            .unwrap();
        assert_eq!(o.route, Route::Input);
        assert!(o.notes.contains(&ElementNote::NoSelection), "{:?}", o.notes);
        assert_eq!(presses(&fake), [Point::new(60, 260)]);
        assert!(fake.actions_done().is_empty());
        // The table selects rows: perform_action select on the cell selects its row.
        fake.allow_selection(&s.elements[7].handle);
        let o = e
            .element_op(&s.elements[9].token, ElementOp::Select)
            .unwrap();
        assert_eq!(o.detail, "selected its Row \"\" in the container");
        assert_eq!(o.effect.map(|e| e.0), Some(Effect::Confirmed));
        assert!(fake.element(&s.elements[8].handle).unwrap().states.selected);
        let o = e
            .click_element(&s.elements[9].token, Button::Left, 1, HitTestMode::Fail)
            .unwrap();
        assert_eq!(
            (o.route, o.effect.map(|e| e.0)),
            (Route::Accessibility, Some(Effect::Confirmed))
        );
        assert!(fake.actions_done().is_empty());
    }

    /// Every click judges its effect, whatever the route: before, `click_element` always
    /// answered `effect: None` (unverifiable), even for a click that opened a dialog.
    #[test]
    fn every_click_judges_its_effect_from_states_values_and_windows() {
        let (fake, e, s) = files();
        let w = s.window.id;
        let mut apply = el(Some(0), Role::Button, "Apply", &["click"]);
        apply.bounds = Some(Rect::new(250, 40, 60, 20));
        let mut open = el(Some(0), Role::Button, "Open…", &["activate"]);
        open.bounds = Some(Rect::new(320, 40, 60, 20));
        let inert = el(Some(0), Role::Button, "Inert", &["activate"]);
        fake.update_tree(w, |t| t.elements.extend([apply, open, inert]));
        let s = e.window_state(&TreeRequest::new(WindowRef::Id(w))).unwrap();
        let click = |i: usize| {
            e.click_element(&s.elements[i].token, Button::Left, 1, HitTestMode::Fail)
                .unwrap()
        };
        let judged = |o: &ElementOutcome| o.effect;
        // The accessibility route: the states flipped.
        let o = click(10);
        assert_eq!(judged(&o), Some((Effect::Confirmed, STATES)));
        // A dialog opened.
        fake.open_on_action(
            &s.elements[11].handle,
            FakeWindow::new("Open File", Rect::new(100, 100, 300, 200)),
        );
        let o = click(11);
        assert_eq!(judged(&o), Some((Effect::Confirmed, "the window list")));
        // Nothing changed.
        let o = click(12);
        assert_eq!(o.effect.map(|e| e.0), Some(Effect::SuspectedNoop));
        assert!(
            o.notes
                .iter()
                .any(|n| matches!(n, ElementNote::NothingChanged { .. })),
            "{:?}",
            o.notes
        );
        assert!(o.judged_in_part);
        // A click on a text field gives it the focus (its "activate", if any, would not).
        let o = click(6);
        assert_eq!(
            (o.route, o.detail.as_str(), judged(&o)),
            (
                Route::Accessibility,
                "focus",
                Some((Effect::Confirmed, STATES))
            )
        );
        // The pointer route: the application gives no focus through the interface (as
        // LibreOffice's Name Box), so the pointer clicks the field and it takes the focus; the
        // bare button changed nothing.
        fake.update_tree(w, |t| t.elements[6].states.focused = false);
        fake.lack("focus");
        let o = click(6);
        assert_eq!(
            (o.route, judged(&o)),
            (Route::Input, Some((Effect::Confirmed, STATES)))
        );
        assert!(
            o.notes.contains(&ElementNote::FocusIgnored),
            "{:?}",
            o.notes
        );
        let o = click(5);
        assert_eq!(
            (o.route, o.effect.map(|e| e.0)),
            (Route::Input, Some(Effect::SuspectedNoop))
        );
        // Nothing of the element can be read: unverifiable, and only then.
        for op in ["live", "states", "read_text"] {
            fake.lack(op);
        }
        let o = click(5);
        assert_eq!(o.effect, None);
    }

    #[test]
    fn a_read_back_is_a_formatting_only_when_it_plausibly_is() {
        let cases = [
            // (wanted, read, formatted)
            ("5", "5.00", true),
            ("1000", "1,000", true),
            ("5", "5 px", true),
            ("5", "$5.00", true),
            ("abc", "ABC", true),
            ("a  b", "a b", true),
            ("5551234", "555-1234", true),
            ("2024-01-05", "2024/01/05", true),
            ("", "", true),
            // Gecko kept its text, or nothing, or keys were still arriving: it did not take.
            ("hello", "", false),
            ("grace", "grac", false),
            ("hello world", "hello", false),
            ("5", "6.00", false),
            ("hello", "goodbye", false),
            ("5551234", "Tel 5551234", false),
            ("", "old text", false),
        ];
        for (wanted, read, formatted) in cases {
            assert_eq!(
                reads_as_formatted(wanted, read),
                formatted,
                "{wanted:?} read as {read:?}"
            );
        }
    }

    /// Gecko accepts `SetTextContents` and keeps its text: before, `set_value` read back an
    /// empty field and still answered success (unverifiable). Now the text is typed, read back,
    /// and a field that holds otherwise even then is `VALUE_NOT_SET` naming what it holds.
    #[test]
    fn set_value_is_verified_typed_when_ignored_or_fails() {
        let (fake, e, s) = files();
        let field = &s.elements[6];
        // A number field formats what it is given: still a success, said.
        fake.format_values(&field.handle, |t| match t.parse::<f64>() {
            Ok(n) => format!("{n:.2}"),
            Err(_) => t.to_string(),
        });
        let (o, read) = e.set_element_value(&field.token, "5").unwrap();
        assert_eq!((o.route, read.as_str()), (Route::Accessibility, "5.00"));
        assert!(
            matches!(o.notes[..], [ElementNote::ReadsOtherwise { .. }]),
            "{:?}",
            o.notes
        );
        assert_eq!(o.effect.map(|e| e.0), Some(Effect::Confirmed));
        // Gecko: set_value accepted and ignored; another window has the keyboard.
        let (fake, e, s) = files();
        let field = &s.elements[6];
        fake.ignore_set_value(&field.handle);
        fake.add_window(FakeWindow::new("Other", Rect::new(450, 0, 200, 200)));
        let (o, read) = e.set_element_value(&field.token, "hello").unwrap();
        assert_eq!((o.route, read.as_str()), (Route::Input, "hello"));
        assert!(o.notes.contains(&ElementNote::SetValueIgnored {
            read: String::new()
        }));
        assert_eq!(o.effect, Some((Effect::Confirmed, "the value read back")));
        let log = fake.input_log();
        assert_eq!(
            log[log.len() - 5..],
            [
                "key ctrl down",
                "key a down",
                "key a up",
                "key ctrl up",
                "type hello"
            ]
        );
        let active = e.desktop().windows.list_windows().unwrap();
        assert!(active.iter().any(|w| w.id == s.window.id && w.state.active));
        // A field that drops whatever it is given: the error says what it holds.
        fake.format_values(&field.handle, |_| String::new());
        let err = e.set_element_value(&field.token, "world").unwrap_err();
        assert_eq!(err.code(), ErrorCode::ValueNotSet);
        assert!(
            err.to_string().contains("holds \"\", not \"world\""),
            "{err}"
        );
    }
}
