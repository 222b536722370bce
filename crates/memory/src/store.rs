//! What memory knows about the desktop: the window index, the element index and the focus
//! history, updated from plain observations and bounded (see the `MAX_*` consts in
//! [`super`]).
//!
//! Observations are plain data (`WindowObservation` is built from a `WindowInfo`), times are
//! Unix milliseconds passed in by the caller, so everything here is pure and testable.
//! Recognition of a reopened window is stated with a confidence and the evidence behind it;
//! a dHash distance alone never counts (two unrelated flat windows can hash alike).

use deskpilot_types::{Rect, Role, WindowId, WindowInfo, WindowState};
use serde::{Deserialize, Serialize};

use super::dhash::{Dhash, HASH_THRESHOLD};
use super::{MAX_ELEMENTS, MAX_FOCUS, MAX_TEXT_CHARS, MAX_WINDOWS, UnixMillis, clip};
use deskpilot_types::fold;

/// One top-level window as the window list reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowObservation {
    pub id: WindowId,
    pub title: String,
    pub process: Option<String>,
    pub pid: Option<u32>,
    pub class: String,
    pub frame: Rect,
    pub state: WindowState,
}

impl From<&WindowInfo> for WindowObservation {
    fn from(w: &WindowInfo) -> Self {
        WindowObservation {
            id: w.id,
            title: w.title.clone(),
            process: w.process.clone(),
            pid: w.pid,
            class: w.class.clone(),
            frame: w.frame,
            state: w.state,
        }
    }
}

/// How sure memory is that a new window is an old one reopened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Title and pixels agree but no process is known on one side.
    Low,
    /// Same process, and either the title or the pixels (hash within the threshold) agree.
    Medium,
    /// Same process, same title and pixels within the threshold.
    High,
}

/// "Window `id` is `previous` reopened", with the evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recognition {
    pub previous: WindowId,
    pub previous_title: String,
    pub confidence: Confidence,
    pub process_agrees: bool,
    pub title_agrees: bool,
    /// Hamming distance of the two dHashes when both are known.
    pub hash_distance: Option<u32>,
}

/// What memory holds about one window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowRecord {
    pub id: WindowId,
    pub title: String,
    pub process: Option<String>,
    pub pid: Option<u32>,
    pub class: String,
    pub frame: Rect,
    pub state: WindowState,
    pub first_seen: UnixMillis,
    pub last_seen: UnixMillis,
    pub last_focused: Option<UnixMillis>,
    pub times_focused: u32,
    pub dhash: Option<Dhash>,
    /// When a full window list first lacked it.
    pub gone_at: Option<UnixMillis>,
    pub recognized_as: Option<Recognition>,
    /// The closed window whose id this one reuses (X11 recycles window ids), kept to compare
    /// the two; its own predecessor is dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced: Option<Box<WindowRecord>>,
}

impl WindowRecord {
    pub fn is_gone(&self) -> bool {
        self.gone_at.is_some()
    }
}

/// Does `new` look like `old` reopened? Hash alone never counts.
fn recognise(new: &WindowRecord, old: &WindowRecord) -> Option<Recognition> {
    let process_agrees = match (&new.process, &old.process) {
        (Some(a), Some(b)) => !a.is_empty() && a.eq_ignore_ascii_case(b),
        _ => false,
    };
    let process_known = new.process.is_some() && old.process.is_some();
    let title_agrees = !new.title.trim().is_empty() && fold(&new.title) == fold(&old.title);
    let hash_distance = match (new.dhash, old.dhash) {
        (Some(a), Some(b)) => Some(a.distance(b)),
        _ => None,
    };
    let hash_near = hash_distance.is_some_and(|d| d <= HASH_THRESHOLD);
    let confidence = if process_agrees && title_agrees && hash_near {
        Confidence::High
    } else if process_agrees && (title_agrees || hash_near) {
        Confidence::Medium
    } else if !process_known && title_agrees && hash_near {
        Confidence::Low
    } else {
        return None;
    };
    Some(Recognition {
        previous: old.id,
        previous_title: old.title.clone(),
        confidence,
        process_agrees,
        title_agrees,
        hash_distance,
    })
}

