//! `Engine`: what every session of the process shares — the backend, the configuration,
//! the guard, the id counters, the skill library, the pixel buffers — and the desktop-wide
//! reads that need no client state (`list_windows`, `window`, the overlay's own pixels).
//!
//! Per-client operations (captures, zoom, status, actions) are `impl Session` in their own
//! modules; this module imports none of them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use deskpilot_backend::Desktop;
use deskpilot_types::{Rect, WindowId, WindowInfo};

use crate::config::EngineConfig;
use crate::error::Error;

/// Filter for `list_windows`: case-insensitive substrings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowFilter {
    /// Matches the title or the process name.
    pub text: String,
}

/// The desktop went away and a fresh one took its place: everything that ran on the old one
/// (apps, windows, their ids) is gone. `Display` is what a client is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesktopRestart {
    /// The generation of the fresh desktop.
    pub generation: u64,
    /// When it was up again, in Unix milliseconds.
    pub at_ms: u64,
    /// Why the old one went away.
    pub why: String,
}

impl std::fmt::Display for DesktopRestart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.at_ms / 1000;
        let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
        write!(
            f,
            "The desktop was restarted at {h:02}:{m:02}:{s:02} UTC ({}). Every app and window \
             that ran on it is gone, and screenshot ids and element tokens from before it are \
             void: list the windows and launch again what you need.",
            self.why
        )
    }
}

/// The platform-neutral core. Cheap to share behind an `Arc`; every method blocks.
#[derive(Debug)]
pub struct Engine {
    /// The desktop every call goes to; replaced whole when the desktop under it is replaced
    /// (a virtual display brought up again after its X server died).
    desktop: RwLock<Arc<Desktop>>,
    /// Bumped at every replacement: sessions drop their ids, refs and references from an
    /// earlier desktop, whose window ids a fresh X server may hand out again.
    generation: AtomicU64,
    pub(crate) config: EngineConfig,
    pub(crate) buffers: Mutex<Buffers>,
    pub(crate) guard: Arc<crate::guard::Guard>,
    /// Screenshot and snapshot ids, unique in the process, and who was issued them.
    pub(crate) ids: crate::ids::Ids,
    /// The last time the desktop went away and a fresh one took its place.
    restart: Mutex<Option<DesktopRestart>>,

    /// App skills: built-ins and the user layer.
    pub(crate) skills: deskpilot_skills::Library,
    /// What this user's desktop showed and what was done on it; `None` when memory is off.
    pub(crate) memory: Option<Arc<deskpilot_memory::live::Store>>,
    /// Named secrets and their scopes (values are loaded by the binary with
    /// [`SecretStore::load`](crate::secrets::SecretStore::load)).
    secrets: crate::secrets::SecretStore,
}

/// `desktop` as the engine holds it: window listings feed memory, and the guard listens to
/// its overlay's Esc.
fn attach(
    mut desktop: Desktop,
    guard: &Arc<crate::guard::Guard>,
    memory: Option<&Arc<deskpilot_memory::live::Store>>,
) -> Desktop {
    if let Some(store) = memory {
        desktop.windows = Arc::new(deskpilot_memory::live::Watched {
            inner: desktop.windows.clone(),
            store: Arc::downgrade(store),
        });
    }
    guard.listen(&*desktop.overlay);
    desktop
}

/// Pixel buffers kept between screenshots, so a full-screen capture reuses its pages instead
/// of faulting in ~10 MB of fresh memory every call. Concurrent screenshots simply find the
/// pool empty and allocate.
#[derive(Debug, Default)]
pub(crate) struct Buffers {
    pub(crate) frame: Vec<u8>,
    pub(crate) scaled: Vec<u8>,
}

impl Engine {
    pub fn new(desktop: Desktop, config: EngineConfig) -> Self {
        let memory = deskpilot_memory::live::Store::open(&config.memory, &config.safety.blocklist);
        let guard = Arc::new(crate::guard::Guard::default());
        let desktop = attach(desktop, &guard, memory.as_ref());
        let skills =
            deskpilot_skills::Library::new(&config.skills.library, &|k| std::env::var(k).ok());
        let secrets = crate::secrets::SecretStore::new(config.secrets.clone());
        Engine {
            guard,
            skills,
            desktop: RwLock::new(Arc::new(desktop)),
            generation: AtomicU64::new(0),
            config,
            buffers: Mutex::new(Buffers::default()),
            ids: Default::default(),
            restart: Mutex::new(None),
            secrets,
            memory,
        }
    }

