//! The encoded bytes of one session's recent screenshots, kept so they can be handed out again
//! by id (`deskpilot://screenshot/{id}`): the image exactly as the client was given it, with the
//! geometry that maps its pixels back to the screen.
//!
//! What is kept is what a surface chose to show ([`Session::keep_screenshot`]), not every
//! capture: captures nobody saw (a verify poll, OCR's frame) are never asked for. The store is
//! bounded twice — [`KEPT_SHOTS`] images and [`KEPT_BYTES`] bytes, the oldest going first — and
//! lives in the session, so one client never reads another's images (an id another session was
//! issued is told apart as `FOREIGN_REFERENCE`), and it is forgotten with the session's other
//! ids when the desktop is replaced.
//!
//! Nothing here captures or encodes: the bytes are the ones the pipeline made.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::SystemTime;

use deskpilot_types::{Monitor, Rect, WindowInfo};

use crate::capture::Screenshot;
use crate::coords::ViewGeometry;
use crate::ids::IdKind;
use crate::pipeline::ImageFormat;
use crate::registry::ScreenshotId;
use crate::{error::Error, session::Session};

/// How many images one session keeps.
pub const KEPT_SHOTS: usize = 16;
/// How many encoded bytes one session keeps at most (a single larger image is still kept, alone).
pub const KEPT_BYTES: usize = 16 * 1024 * 1024;

/// One kept screenshot.
#[derive(Debug, Clone)]
pub struct KeptShot {
    pub id: ScreenshotId,
    /// Which physical rectangle the image shows, and how.
    pub view: ViewGeometry,
    pub format: ImageFormat,
    /// The encoded image, shared with the store.
    pub bytes: Arc<[u8]>,
    /// The window the screenshot was pinned to, as it was then.
    pub window: Option<WindowInfo>,
    pub taken_at: SystemTime,
    /// The monitor that holds the capture's centre, as the monitors are now (filled by
    /// [`Session::kept_screenshot`]).
    pub monitor: Option<Monitor>,
}

/// A session's kept screenshots, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    shots: VecDeque<KeptShot>,
    bytes: usize,
}

impl Kept {
    fn keep(&mut self, shot: KeptShot) {
        if self.shots.iter().any(|s| s.id == shot.id) {
            return;
        }
        self.bytes += shot.bytes.len();
        self.shots.push_back(shot);
        while self.shots.len() > KEPT_SHOTS || (self.bytes > KEPT_BYTES && self.shots.len() > 1) {
            if let Some(old) = self.shots.pop_front() {
                self.bytes -= old.bytes.len();
            }
        }
    }

    fn get(&self, id: ScreenshotId) -> Option<KeptShot> {
        self.shots.iter().find(|s| s.id == id).cloned()
    }
}

/// The monitor holding `rect`'s centre, else the one it overlaps most.
pub(crate) fn monitor_of(monitors: &[Monitor], rect: Rect) -> Option<Monitor> {
    let centre = (
        rect.x as i64 + rect.width as i64 / 2,
        rect.y as i64 + rect.height as i64 / 2,
    );
    let holds = |m: &&Monitor| {
        let r = m.rect;
        (r.x as i64..r.x as i64 + r.width as i64).contains(&centre.0)
            && (r.y as i64..r.y as i64 + r.height as i64).contains(&centre.1)
    };
    let overlap = |m: &&Monitor| {
        let r = m.rect;
        let w = (rect.x as i64 + rect.width as i64).min(r.x as i64 + r.width as i64)
            - (rect.x as i64).max(r.x as i64);
        let h = (rect.y as i64 + rect.height as i64).min(r.y as i64 + r.height as i64)
            - (rect.y as i64).max(r.y as i64);
        w.max(0) * h.max(0)
    };
    monitors
        .iter()
        .find(holds)
        .or_else(|| {
            monitors
                .iter()
                .filter(|m| overlap(m) > 0)
                .max_by_key(overlap)
        })
        .cloned()
}

impl Session {
    /// Keeps `shot`'s bytes so [`Session::kept_screenshot`] can hand them out again (a shot
    /// kept already is not kept twice). Never blocks on the desktop.
    pub fn keep_screenshot(&self, shot: &Screenshot) {
        let kept = KeptShot {
            id: shot.id,
            view: shot.view,
            format: shot.image.format,
            bytes: Arc::from(shot.image.bytes.as_slice()),
            window: shot.window.clone(),
            taken_at: SystemTime::now(),
            monitor: None,
        };
        self.with_slot::<Kept, _>(|k| k.keep(kept));
    }