/// Every window memory has seen, newest last, at most [`MAX_WINDOWS`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowIndex {
    pub windows: Vec<WindowRecord>,
}

impl WindowIndex {
    pub fn get(&self, id: WindowId) -> Option<&WindowRecord> {
        self.windows.iter().find(|w| w.id == id)
    }

    /// Takes in a *complete* window list: new windows are added (and compared with closed
    /// ones), known ones updated, absent ones marked gone. `active` is the window manager's
    /// active window; a change of it counts as one focus. Returns the recognitions made.
    pub fn observe(
        &mut self,
        list: &[WindowObservation],
        active: Option<WindowId>,
        now: UnixMillis,
    ) -> Vec<Recognition> {
        let mut made = Vec::new();
        let was_active = self
            .windows
            .iter()
            .filter(|w| !w.is_gone())
            .max_by_key(|w| w.last_focused)
            .map(|w| w.id);
        for o in list {
            let title = clip(&o.title);
            let class = clip(&o.class);
            let process = o.process.as_deref().map(clip);
            // An id seen before that now names another window: the old one closed and the
            // window system gave its id to a new one (X11 recycles ids).
            let reused = self.windows.iter().position(|w| {
                w.id == o.id
                    && (w.is_gone() || w.pid.is_some() && o.pid.is_some() && w.pid != o.pid)
            });
            let replaced = reused.map(|i| {
                let mut old = self.windows.remove(i);
                old.replaced = None;
                old.gone_at.get_or_insert(now);
                Box::new(old)
            });
            match self.windows.iter_mut().find(|w| w.id == o.id) {
                Some(w) => {
                    w.title = title;
                    w.class = class;
                    w.process = process;
                    w.pid = o.pid;
                    w.frame = o.frame;
                    w.state = o.state;
                    w.last_seen = now;
                }
                None => {
                    let mut w = WindowRecord {
                        id: o.id,
                        title,
                        process,
                        pid: o.pid,
                        class,
                        frame: o.frame,
                        state: o.state,
                        first_seen: now,
                        last_seen: now,
                        last_focused: None,
                        times_focused: 0,
                        dhash: None,
                        gone_at: None,
                        recognized_as: None,
                        replaced,
                    };
                    w.recognized_as = self.best_previous(&w);
                    made.extend(w.recognized_as.clone());
                    self.windows.push(w);
                }
            }
        }
        for w in self.windows.iter_mut() {
            if w.gone_at.is_none() && !list.iter().any(|o| o.id == w.id) {
                w.gone_at = Some(now);
            }
        }
        if let Some(id) = active
            && let Some(w) = self.windows.iter_mut().find(|w| w.id == id)
        {
            if was_active != Some(id) || w.times_focused == 0 {
                w.times_focused += 1;
            }
            w.last_focused = Some(now);
        }
        self.bound();
        made
    }

