//! Memory: what deskpilot saw and did on this user's desktop, kept across calls and restarts —
//! a window index (with a dHash of each window's pixels), an element index, the focus history,
//! an append-only timeline, and recall of phrases such as "that window" or "刚才那个按钮".
//!
//! [`Memory`] is pure logic plus file persistence: it takes plain observations and Unix
//! millisecond times from its caller and never talks to a backend. It does not decide *when*
//! to observe or save; the engine that owns it does, through [`live`] (the store behind a lock,
//! its saver thread, the watched window listing and the per-call trace). This crate knows no
//! session and no engine. Nothing here is worded for an agent: results are typed facts a
//! profile renders.
//!
//! Invariants:
//! - every collection is bounded by the `MAX_*` consts below and every stored text by
//!   [`MAX_TEXT_CHARS`], so the state file stays under [`MAX_STATE_BYTES`] and the timeline
//!   under twice [`TIMELINE_ROTATE_BYTES`];
//! - a window refused by [`may_index`] is never recorded, nor are its elements or its timeline
//!   details; a password field's value is never stored;
//! - a dHash is taken of an already-masked frame, and a hash match alone never recognises a
//!   window.

mod aliases;
mod dhash;
pub mod live;
mod persist;
mod recall;
mod store;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod timeline;

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use deskpilot_types::WindowId;

pub use aliases::{AliasHit, Aliases, DEFAULT_ALIASES};
pub use dhash::{Dhash, HASH_THRESHOLD, dhash, hamming};
pub use live::{SAVE_INTERVAL, SaveError, traced};
pub use persist::{LoadWarning, MAX_STATE_BYTES, SCHEMA_VERSION, STATE_FILE};
pub use recall::{
    Deixis, Field, MAX_CANDIDATES, Presence, Recall, RecallCandidate, Recalled, Why, deixis,
};
pub use store::{
    Confidence, ElementIndex, ElementObservation, ElementRecord, FocusEntry, FocusHistory,
    Indexing, Recognition, WindowIndex, WindowObservation, WindowRecord, may_index,
};
pub use timeline::{
    TIMELINE_ROTATE_BYTES, TimelineEntry, TimelineRead, TimelineTarget, TimelineWindow,
};

/// Deployment settings of memory. The default has memory off (no directory), so tests and
/// one-shot tools never write into a user's state directory by accident; the binary turns it
/// on with the platform's default directory ([`default_dir`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MemorySettings {
    /// `memory` (default on in the binary).
    pub enabled: bool,
    /// `memoryDir` / `DESKPILOT_MEMORY_DIR`; `None` leaves memory off.
    pub dir: Option<PathBuf>,
    /// `memoryNeverRemember`: process or class names never indexed.
    pub never_remember: Vec<String>,
    /// `memoryAliases`: extra groups of names for one app (`["飞书", "feishu", "lark"]`).
    pub aliases: Vec<Vec<String>>,
}

/// Milliseconds since the Unix epoch.
pub type UnixMillis = u64;

/// Windows kept in the index (closed ones are dropped first).
pub const MAX_WINDOWS: usize = 256;
/// Controls kept in the element index (least recently seen or acted on dropped first).
pub const MAX_ELEMENTS: usize = 1024;
/// Entries kept in the focus history (oldest dropped first).
pub const MAX_FOCUS: usize = 256;
/// Characters kept of any stored text (titles, names, paths, values, timeline fields).
pub const MAX_TEXT_CHARS: usize = 256;

/// `s` cut to [`MAX_TEXT_CHARS`] characters.
fn clip(s: &str) -> String {
    match s.char_indices().nth(MAX_TEXT_CHARS) {
        Some((at, _)) => s[..at].to_string(),
        None => s.to_string(),
    }
}

/// The current time in Unix milliseconds (0 if the clock is before 1970).
pub fn now_millis() -> UnixMillis {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as UnixMillis)
}

/// Which convention [`default_dir`] follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathConvention {
    /// XDG: `$XDG_STATE_HOME/deskpilot/memory`, else `$HOME/.local/state/deskpilot/memory`.
    Xdg,
    /// Windows: `%LOCALAPPDATA%\deskpilot\memory`, else
    /// `%USERPROFILE%\AppData\Local\deskpilot\memory`.
    Windows,
}

