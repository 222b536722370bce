//! The timeline: every perception and action as one JSON line (tool, target window, point or
//! element, route, effect, time), appended to `timeline.jsonl` in the memory directory.
//!
//! Bound: when the live file reaches [`TIMELINE_ROTATE_BYTES`] it becomes `timeline.1.jsonl`
//! (replacing the previous one), so the timeline never holds more than twice that on disk
//! plus one entry; every text field is clipped to [`super::MAX_TEXT_CHARS`] characters.
//! Appends are one `write` of a whole line and are not fsynced (a crash may lose the last
//! lines, never corrupt earlier ones); a torn last line is skipped on read and counted.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use deskpilot_types::{Point, Rect, Role, WindowId};
use serde::{Deserialize, Serialize};

use super::{UnixMillis, clip};

/// Size at which the live timeline file is rotated.
pub const TIMELINE_ROTATE_BYTES: u64 = 1024 * 1024;

const LIVE: &str = "timeline.jsonl";
const ROTATED: &str = "timeline.1.jsonl";

/// The window an entry was about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineWindow {
    pub id: WindowId,
    pub title: String,
    pub process: Option<String>,
}

/// Where in the window the call acted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TimelineTarget {
    /// A physical virtual-desktop pixel.
    Point { at: Point },
    /// A control, by role, name and path.
    Element {
        role: Role,
        name: String,
        path: String,
        bounds: Option<Rect>,
    },
}

/// One line of the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineEntry {
    pub at: UnixMillis,
    pub tool: String,
    pub window: Option<TimelineWindow>,
    pub target: Option<TimelineTarget>,
    /// How the action was delivered (`pattern`, `xtest`, …), as the action report names it.
    pub route: Option<String>,
    /// What it did (`changed`, `no_change`, …), as the action report names it.
    pub effect: Option<String>,
    /// What else an audit needs (`secret MAIL_PASS typed; approved by the person`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl TimelineEntry {
    fn clipped(&self) -> TimelineEntry {
        let mut e = self.clone();
        e.tool = clip(&e.tool);
        if let Some(w) = &mut e.window {
            w.title = clip(&w.title);
            w.process = w.process.as_deref().map(clip);
        }
        if let Some(TimelineTarget::Element { name, path, .. }) = &mut e.target {
            *name = clip(name);
            *path = clip(path);
        }
        e.route = e.route.as_deref().map(clip);
        e.effect = e.effect.as_deref().map(clip);
        e.detail = e.detail.as_deref().map(clip);
        e
    }
}

/// What a read found: entries oldest first, and how many lines could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineRead {
    pub entries: Vec<TimelineEntry>,
    pub skipped_lines: usize,
}

/// The timeline files of one memory directory.
#[derive(Debug, Clone)]
pub struct Timeline {
    dir: PathBuf,
}

impl Timeline {
    pub fn new(dir: &Path) -> Timeline {
        Timeline {
            dir: dir.to_path_buf(),
        }
    }

    fn live(&self) -> PathBuf {
        self.dir.join(LIVE)
    }

    fn rotated(&self) -> PathBuf {
        self.dir.join(ROTATED)
    }