    /// Records the dHash of a window's pixels and re-checks whether it is a closed window
    /// reopened (the pixels usually arrive after the window list).
    pub fn set_hash(&mut self, id: WindowId, hash: Dhash) -> Option<Recognition> {
        let i = self.windows.iter().position(|w| w.id == id)?;
        self.windows[i].dhash = Some(hash);
        let found = self.best_previous(&self.windows[i]);
        let w = &mut self.windows[i];
        let better = match (&found, &w.recognized_as) {
            (Some(f), Some(old)) => f.confidence >= old.confidence,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if better {
            w.recognized_as = found.clone();
            return found;
        }
        None
    }

    /// Marks a window closed now (e.g. after `close_window` succeeded).
    pub fn mark_gone(&mut self, id: WindowId, now: UnixMillis) {
        if let Some(w) = self.windows.iter_mut().find(|w| w.id == id && !w.is_gone()) {
            w.gone_at = Some(now);
        }
    }

    /// The closed window `new` most likely reopens: any gone window of another id, or the
    /// one whose id it reuses.
    fn best_previous(&self, new: &WindowRecord) -> Option<Recognition> {
        self.windows
            .iter()
            .filter(|old| old.id != new.id && old.is_gone())
            .chain(new.replaced.as_deref())
            .filter_map(|old| recognise(new, old).map(|r| (r, old.gone_at)))
            .max_by_key(|(r, gone)| (r.confidence, *gone))
            .map(|(r, _)| r)
    }

    /// Drops the longest-gone windows first, then the least recently seen, down to the cap.
    fn bound(&mut self) {
        while self.windows.len() > MAX_WINDOWS {
            let i = self
                .windows
                .iter()
                .enumerate()
                .min_by_key(|(_, w)| (!w.is_gone(), w.last_seen))
                .map(|(i, _)| i)
                .unwrap_or(0);
            self.windows.remove(i);
        }
    }
}

/// One control as a tree read or an action reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct ElementObservation {
    pub window: WindowId,
    pub role: Role,
    pub name: String,
    pub bounds: Rect,
    /// The element path (`0/2/1`) in its window's tree.
    pub path: String,
    /// The snapshot token that addressed it, when one did.
    pub token: Option<String>,
    /// Its value (text of an edit), when read.
    pub value: Option<String>,
    /// A password field (role or state): its value is never stored.
    pub password: bool,
}

/// What memory holds about one control. The key is (window, role, name, path).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElementRecord {
    pub window: WindowId,
    pub role: Role,
    pub name: String,
    pub bounds: Rect,
    pub path: String,
    pub token: Option<String>,
    /// Always `None` for a password field.
    pub value: Option<String>,
    pub password: bool,
    pub last_seen: UnixMillis,
    /// When an action last targeted it.
    pub acted_on: Option<UnixMillis>,
}

/// Controls memory has seen or acted on, at most [`MAX_ELEMENTS`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ElementIndex {
    pub elements: Vec<ElementRecord>,
}

impl ElementIndex {
    /// Records a control read from a tree; `acted` marks it as the target of an action now.
    pub fn observe(&mut self, o: &ElementObservation, acted: bool, now: UnixMillis) {
        let name = clip(&o.name);
        let path = clip(&o.path);
        let value = if o.password {
            None
        } else {
            o.value.as_deref().map(clip)
        };
        let token = o.token.as_deref().map(clip);
        let acted_on = acted.then_some(now);
        match self
            .elements
            .iter_mut()
            .find(|e| e.window == o.window && e.role == o.role && e.name == name && e.path == path)
        {
            Some(e) => {
                e.bounds = o.bounds;
                e.token = token;
                e.value = value;
                e.password = o.password;
                e.last_seen = now;
                e.acted_on = acted_on.or(e.acted_on);
            }
            None => self.elements.push(ElementRecord {
                window: o.window,
                role: o.role,
                name,
                bounds: o.bounds,
                path,
                token,
                value,
                password: o.password,
                last_seen: now,
                acted_on,
            }),
        }
        while self.elements.len() > MAX_ELEMENTS {
            let i = self
                .elements
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.last_seen.max(e.acted_on.unwrap_or(0)))
                .map(|(i, _)| i)
                .unwrap_or(0);
            self.elements.remove(i);
        }
    }

    /// The most recently acted-on control, of `role` when given.
    pub fn last_acted(&self, role: Option<Role>) -> Option<&ElementRecord> {
        self.elements
            .iter()
            .filter(|e| e.acted_on.is_some() && role.is_none_or(|r| e.role == r))
            .max_by_key(|e| e.acted_on)
    }

    /// The most recently seen control of `role`.
    pub fn last_seen(&self, role: Role) -> Option<&ElementRecord> {
        self.elements
            .iter()
            .filter(|e| e.role == role)
            .max_by_key(|e| e.last_seen)
    }
}

/// One change of the active window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FocusEntry {
    pub window: WindowId,
    pub title: String,
    pub process: Option<String>,
    pub at: UnixMillis,
}

/// The navigation stack: every change of the active window, oldest first, at most
/// [`MAX_FOCUS`] entries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FocusHistory {
    pub entries: Vec<FocusEntry>,
}

