//! What the servers of one endpoint share beyond a request: resource subscriptions of both
//! revisions (`resources/subscribe` of a 2025-11-25 session, `subscriptions/listen` streams of
//! 2026-07-28) and the tasks of task-augmented calls. A stdio connection has its own hub; an
//! HTTP endpoint one for all its sessions and stateless requests, so that `tasks/get` finds a
//! task another request started and a change reaches every listener.
//!
//! Whoever changes something a client may watch calls [`Hub::resource_updated`] or one of the
//! list-changed notices; the hub sends to whoever subscribed, drops subscribers whose client
//! went away, and never waits for a slow client in the caller.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use deskpilot_engine::SessionId;
use rmcp::RoleServer;
use rmcp::model::{ResourceUpdatedNotificationParam, ServerNotification};
use rmcp::service::{Peer, SubscriptionContext, SubscriptionSink};
use rmcp::task_manager::TaskManager;

/// Subscriptions and tasks of one endpoint.
#[derive(Default)]
pub(crate) struct Hub {
    /// Tasks of task-augmented `tools/call`s.
    pub(crate) tasks: TaskManager,
    /// `resources/subscribe` of 2025-11-25 sessions: who, through which peer, to what.
    legacy: Mutex<Vec<Legacy>>,
    /// The peers of the 2025-11-25 sessions that initialized: that revision has no
    /// subscription for list changes, so every one of them hears each.
    joined: Mutex<Vec<(SessionId, Peer<RoleServer>)>>,
    /// Open `subscriptions/listen` streams.
    listeners: Mutex<Vec<(u64, SubscriptionSink)>>,
    next_listener: AtomicU64,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("tasks", &self.tasks.running_task_count())
            .field("subscriptions", &lock(&self.legacy).len())
            .field("listeners", &lock(&self.listeners).len())
            .finish()
    }
}

struct Legacy {
    session: SessionId,
    peer: Peer<RoleServer>,
    uri: String,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Hub {
    /// Session `session` wants `notifications/resources/updated` for `uri` through `peer`.
    pub(crate) fn subscribe(&self, session: SessionId, peer: Peer<RoleServer>, uri: String) {
        let mut legacy = lock(&self.legacy);
        if !legacy.iter().any(|l| l.session == session && l.uri == uri) {
            legacy.push(Legacy { session, peer, uri });
        }
    }

    /// Session `session` no longer wants updates of `uri` (nothing happens when it never did).
    pub(crate) fn unsubscribe(&self, session: SessionId, uri: &str) {
        lock(&self.legacy).retain(|l| !(l.session == session && l.uri == uri));
    }

    /// Whether any client watches `uri` now, by either revision: a watcher that polls for a
    /// change may sleep while this is false.
    pub(crate) fn watched(&self, uri: &str) -> bool {
        lock(&self.legacy).iter().any(|l| l.uri == uri)
            || lock(&self.listeners).iter().any(|(_, sink)| {
                sink.accepted()
                    .resource_subscriptions
                    .as_ref()
                    .is_some_and(|uris| uris.iter().any(|u| u == uri))
            })
    }

    /// Serves one `subscriptions/listen` stream until its client cancels it.
    pub(crate) async fn listen(&self, context: SubscriptionContext) {
        let key = self.next_listener.fetch_add(1, Ordering::Relaxed);
        lock(&self.listeners).push((key, context.sink().clone()));
        context.cancelled().await;
        lock(&self.listeners).retain(|(k, _)| *k != key);
    }

    /// `uri` changed: its subscribers hear `notifications/resources/updated`.
    pub(crate) fn resource_updated(&self, uri: &str) {
        let peers: Vec<Peer<RoleServer>> = {
            let mut legacy = lock(&self.legacy);
            legacy.retain(|l| !l.peer.is_transport_closed());
            legacy
                .iter()
                .filter(|l| l.uri == uri)
                .map(|l| l.peer.clone())
                .collect()
        };
        self.send(
            peers,
            ServerNotification::ResourceUpdatedNotification(
                rmcp::model::ResourceUpdatedNotification::new(
                    ResourceUpdatedNotificationParam::new(uri),
                ),
            ),
        );
    }

    /// Session `session` (2025-11-25) initialized: it hears every list-changed notice.
    pub(crate) fn join(&self, session: SessionId, peer: Peer<RoleServer>) {
        let mut joined = lock(&self.joined);
        joined.retain(|(_, p)| !p.is_transport_closed());
        if !joined.iter().any(|(s, _)| *s == session) {
            joined.push((session, peer));
        }
    }

    /// The peers of the sessions that joined and are still connected.
    fn joined(&self) -> Vec<Peer<RoleServer>> {
        let mut joined = lock(&self.joined);
        joined.retain(|(_, p)| !p.is_transport_closed());
        joined.iter().map(|(_, p)| p.clone()).collect()
    }

    /// The list of resources changed (a skill saved, a recording made).
    pub(crate) fn resources_list_changed(&self) {
        self.send(
            self.joined(),
            ServerNotification::ResourceListChangedNotification(Default::default()),
        );
    }

    /// The list of prompts changed (a skill saved or removed).
    pub(crate) fn prompts_list_changed(&self) {
        self.send(
            self.joined(),
            ServerNotification::PromptListChangedNotification(Default::default()),
        );
    }

    /// Sends `notification` to the 2025-11-25 `peers` and to every listen stream that accepted
    /// it, on the runtime, without waiting.
    fn send(&self, peers: Vec<Peer<RoleServer>>, notification: ServerNotification) {
        let sinks: Vec<SubscriptionSink> = lock(&self.listeners)
            .iter()
            .map(|(_, s)| s.clone())
            .collect();
        if peers.is_empty() && sinks.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::debug!("a change notice outside the runtime is dropped");
            return;
        };
        runtime.spawn(async move {
            for peer in peers {
                // A client that went away is dropped from the list on the next notice.
                let _ = peer.send_notification(notification.clone()).await;
            }
            for sink in sinks {
                // A stream that did not ask for this kind of notice refuses it: not an error.
                let _ = sink.send(notification.clone()).await;
            }
        });
    }
}