    /// Whether this session keeps screenshot `id` now.
    pub fn keeps_screenshot(&self, id: ScreenshotId) -> bool {
        self.with_slot::<Kept, _>(|k| k.shots.iter().any(|s| s.id == id))
    }

    /// A kept screenshot with the monitor it lies on: `UNKNOWN_SCREENSHOT` when this session
    /// never kept it or has let it go, `FOREIGN_REFERENCE` when another session was issued it.
    pub fn kept_screenshot(&self, id: ScreenshotId) -> Result<KeptShot, Error> {
        let Some(mut shot) = self.with_slot::<Kept, _>(|k| k.get(id)) else {
            return Err(if self.foreign(IdKind::Screenshot, id) {
                Error::ForeignReference {
                    what: format!("screenshot {id}"),
                }
            } else {
                Error::UnknownScreenshot(id)
            });
        };
        let monitors = self.desktop().screens.monitors()?;
        shot.monitor = monitor_of(&monitors, shot.view.capture);
        Ok(shot)
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;

    use super::*;
    use crate::capture::{CaptureTarget, ScreenshotRequest};
    use crate::config::EngineConfig;
    use crate::engine::Engine;

    fn shot(id: ScreenshotId, bytes: usize) -> KeptShot {
        KeptShot {
            id,
            view: ViewGeometry::new(Rect::new(0, 0, 10, 10), 10, 10),
            format: ImageFormat::Png,
            bytes: Arc::from(vec![0u8; bytes]),
            window: None,
            taken_at: SystemTime::now(),
            monitor: None,
        }
    }

    #[test]
    fn keeps_the_newest_within_both_bounds() {
        let mut k = Kept::default();
        for id in 1..=KEPT_SHOTS as u64 + 2 {
            k.keep(shot(id, 10));
        }
        assert!(k.get(1).is_none() && k.get(2).is_none());
        assert!(k.get(3).is_some() && k.get(KEPT_SHOTS as u64 + 2).is_some());
        k.keep(shot(100, KEPT_BYTES / 2));
        k.keep(shot(101, KEPT_BYTES / 2));
        assert!(k.get(100).is_some() && k.get(101).is_some());
        assert_eq!(k.shots.len(), 2, "the small ones went first");
        // One image over the byte bound is still kept, alone.
        k.keep(shot(102, KEPT_BYTES + 1));
        assert_eq!(k.shots.iter().map(|s| s.id).collect::<Vec<_>>(), [102]);
        assert_eq!(k.bytes, KEPT_BYTES + 1);
        k.keep(shot(102, 5));
        assert_eq!(k.shots.len(), 1, "a kept id is not kept twice");
    }

    #[test]
    fn a_kept_screenshot_comes_back_with_its_monitor_and_only_to_its_session() {
        let fake = FakeDesktop::new(800, 600);
        let engine = Arc::new(Engine::new(fake.desktop(), EngineConfig::default()));
        let (a, b) = (Session::new(engine.clone()), Session::new(engine));
        let s = a
            .screenshot(&ScreenshotRequest {
                target: CaptureTarget::Region(Rect::new(10, 20, 100, 50)),
                max_width: None,
                format: Some(ImageFormat::Png),
            })
            .unwrap();
        assert!(matches!(
            a.kept_screenshot(s.id),
            Err(Error::UnknownScreenshot(_))
        ));
        a.keep_screenshot(&s);
        assert!(a.keeps_screenshot(s.id));
        let kept = a.kept_screenshot(s.id).unwrap();
        assert_eq!(&*kept.bytes, s.image.bytes.as_slice());
        assert_eq!(kept.view, s.view);
        assert_eq!(kept.monitor.map(|m| m.index), Some(0));
        assert!(matches!(
            b.kept_screenshot(s.id),
            Err(Error::ForeignReference { .. })
        ));
    }

    #[test]
    fn the_monitor_is_the_one_holding_the_centre() {
        let m = |index, x| Monitor {
            index,
            name: format!("m{index}"),
            rect: Rect::new(x, 0, 100, 100),
            primary: index == 0,
            scale: 1.0,
        };
        let monitors = [m(0, 0), m(1, 100)];
        assert_eq!(
            monitor_of(&monitors, Rect::new(80, 0, 60, 10)).map(|m| m.index),
            Some(1)
        );
        assert_eq!(
            monitor_of(&monitors, Rect::new(-40, 0, 60, 10)).map(|m| m.index),
            Some(0),
            "a centre off every monitor: the one it overlaps"
        );
        assert!(monitor_of(&monitors, Rect::new(500, 500, 5, 5)).is_none());
    }
}