    /// Serves `desktop` from now on in place of one that went away (`why`): like
    /// [`Engine::replace_desktop`], and every session's next call is told once
    /// ([`Session::take_restart`](crate::session::Session::take_restart)) that its apps are gone.
    pub fn restore_desktop(&self, desktop: Desktop, why: &str) {
        self.replace_desktop(desktop);
        let at_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        *self.restart.lock().unwrap_or_else(|e| e.into_inner()) = Some(DesktopRestart {
            generation: self.desktop_generation(),
            at_ms,
            why: why.to_string(),
        });
    }

    /// The named secrets this engine may type.
    pub fn secrets(&self) -> &crate::secrets::SecretStore {
        &self.secrets
    }

    /// The last desktop restart, if there was one.
    pub fn last_restart(&self) -> Option<DesktopRestart> {
        self.restart
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The desktop calls go to now.
    pub(crate) fn desktop(&self) -> Arc<Desktop> {
        self.desktop
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Which desktop this is: 0 for the first, bumped by every [`Engine::replace_desktop`].
    pub fn desktop_generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Sends every later call to `desktop` instead (the old one's overlay is shut down).
    /// Calls already running finish on the old one. Every session forgets the screenshot
    /// ids, element refs and references it was issued before: they named windows of a
    /// desktop that is gone, and a fresh X server hands the same window ids out again.
    pub fn replace_desktop(&self, desktop: Desktop) {
        let desktop = Arc::new(attach(desktop, &self.guard, self.memory.as_ref()));
        let old = std::mem::replace(
            &mut *self.desktop.write().unwrap_or_else(|e| e.into_inner()),
            desktop,
        );
        self.generation.fetch_add(1, Ordering::AcqRel);
        old.overlay.shutdown();
        self.guard.forget_deaths();
        tracing::info!(generation = self.desktop_generation(), "desktop replaced");
    }

    /// The environment a program started on this desktop needs (its display, bus, …).
    pub fn launch_env(&self) -> Vec<(String, String)> {
        self.desktop().window_control.launch_env()
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// What the indicator paints now, for frame comparisons to leave out: its fixed regions
    /// and, while a pointer mark follows the pointer, the mark's square around the pointer.
    pub(crate) fn overlay_regions(&self) -> Vec<Rect> {
        let overlay = &self.desktop().overlay;
        let mut regions = overlay.regions();
        if let Some(side) = overlay.pointer_mark()
            && let Ok(p) = self.desktop().pointer.position()
        {
            let half = (side / 2) as i32;
            regions.push(Rect::new(p.x - half, p.y - half, side, side));
        }
        regions
    }

    /// Windows topmost first, narrowed by `filter`.
    pub fn list_windows(&self, filter: &WindowFilter) -> Result<Vec<WindowInfo>, Error> {
        self.note_call();
        let mut windows = self.desktop().windows.list_windows()?;
        let needle = filter.text.trim().to_lowercase();
        if !needle.is_empty() {
            windows.retain(|w| {
                w.title.to_lowercase().contains(&needle)
                    || w.process
                        .as_deref()
                        .is_some_and(|p| p.to_lowercase().contains(&needle))
                    || w.class.to_lowercase().contains(&needle)
            });
        }
        Ok(windows)
    }

    /// One window by id.
    pub fn window(&self, id: WindowId) -> Result<WindowInfo, Error> {
        self.desktop()
            .windows
            .list_windows()?
            .into_iter()
            .find(|w| w.id == id)
            .ok_or(Error::WindowNotFound(id))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use deskpilot_backend::FakeDesktop;

    use crate::{config::EngineConfig, session::Session};

    #[test]
    fn every_session_is_told_of_a_restart_once() {
        let engine = Arc::new(super::Engine::new(
            FakeDesktop::new(100, 100).desktop(),
            EngineConfig::default(),
        ));
        let (a, b) = (Session::new(engine.clone()), Session::new(engine.clone()));
        assert_eq!(a.take_restart(), None, "nothing happened yet");
        engine.replace_desktop(deskpilot_backend::Desktop::restarting(
            "fake",
            "gone".to_string(),
        ));
        assert_eq!(a.take_restart(), None, "a stand-in is no restart yet");
        engine.restore_desktop(FakeDesktop::new(100, 100).desktop(), "the X server died");
        let told = a.take_restart().expect("a is told");
        assert!(told.to_string().contains("(the X server died)"), "{told}");
        assert_eq!(a.take_restart(), None, "once");
        assert!(b.take_restart().is_some(), "b is told too");
        // A client that connects after the restart has lost nothing.
        assert_eq!(Session::new(engine.clone()).take_restart(), None);
    }
}
