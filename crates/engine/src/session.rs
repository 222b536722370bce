//! `Session`: what belongs to one client (one MCP connection) beside the shared [`Engine`].
//!
//! A session owns the screenshot registry and the last screenshot, the signatures `compare`
//! measures against, the element snapshots and their tokens, the approver (who asks *this*
//! client's human), its shell sessions, and typed slots where later channels keep their own
//! per-client state (browser targets, context picks). The desktop-wide parts — backend,
//! guard and kill switch, overlay, configuration — stay in the `Engine`, which every session
//! of the process shares: one Esc stops every client.
//!
//! Ids are unique in the process (the engine hands them out), so an id or token that another
//! session issued is recognised and refused as such (`FOREIGN_REFERENCE`), never resolved
//! against this session's own records.
//!
//! A `Session` dereferences to its `Engine`, so desktop-wide operations are called on it
//! directly.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use deskpilot_backend::Desktop;
use deskpilot_types::WindowId;

use crate::guard::Approver;
use crate::registry::{KeyTarget, RefKey, Reference, Registry};
use crate::snapshots::Snapshots;
use crate::{config::EngineConfig, engine::Engine};

pub(crate) use crate::ids::IdKind;
pub use crate::ids::SessionId;

/// One client's state over the shared engine. Every method blocks.
pub struct Session {
    engine: Arc<Engine>,
    id: SessionId,
    pub(crate) shots: Mutex<Registry>,
    pub(crate) snapshots: Mutex<Snapshots>,
    /// The newest signature of every target this client captured, for `compare`.
    pub(crate) references: Mutex<HashMap<RefKey, Reference>>,
    approver: Mutex<Option<Arc<dyn Approver>>>,
    /// The window of the last window screenshot or snapshot, and which of the two it was.
    observed: Mutex<Option<(WindowId, &'static str)>>,
    /// Where keys go when no window is named (the last window looked at or brought forward).
    keys_to: Mutex<Option<KeyTarget>>,
    shells: Arc<deskpilot_shell::Shells>,
    slots: Mutex<HashMap<TypeId, Box<dyn Any + Send>>>,
    /// The engine's desktop generation this session's state belongs to.
    desktop_seen: AtomicU64,
    /// The newest desktop generation this client was told about (or began on).
    restart_told: AtomicU64,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("shells", &self.shells)
            .finish_non_exhaustive()
    }
}

impl std::ops::Deref for Session {
    type Target = Engine;

    fn deref(&self) -> &Engine {
        &self.engine
    }
}

impl Session {
    /// A new client of `engine`, with shells found on this system.
    pub fn new(engine: Arc<Engine>) -> Session {
        Session::with_shells(engine, deskpilot_shell::Shells::detect())
    }

    /// A new client of `engine` whose shell sessions come from `shells`.
    pub fn with_shells(engine: Arc<Engine>, shells: deskpilot_shell::Shells) -> Session {
        let id = engine.ids.session();
        Session {
            id,
            shots: Mutex::new(Registry::default()),
            snapshots: Mutex::new(Snapshots::default()),
            references: Mutex::new(HashMap::new()),
            approver: Mutex::new(None),
            observed: Mutex::new(None),
            keys_to: Mutex::new(None),
            shells: Arc::new(shells),
            slots: Mutex::new(HashMap::new()),
            desktop_seen: AtomicU64::new(engine.desktop_generation()),
            restart_told: AtomicU64::new(engine.desktop_generation()),
            engine,
        }
    }

    /// An engine of its own over `desktop` with one session: for tests and one-shot tools.
    pub fn standalone(desktop: Desktop, config: EngineConfig) -> Session {
        Session::new(Arc::new(Engine::new(desktop, config)))
    }

    /// The desktop restart this client has not been told about yet, once: a client whose
    /// apps died with the old desktop must hear it from its next call, not find "no windows".
    pub fn take_restart(&self) -> Option<crate::engine::DesktopRestart> {
        // Every call asks: the common case (nothing new) is one atomic read, no lock.
        if self.restart_told.load(Ordering::Acquire) == self.engine.desktop_generation() {
            return None;
        }
        let restart = self.engine.last_restart()?;
        let told = self
            .restart_told
            .fetch_max(restart.generation, Ordering::AcqRel);
        (told < restart.generation).then_some(restart)
    }

    /// This session's number in the process.
    pub fn id(&self) -> SessionId {
        self.id
    }

    /// The shared engine.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// This client's shell sessions.
    pub fn shells(&self) -> &Arc<deskpilot_shell::Shells> {
        &self.shells
    }

    /// Installs who asks this client's human when `requireApproval` is on.
    pub fn set_approver(&self, approver: Arc<dyn Approver>) {
        *self.approver.lock().unwrap_or_else(|e| e.into_inner()) = Some(approver);
    }