    /// Appends one entry (rotating first when the live file is full).
    pub fn append(&self, entry: &TimelineEntry) -> io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let live = self.live();
        if fs::metadata(&live).is_ok_and(|m| m.len() >= TIMELINE_ROTATE_BYTES) {
            fs::rename(&live, self.rotated())?;
        }
        // No secret value is ever written, whatever text an entry carries.
        let mut line = serde_json::to_vec(&entry.clipped())
            .map(deskpilot_types::redact::scrub_bytes)
            .map_err(io::Error::other)?;
        line.push(b'\n');
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(&live)?
            .write_all(&line)
    }

    /// The last `limit` entries at or after `since` (Unix ms), oldest first.
    pub fn read(&self, limit: usize, since: Option<UnixMillis>) -> io::Result<TimelineRead> {
        let mut entries = Vec::new();
        let mut skipped_lines = 0;
        for path in [self.rotated(), self.live()] {
            let text = match fs::read(&path) {
                Ok(t) => t,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            for line in text.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                match serde_json::from_slice::<TimelineEntry>(line) {
                    Ok(e) if since.is_none_or(|s| e.at >= s) => entries.push(e),
                    Ok(_) => {}
                    Err(_) => skipped_lines += 1,
                }
            }
        }
        let keep = entries.len().saturating_sub(limit);
        entries.drain(..keep);
        Ok(TimelineRead {
            entries,
            skipped_lines,
        })
    }

    /// Bytes of both files on disk.
    pub fn bytes(&self) -> u64 {
        [self.live(), self.rotated()]
            .iter()
            .filter_map(|p| fs::metadata(p).ok())
            .map(|m| m.len())
            .sum()
    }

    /// Removes both files.
    pub fn clear(&self) -> io::Result<()> {
        for p in [self.live(), self.rotated()] {
            match fs::remove_file(&p) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempDir;

    fn entry(at: UnixMillis, tool: &str) -> TimelineEntry {
        TimelineEntry {
            at,
            tool: tool.into(),
            window: Some(TimelineWindow {
                id: WindowId(0x40_0001),
                title: "Untitled - Mousepad".into(),
                process: Some("mousepad".into()),
            }),
            target: Some(if at.is_multiple_of(2) {
                TimelineTarget::Point {
                    at: Point::new(10, 20),
                }
            } else {
                TimelineTarget::Element {
                    role: Role::Button,
                    name: "OK".into(),
                    path: "0/3".into(),
                    bounds: Some(Rect::new(1, 2, 3, 4)),
                }
            }),
            route: Some("xtest".into()),
            effect: Some("changed".into()),
            detail: None,
        }
    }

    #[test]
    fn entries_read_back_with_limit_and_since() {
        let dir = TempDir::new("timeline-read");
        let t = Timeline::new(dir.path());
        for at in 1..=10 {
            t.append(&entry(at, "click")).unwrap();
        }
        let cases: &[(usize, Option<u64>, &[u64])] = &[
            (3, None, &[8, 9, 10]),
            (100, Some(7), &[7, 8, 9, 10]),
            (2, Some(4), &[9, 10]),
            (0, None, &[]),
            (5, Some(11), &[]),
        ];
        for (limit, since, want) in cases {
            let r = t.read(*limit, *since).unwrap();
            let got: Vec<u64> = r.entries.iter().map(|e| e.at).collect();
            assert_eq!(&got, want, "limit {limit} since {since:?}");
        }
        assert_eq!(t.read(1, None).unwrap().entries[0], entry(10, "click"));
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_counted() {
        let dir = TempDir::new("timeline-torn");
        let t = Timeline::new(dir.path());
        t.append(&entry(1, "click")).unwrap();
        let mut f = OpenOptions::new().append(true).open(t.live()).unwrap();
        f.write_all(b"{\"at\":2,\"to").unwrap();
        let r = t.read(10, None).unwrap();
        assert_eq!((r.entries.len(), r.skipped_lines), (1, 1));
    }

    #[test]
    fn rotation_bounds_the_files() {
        let dir = TempDir::new("timeline-rotate");
        let t = Timeline::new(dir.path());
        let long = "x".repeat(10_000);
        let mut n = 0;
        while n < 6000 {
            t.append(&entry(n, &long)).unwrap();
            n += 1;
        }
        let bytes = t.bytes();
        assert!(bytes <= 2 * TIMELINE_ROTATE_BYTES + 2048, "{bytes}");
        let r = t.read(usize::MAX, None).unwrap();
        assert_eq!(r.entries.last().unwrap().at, n - 1);
        assert!(r.entries.len() < 6000);
        t.clear().unwrap();
        assert_eq!(t.bytes(), 0);
    }
}