impl PathConvention {
    /// The convention of the platform this build targets.
    ///
    /// # Platform-specific
    /// `Windows` on Windows, `Xdg` everywhere else.
    pub fn native() -> PathConvention {
        if cfg!(windows) {
            PathConvention::Windows
        } else {
            PathConvention::Xdg
        }
    }
}

/// The default memory directory under `convention`, reading variables through `env` (pass
/// `|k| std::env::var_os(k)`); `None` when no variable it needs is set. Relative or empty
/// values are ignored, as the XDG specification asks.
pub fn default_dir(
    convention: PathConvention,
    env: impl Fn(&str) -> Option<OsString>,
) -> Option<PathBuf> {
    let var = |k: &str| {
        env(k).map(PathBuf::from).filter(|p| {
            !p.as_os_str().is_empty()
                && (p.is_absolute() || p.has_root() || looks_windows_absolute(p))
        })
    };
    let base = match convention {
        PathConvention::Xdg => {
            var("XDG_STATE_HOME").or_else(|| var("HOME").map(|h| h.join(".local").join("state")))?
        }
        PathConvention::Windows => var("LOCALAPPDATA")
            .or_else(|| var("USERPROFILE").map(|h| h.join("AppData").join("Local")))?,
    };
    Some(base.join("deskpilot").join("memory"))
}

/// `C:\…` counts as absolute even when this build runs on Unix (the function is pure).
fn looks_windows_absolute(p: &Path) -> bool {
    let s = p.to_string_lossy();
    let b = s.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/')
}

/// Everything memory holds, as saved in the state file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryState {
    pub windows: WindowIndex,
    pub elements: ElementIndex,
    pub focus: FocusHistory,
    /// When the state last changed.
    pub updated_at: Option<UnixMillis>,
}

impl MemoryState {
    /// A complete window list (already filtered by [`may_index`]) and the active window:
    /// updates the index and the focus history. Returns the recognitions made.
    pub fn observe_windows(
        &mut self,
        list: &[WindowObservation],
        active: Option<WindowId>,
        now: UnixMillis,
    ) -> Vec<Recognition> {
        let made = self.windows.observe(list, active, now);
        if let Some(w) = active.and_then(|id| self.windows.get(id)) {
            self.focus.observe(w, now);
        }
        self.updated_at = Some(now);
        made
    }

    fn enforce_bounds(&mut self) {
        self.windows.windows.truncate(MAX_WINDOWS);
        self.elements.elements.truncate(MAX_ELEMENTS);
        let extra = self.focus.entries.len().saturating_sub(MAX_FOCUS);
        self.focus.entries.drain(..extra);
    }
}

/// Privacy settings memory applies to every observation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryPrivacy {
    /// The deployment's blocklist (substrings of title, process or class).
    pub blocklist: Vec<String>,
    /// Apps (process or class names) never to remember.
    pub never_remember: Vec<String>,
}

/// Counts and sizes for `memory_stats`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryStats {
    pub windows: usize,
    pub windows_gone: usize,
    pub elements: usize,
    pub focus_entries: usize,
    /// Bytes of the state file on disk (0 before the first save).
    pub state_bytes: u64,
    /// Bytes of the timeline files on disk.
    pub timeline_bytes: u64,
    pub last_update: Option<UnixMillis>,
    pub dir: PathBuf,
}

/// One user's memory: state, timeline, aliases and privacy rules over one directory.
#[derive(Debug)]
pub struct Memory {
    dir: PathBuf,
    state: MemoryState,
    aliases: Aliases,
    privacy: MemoryPrivacy,
    timeline: timeline::Timeline,
    /// A bad state file could not be moved aside: never save over it.
    keep_bad_file: bool,
}