    /// Whether [`Session::set_approver`] has run.
    pub fn has_approver(&self) -> bool {
        self.approver().is_some()
    }

    pub(crate) fn approver(&self) -> Option<Arc<dyn Approver>> {
        self.approver
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Runs `f` on this session's value of type `T` (created with `Default` on first use):
    /// where a channel above the engine (browser targets, context picks) keeps per-client state.
    pub fn with_slot<T, R>(&self, f: impl FnOnce(&mut T) -> R) -> R
    where
        T: Any + Send + Default,
    {
        self.sync_desktop();
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let slot = slots
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(T::default()));
        let value = slot
            .downcast_mut::<T>()
            .expect("slots are keyed by their own type");
        f(value)
    }

    /// Remembers `window` as the one this client last looked at (`how`: "screenshot" or
    /// "snapshot").
    pub(crate) fn observe_window(&self, window: WindowId, how: &'static str) {
        self.sync_desktop();
        *self.observed.lock().unwrap_or_else(|e| e.into_inner()) = Some((window, how));
    }

    /// The window this client last looked at, when it looked at one.
    pub(crate) fn observed(&self) -> Option<(WindowId, &'static str)> {
        self.sync_desktop();
        *self.observed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes `target` where this client's keys go when no window is named: a screenshot
    /// taken, a window focused, restored, launched or whose tree was read.
    pub(crate) fn aim_keys(&self, target: KeyTarget) {
        self.sync_desktop();
        *self.keys_to.lock().unwrap_or_else(|e| e.into_inner()) = Some(target);
    }

    /// Where this client's keys go when no window is named, when it looked at anything yet.
    pub(crate) fn keys_aim(&self) -> Option<KeyTarget> {
        self.sync_desktop();
        *self.keys_to.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// This client's screenshots.
    pub(crate) fn shots_now(&self) -> MutexGuard<'_, Registry> {
        self.sync_desktop();
        self.shots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// This client's snapshots.
    pub(crate) fn snapshots_now(&self) -> MutexGuard<'_, Snapshots> {
        self.sync_desktop();
        self.snapshots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The newest signature of every target this client captured.
    pub(crate) fn references_now(&self) -> MutexGuard<'_, HashMap<RefKey, Reference>> {
        self.sync_desktop();
        self.references.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets everything this client was issued on an earlier desktop, once the engine's
    /// desktop was replaced: those screenshot ids, element refs and windows are gone.
    fn sync_desktop(&self) {
        let now = self.engine.desktop_generation();
        if self.desktop_seen.swap(now, Ordering::AcqRel) == now {
            return;
        }
        *self.shots.lock().unwrap_or_else(|e| e.into_inner()) = Registry::default();
        *self.snapshots.lock().unwrap_or_else(|e| e.into_inner()) = Snapshots::default();
        self.references
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        *self.observed.lock().unwrap_or_else(|e| e.into_inner()) = None;
        *self.keys_to.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.slots.lock().unwrap_or_else(|e| e.into_inner()).clear();
        tracing::info!(
            session = self.id,
            "the desktop was replaced: this session's screenshots, refs and picks are forgotten"
        );
    }

    /// Whether another session of this engine was issued `id` (of `kind`).
    pub(crate) fn foreign(&self, kind: IdKind, id: u64) -> bool {
        self.engine
            .ids
            .owner(kind, id)
            .is_some_and(|s| s != self.id)
    }
}

impl Drop for Session {
    /// Ends what this client started: its shell sessions and what they started.
    fn drop(&mut self) {
        self.shells.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;

    use super::*;

    #[test]
    fn slots_keep_one_value_per_type() {
        let s = Session::standalone(FakeDesktop::new(10, 10).desktop(), EngineConfig::default());
        s.with_slot::<Vec<u32>, _>(|v| v.push(3));
        s.with_slot::<String, _>(|t| t.push('x'));
        assert_eq!(s.with_slot::<Vec<u32>, _>(|v| v.clone()), vec![3]);
        assert_eq!(s.with_slot::<String, _>(|t| t.clone()), "x");
    }

    #[test]
    fn ids_are_unique_in_the_process_and_know_their_owner() {
        let engine = Arc::new(Engine::new(
            FakeDesktop::new(10, 10).desktop(),
            EngineConfig::default(),
        ));
        let (a, b) = (Session::new(engine.clone()), Session::new(engine.clone()));
        let ia = engine.ids.issue(IdKind::Screenshot, a.id());
        let ib = engine.ids.issue(IdKind::Screenshot, b.id());
        assert_ne!(ia, ib);
        assert!(b.foreign(IdKind::Screenshot, ia));
        assert!(!a.foreign(IdKind::Screenshot, ia));
        assert!(!a.foreign(IdKind::Snapshot, ia), "kinds are counted apart");
    }
}