impl FocusHistory {
    /// Notes the active window seen by a call; only a change adds an entry.
    pub fn observe(&mut self, window: &WindowRecord, now: UnixMillis) {
        if self.entries.last().is_some_and(|e| e.window == window.id) {
            return;
        }
        self.entries.push(FocusEntry {
            window: window.id,
            title: clip(&window.title),
            process: window.process.clone(),
            at: now,
        });
        if self.entries.len() > MAX_FOCUS {
            let extra = self.entries.len() - MAX_FOCUS;
            self.entries.drain(..extra);
        }
    }

    /// The window focused last.
    pub fn current(&self) -> Option<&FocusEntry> {
        self.entries.last()
    }

    /// The window focused before the current one (the top of the "back" stack).
    pub fn previous(&self) -> Option<&FocusEntry> {
        let current = self.current()?.window;
        self.entries.iter().rev().find(|e| e.window != current)
    }
}

/// Whether a window may be remembered at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Indexing {
    Allowed,
    /// Its title, process or class matched a blocklist entry.
    Blocked {
        entry: String,
    },
    /// Its process or class is on the never-remember app list.
    NeverRemember {
        app: String,
    },
}

/// Decides whether `w` may be indexed: `blocklist` entries match its title, process or class
/// case-insensitively as substrings (as the action blocklist matches labels); `never_remember`
/// apps match its process or class exactly (case-insensitive).
pub fn may_index(
    w: &WindowObservation,
    blocklist: &[String],
    never_remember: &[String],
) -> Indexing {
    let fields = [
        w.title.to_lowercase(),
        w.process.as_deref().unwrap_or("").to_lowercase(),
        w.class.to_lowercase(),
    ];
    if let Some(entry) = blocklist.iter().find(|b| {
        let b = b.trim().to_lowercase();
        !b.is_empty() && fields.iter().any(|f| f.contains(&b))
    }) {
        return Indexing::Blocked {
            entry: entry.clone(),
        };
    }
    if let Some(app) = never_remember.iter().find(|a| {
        let a = a.trim().to_lowercase();
        !a.is_empty() && (fields[1] == a || fields[2] == a)
    }) {
        return Indexing::NeverRemember { app: app.clone() };
    }
    Indexing::Allowed
}

