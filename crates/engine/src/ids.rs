//! Screenshot and snapshot ids and their owners: process-wide counters (one [`Ids`] in the
//! shared engine) that remember which session was issued each of the last
//! [`OWNERS_KEPT`] ids of a kind, so another client's id is told apart from a made-up one.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

/// Identifies a session within the process (1, 2, …).
pub type SessionId = u64;

/// What kind of id an [`Ids`] ledger hands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdKind {
    Screenshot,
    Snapshot,
}

/// How many issued ids the engine remembers the owner of, per kind.
const OWNERS_KEPT: usize = 4096;

/// Process-wide counters for screenshot and snapshot ids, and who got the recent ones.
#[derive(Debug, Default)]
pub(crate) struct Ids {
    state: Mutex<IdState>,
}

#[derive(Debug, Default)]
struct IdState {
    sessions: SessionId,
    screenshots: u64,
    snapshots: u64,
    owners: VecDeque<(IdKind, u64, SessionId)>,
}

impl Ids {
    fn lock(&self) -> MutexGuard<'_, IdState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn session(&self) -> SessionId {
        let mut s = self.lock();
        s.sessions += 1;
        s.sessions
    }

    /// A new id of `kind` for `session`.
    pub(crate) fn issue(&self, kind: IdKind, session: SessionId) -> u64 {
        let mut s = self.lock();
        let id = match kind {
            IdKind::Screenshot => {
                s.screenshots += 1;
                s.screenshots
            }
            IdKind::Snapshot => {
                s.snapshots += 1;
                s.snapshots
            }
        };
        if s.owners.len() == OWNERS_KEPT * 2 {
            s.owners.pop_front();
        }
        s.owners.push_back((kind, id, session));
        id
    }

    /// Whether `id` of `kind` was ever issued.
    pub(crate) fn issued(&self, kind: IdKind, id: u64) -> bool {
        let s = self.lock();
        let last = match kind {
            IdKind::Screenshot => s.screenshots,
            IdKind::Snapshot => s.snapshots,
        };
        id >= 1 && id <= last
    }

    /// The session that was issued `id`, when it is recent enough to be remembered.
    pub(crate) fn owner(&self, kind: IdKind, id: u64) -> Option<SessionId> {
        self.lock()
            .owners
            .iter()
            .rev()
            .find(|(k, i, _)| *k == kind && *i == id)
            .map(|(_, _, s)| *s)
    }
}