impl Memory {
    /// Opens the memory in `dir` (created on first save), loading its state file. A state file
    /// that could not be loaded was moved aside; the warning says where. If even that move
    /// failed, the bad file is left in place and [`Memory::save`] refuses to overwrite it
    /// until [`Memory::clear`].
    pub fn open(
        dir: &Path,
        privacy: MemoryPrivacy,
        aliases: Aliases,
        now: UnixMillis,
    ) -> (Memory, Option<LoadWarning>) {
        let loaded = persist::load(dir, now);
        if let Some(e) = &loaded.move_failed {
            tracing::warn!(dir = %dir.display(), error = %e, "memory: could not move a bad state file aside; not saving over it");
        }
        let memory = Memory {
            dir: dir.to_path_buf(),
            state: loaded.state,
            aliases,
            privacy,
            timeline: timeline::Timeline::new(dir),
            keep_bad_file: loaded.move_failed.is_some(),
        };
        (memory, loaded.warning)
    }

    pub fn state(&self) -> &MemoryState {
        &self.state
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn allowed(&self, w: &WindowObservation) -> bool {
        may_index(w, &self.privacy.blocklist, &self.privacy.never_remember) == Indexing::Allowed
    }

    /// A complete window list and the active window; refused windows are dropped (and an
    /// active refused window does not enter the focus history).
    pub fn observe_windows(
        &mut self,
        list: &[WindowObservation],
        active: Option<WindowId>,
        now: UnixMillis,
    ) -> Vec<Recognition> {
        let kept: Vec<WindowObservation> =
            list.iter().filter(|w| self.allowed(w)).cloned().collect();
        let active = active.filter(|id| kept.iter().any(|w| w.id == *id));
        self.state.observe_windows(&kept, active, now)
    }

    /// The dHash of a window's (masked) pixels; a recognition when it reveals a reopened window.
    pub fn set_window_hash(
        &mut self,
        id: WindowId,
        hash: Dhash,
        now: UnixMillis,
    ) -> Option<Recognition> {
        self.state.windows.get(id)?;
        self.state.updated_at = Some(now);
        self.state.windows.set_hash(id, hash)
    }

    /// A control read from a tree (`acted` when an action targeted it). Ignored unless its
    /// window is in the index (so nothing of a refused window is kept).
    pub fn observe_element(&mut self, e: &ElementObservation, acted: bool, now: UnixMillis) {
        if self.state.windows.get(e.window).is_none() {
            return;
        }
        self.state.elements.observe(e, acted, now);
        self.state.updated_at = Some(now);
    }

    /// Appends to the timeline. An entry about a window memory does not hold (refused or never
    /// seen by a window list) keeps only its tool, time, route and effect.
    pub fn record(&self, entry: &TimelineEntry) -> io::Result<()> {
        let known = entry
            .window
            .as_ref()
            .is_none_or(|w| self.state.windows.get(w.id).is_some());
        if known {
            return self.timeline.append(entry);
        }
        let mut redacted = entry.clone();
        redacted.window = None;
        redacted.target = None;
        self.timeline.append(&redacted)
    }

    /// The last `limit` timeline entries at or after `since`, oldest first.
    pub fn timeline(&self, limit: usize, since: Option<UnixMillis>) -> io::Result<TimelineRead> {
        self.timeline.read(limit, since)
    }

    /// Resolves a phrase to ranked candidates.
    pub fn recall(&self, query: &str) -> Recall {
        recall::recall(&self.state, &self.aliases, query)
    }

    /// Writes the state file atomically; returns its size.
    pub fn save(&self) -> io::Result<u64> {
        if self.keep_bad_file {
            return Err(io::Error::other(
                "the unreadable state file could not be moved aside; not overwriting it",
            ));
        }
        persist::save(&self.dir, &self.state)
    }

    pub fn stats(&self) -> MemoryStats {
        let w = &self.state.windows.windows;
        MemoryStats {
            windows: w.len(),
            windows_gone: w.iter().filter(|w| w.is_gone()).count(),
            elements: self.state.elements.elements.len(),
            focus_entries: self.state.focus.entries.len(),
            state_bytes: std::fs::metadata(self.dir.join(STATE_FILE)).map_or(0, |m| m.len()),
            timeline_bytes: self.timeline.bytes(),
            last_update: self.state.updated_at,
            dir: self.dir.clone(),
        }
    }

    /// Forgets everything: the state, the state file and the timeline (files moved aside as
    /// corrupt are left for a human).
    pub fn clear(&mut self) -> io::Result<()> {
        self.state = MemoryState::default();
        self.keep_bad_file = false;
        match std::fs::remove_file(self.dir.join(STATE_FILE)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        self.timeline.clear()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempDir;
    use deskpilot_types::{Rect, Role};
    use store::tests::obs;

    #[test]
    fn default_dir_follows_each_convention() {
        let env = |pairs: Vars| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        type Vars = &'static [(&'static str, &'static str)];
        let cases: &[(PathConvention, Vars, Option<&str>)] = &[
            (
                PathConvention::Xdg,
                &[("XDG_STATE_HOME", "/s"), ("HOME", "/h")],
                Some("/s"),
            ),
            (
                PathConvention::Xdg,
                &[("XDG_STATE_HOME", ""), ("HOME", "/h")],
                Some("/h/.local/state"),
            ),
            (
                PathConvention::Xdg,
                &[("XDG_STATE_HOME", "rel"), ("HOME", "/h")],
                Some("/h/.local/state"),
            ),
            (PathConvention::Xdg, &[], None),
            (
                PathConvention::Windows,
                &[("LOCALAPPDATA", r"C:\Users\u\AppData\Local")],
                Some(r"C:\Users\u\AppData\Local"),
            ),
            (
                PathConvention::Windows,
                &[("USERPROFILE", r"C:\Users\u")],
                Some(r"C:\Users\u"),
            ),
            (PathConvention::Windows, &[("HOME", "/h")], None),
        ];
        for (conv, vars, base) in cases {
            let got = default_dir(*conv, env(vars));
            let want = base.map(|b| {
                let mut p = PathBuf::from(b);
                if *conv == PathConvention::Windows && vars[0].0 == "USERPROFILE" {
                    p = p.join("AppData").join("Local");
                }
                p.join("deskpilot").join("memory")
            });
            assert_eq!(got, want, "{conv:?} {vars:?}");
        }
        assert_eq!(
            PathConvention::native() == PathConvention::Windows,
            cfg!(windows)
        );
    }

    #[test]
    fn clip_keeps_whole_characters() {
        assert_eq!(clip(&"界".repeat(300)).chars().count(), MAX_TEXT_CHARS);
        assert_eq!(clip("short"), "short");
    }

    #[test]
    fn memory_survives_a_restart_and_clears() {
        let dir = TempDir::new("memory-restart");
        let (mut m, loaded) =
            Memory::open(dir.path(), MemoryPrivacy::default(), Aliases::default(), 1);
        assert!(loaded.is_none());
        m.observe_windows(
            &[
                obs(1, "Untitled - Mousepad", "mousepad"),
                obs(2, "bash", "xterm"),
            ],
            Some(WindowId(2)),
            10,
        );
        m.observe_windows(
            &[
                obs(1, "Untitled - Mousepad", "mousepad"),
                obs(2, "bash", "xterm"),
            ],
            Some(WindowId(1)),
            20,
        );
        m.record(&TimelineEntry {
            at: 20,
            tool: "click".into(),
            window: None,
            target: None,
            route: None,
            effect: None,
            detail: None,
        })
        .unwrap();
        m.save().unwrap();
        drop(m);
        let (mut m, _) = Memory::open(dir.path(), MemoryPrivacy::default(), Aliases::default(), 2);
        let Recall::Matched(c) = m.recall("刚才那个窗口") else {
            panic!()
        };
        assert!(matches!(
            c[0].target,
            Recalled::Window {
                id: WindowId(1),
                ..
            }
        ));
        let s = m.stats();
        assert_eq!(
            (s.windows, s.focus_entries, s.last_update),
            (2, 2, Some(20))
        );
        assert!(s.state_bytes > 0 && s.timeline_bytes > 0);
        assert_eq!(m.timeline(10, None).unwrap().entries.len(), 1);
        m.clear().unwrap();
        let s = m.stats();
        assert_eq!((s.windows, s.state_bytes, s.timeline_bytes), (0, 0, 0));
    }

    #[test]
    fn a_corrupt_state_file_on_open_is_moved_aside_and_reported() {
        let dir = TempDir::new("memory-corrupt");
        std::fs::write(dir.path().join(STATE_FILE), b"{\"schema\":1,\"windows\":").unwrap();
        let (m, warning) =
            Memory::open(dir.path(), MemoryPrivacy::default(), Aliases::default(), 77);
        let Some(LoadWarning::Corrupt { moved_to, .. }) = warning else {
            panic!("{warning:?}")
        };
        assert!(moved_to.ends_with(format!("{STATE_FILE}.corrupt-77")));
        assert_eq!(m.stats().windows, 0);
        m.save().unwrap();
        assert!(moved_to.exists(), "the bad bytes are kept for a human");
    }

    #[test]
    fn blocklisted_content_never_reaches_the_files() {
        let dir = TempDir::new("memory-privacy");
        let privacy = MemoryPrivacy {
            blocklist: vec!["vault".into()],
            never_remember: vec!["keepassxc".into()],
        };
        let (mut m, _) = Memory::open(dir.path(), privacy, Aliases::default(), 1);
        let list = [
            obs(1, "Secret Vault", "thunar"),
            obs(2, "db.kdbx", "keepassxc"),
            obs(3, "notes", "mousepad"),
        ];
        m.observe_windows(&list, Some(WindowId(1)), 5);
        m.observe_element(
            &ElementObservation {
                window: WindowId(2),
                role: Role::Edit,
                name: "master key".into(),
                bounds: Rect::new(0, 0, 1, 1),
                path: "0".into(),
                token: None,
                value: Some("hunter2".into()),
                password: false,
            },
            true,
            6,
        );
        m.record(&TimelineEntry {
            at: 6,
            tool: "type_text".into(),
            window: Some(TimelineWindow {
                id: WindowId(1),
                title: "Secret Vault".into(),
                process: Some("thunar".into()),
            }),
            target: None,
            route: None,
            effect: None,
            detail: None,
        })
        .unwrap();
        m.save().unwrap();
        assert_eq!(m.stats().windows, 1);
        assert!(m.state().focus.entries.is_empty());
        for f in std::fs::read_dir(dir.path()).unwrap() {
            let text = std::fs::read_to_string(f.unwrap().path())
                .unwrap()
                .to_lowercase();
            for secret in ["vault", "kdbx", "master key", "hunter2"] {
                assert!(!text.contains(secret), "{secret} in {text}");
            }
        }
    }

    #[test]
    #[allow(clippy::print_stderr)]
    fn a_full_state_stays_under_the_stated_bound() {
        let mut s = MemoryState::default();
        let long = "界".repeat(MAX_TEXT_CHARS);
        let list: Vec<_> = (1..=MAX_WINDOWS as u64)
            .map(|i| {
                let mut o = obs(i, &long, &long);
                o.class = long.clone();
                o
            })
            .collect();
        for t in 0..MAX_FOCUS as u64 + 5 {
            s.observe_windows(&list, Some(WindowId(1 + t % 2)), t);
        }
        for i in 0..MAX_ELEMENTS as u64 {
            s.elements.observe(
                &ElementObservation {
                    window: WindowId(1),
                    role: Role::Button,
                    name: format!("{i}{long}"),
                    bounds: Rect::new(0, 0, 1, 1),
                    path: long.clone(),
                    token: Some(long.clone()),
                    value: Some(long.clone()),
                    password: false,
                },
                true,
                i,
            );
            s.windows
                .set_hash(WindowId(1 + i % MAX_WINDOWS as u64), Dhash(i));
        }
        let bytes = persist::encode(&s).unwrap().len() as u64;
        eprintln!(
            "state file at every cap with {MAX_TEXT_CHARS}-character CJK texts: {bytes} bytes"
        );
        assert!(bytes <= MAX_STATE_BYTES, "{bytes}");
        assert_eq!(s.focus.entries.len(), MAX_FOCUS);
    }
}