const _: () = assert!(MAX_TEXT_CHARS > 0);

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub fn obs(id: u64, title: &str, process: &str) -> WindowObservation {
        WindowObservation {
            id: WindowId(id),
            title: title.into(),
            process: Some(process.into()),
            pid: Some(id as u32 + 1000),
            class: process.into(),
            frame: Rect::new(100, 100, 400, 300),
            state: WindowState {
                visible: true,
                ..WindowState::default()
            },
        }
    }

    #[test]
    fn windows_are_added_updated_and_marked_gone() {
        let mut ix = WindowIndex::default();
        ix.observe(
            &[obs(1, "a", "xterm"), obs(2, "b", "mousepad")],
            Some(WindowId(1)),
            10,
        );
        let mut min = obs(2, "b2", "mousepad");
        min.state.minimized = true;
        ix.observe(&[min], None, 20);
        let a = ix.get(WindowId(1)).unwrap();
        assert_eq!((a.gone_at, a.last_seen, a.times_focused), (Some(20), 10, 1));
        let b = ix.get(WindowId(2)).unwrap();
        assert_eq!(
            (b.title.as_str(), b.state.minimized, b.first_seen),
            ("b2", true, 10)
        );
        ix.observe(&[obs(1, "a", "xterm")], None, 30);
        assert_eq!(ix.get(WindowId(1)).unwrap().gone_at, None);
    }

    #[test]
    fn focus_counts_changes_and_the_stack_goes_back() {
        let mut ix = WindowIndex::default();
        let mut focus = FocusHistory::default();
        let list = [obs(1, "a", "xterm"), obs(2, "b", "mousepad")];
        for (t, active) in [(1, 1), (2, 1), (3, 2), (4, 1)] {
            ix.observe(&list, Some(WindowId(active)), t);
            focus.observe(ix.get(WindowId(active)).unwrap(), t);
        }
        assert_eq!(ix.get(WindowId(1)).unwrap().times_focused, 2);
        assert_eq!(ix.get(WindowId(2)).unwrap().times_focused, 1);
        assert_eq!(focus.entries.len(), 3);
        assert_eq!(focus.current().unwrap().window, WindowId(1));
        assert_eq!(focus.previous().unwrap().window, WindowId(2));
    }

    #[test]
    fn a_recycled_window_id_is_a_new_window_recognised_against_the_old_one() {
        let mut ix = WindowIndex::default();
        ix.observe(&[obs(1, "notes - Mousepad", "mousepad")], None, 1);
        ix.set_hash(WindowId(1), Dhash(0xF0F0));
        // Closed, then a new mousepad (another pid) gets the same id.
        ix.observe(&[], None, 2);
        let mut again = obs(1, "notes - Mousepad", "mousepad");
        again.pid = Some(4242);
        let made = ix.observe(&[again.clone()], None, 3);
        assert_eq!(made.len(), 1, "{made:?}");
        let w = ix.get(WindowId(1)).unwrap();
        assert_eq!((w.first_seen, w.pid, w.is_gone()), (3, Some(4242), false));
        assert_eq!(
            w.recognized_as.as_ref().unwrap().confidence,
            Confidence::Medium
        );
        // Its pixels make it certain.
        let r = ix.set_hash(WindowId(1), Dhash(0xF0F1)).unwrap();
        assert_eq!((r.previous, r.confidence), (WindowId(1), Confidence::High));
        assert_eq!(ix.windows.len(), 1, "one record per id");
        // Reused while the old one was still listed a moment ago: another pid is enough.
        let mut third = obs(1, "notes - Mousepad", "mousepad");
        third.pid = Some(5000);
        ix.observe(&[third], None, 4);
        let w = ix.get(WindowId(1)).unwrap();
        assert_eq!((w.first_seen, w.pid), (4, Some(5000)));
        assert!(
            w.replaced.as_ref().unwrap().replaced.is_none(),
            "one predecessor kept"
        );
    }

    #[test]
    fn reopened_window_is_recognised_with_a_stated_confidence() {
        // (old title, old hash, new process, new title, new hash) -> confidence
        type Case = (
            &'static str,
            u64,
            &'static str,
            &'static str,
            u64,
            Option<Confidence>,
        );
        let cases: &[Case] = &[
            (
                "doc",
                0xF0F0,
                "mousepad",
                "doc",
                0xF0F1,
                Some(Confidence::High),
            ),
            (
                "doc",
                0xF0F0,
                "mousepad",
                "other",
                0xF0F3,
                Some(Confidence::Medium),
            ),
            (
                "doc",
                0xF0F0,
                "mousepad",
                "doc",
                0x0F0F_FFFF,
                Some(Confidence::Medium),
            ),
            ("doc", 0xF0F0, "mousepad", "other", 0xFFFF_0000_0F0F, None),
            // hash alone (identical pixels, another app, another title) never counts
            ("doc", 0xF0F0, "xterm", "other", 0xF0F0, None),
        ];
        for (i, (t0, h0, p1, t1, h1, want)) in cases.iter().enumerate() {
            let mut ix = WindowIndex::default();
            ix.observe(&[obs(1, t0, "mousepad")], None, 1);
            ix.set_hash(WindowId(1), Dhash(*h0));
            ix.observe(&[], None, 2);
            ix.observe(&[obs(9, t1, p1)], None, 3);
            let got = ix.set_hash(WindowId(9), Dhash(*h1));
            let rec = ix.get(WindowId(9)).unwrap().recognized_as.clone();
            assert_eq!(rec.as_ref().map(|r| r.confidence), *want, "case {i}");
            if want.is_some() {
                let r = rec.unwrap();
                assert_eq!(r.previous, WindowId(1), "case {i}");
                assert_eq!(got.map(|g| g.confidence), *want, "case {i}");
            }
        }
    }

    #[test]
    fn without_a_process_title_and_hash_give_low_confidence() {
        let mut ix = WindowIndex::default();
        let mut a = obs(1, "Report", "x");
        a.process = None;
        ix.observe(&[a.clone()], None, 1);
        ix.set_hash(WindowId(1), Dhash(7));
        ix.observe(&[], None, 2);
        a.id = WindowId(2);
        ix.observe(&[a], None, 3);
        let r = ix.set_hash(WindowId(2), Dhash(7)).unwrap();
        assert_eq!((r.confidence, r.process_agrees), (Confidence::Low, false));
    }

    #[test]
    fn window_index_is_bounded_dropping_gone_windows_first() {
        let mut ix = WindowIndex::default();
        ix.observe(&[obs(1, "old", "x")], None, 0);
        ix.observe(&[], None, 1);
        let live: Vec<_> = (2..2 + MAX_WINDOWS as u64)
            .map(|i| obs(i, "w", "p"))
            .collect();
        ix.observe(&live, None, 2);
        assert_eq!(ix.windows.len(), MAX_WINDOWS);
        assert!(ix.get(WindowId(1)).is_none());
    }

    fn el(name: &str, role: Role, value: Option<&str>, password: bool) -> ElementObservation {
        ElementObservation {
            window: WindowId(1),
            role,
            name: name.into(),
            bounds: Rect::new(10, 10, 50, 20),
            path: "0/1".into(),
            token: Some("e3".into()),
            value: value.map(Into::into),
            password,
        }
    }

    #[test]
    fn elements_remember_actions_and_never_a_password_value() {
        let mut ix = ElementIndex::default();
        ix.observe(&el("OK", Role::Button, None, false), false, 1);
        ix.observe(&el("Cancel", Role::Button, None, false), true, 2);
        ix.observe(&el("Password", Role::Edit, Some("hunter2"), true), true, 3);
        ix.observe(&el("User", Role::Edit, Some("alice"), false), false, 4);
        assert_eq!(ix.last_acted(Some(Role::Button)).unwrap().name, "Cancel");
        assert_eq!(ix.last_acted(None).unwrap().name, "Password");
        assert_eq!(
            ix.last_seen(Role::Edit).unwrap().value.as_deref(),
            Some("alice")
        );
        let pw = ix.elements.iter().find(|e| e.password).unwrap();
        assert_eq!(pw.value, None);
        assert!(!serde_json::to_string(&ix).unwrap().contains("hunter2"));
        // seen again, not acted: keeps when it was acted on
        ix.observe(&el("Cancel", Role::Button, None, false), false, 5);
        assert_eq!(ix.last_acted(Some(Role::Button)).unwrap().acted_on, Some(2));
        assert_eq!(ix.elements.len(), 4);
    }

    #[test]
    fn element_index_is_bounded() {
        let mut ix = ElementIndex::default();
        for i in 0..MAX_ELEMENTS as u64 + 10 {
            ix.observe(&el(&format!("b{i}"), Role::Button, None, false), false, i);
        }
        assert_eq!(ix.elements.len(), MAX_ELEMENTS);
        assert!(!ix.elements.iter().any(|e| e.name == "b0"));
    }

    #[test]
    fn privacy_decides_what_may_be_indexed() {
        let block = vec!["1Password".to_string(), "vault".into()];
        let never = vec!["keepassxc".to_string()];
        let cases = [
            (obs(1, "Untitled - Mousepad", "mousepad"), Indexing::Allowed),
            (
                obs(2, "My Vault - Files", "thunar"),
                Indexing::Blocked {
                    entry: "vault".into(),
                },
            ),
            (
                obs(3, "x", "1password"),
                Indexing::Blocked {
                    entry: "1Password".into(),
                },
            ),
            (
                obs(4, "db.kdbx", "KeePassXC"),
                Indexing::NeverRemember {
                    app: "keepassxc".into(),
                },
            ),
            (obs(5, "keepassxc notes", "mousepad"), Indexing::Allowed),
        ];
        for (w, want) in cases {
            assert_eq!(may_index(&w, &block, &never), want, "{}", w.title);
        }
    }
}
