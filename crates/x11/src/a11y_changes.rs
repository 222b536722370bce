//! Which applications changed since their tree was last read, from AT-SPI events.
//!
//! deskpilot registers with the AT-SPI registry as an event listener (as a screen reader does)
//! and counts every event signal per sending application on a drain thread. A tree read keeps
//! the window's nodes (cache read, probes and walk) together with the count the application had
//! *before* the read; the next read reuses them only if the count has not moved — any event at all from
//! the application (a child added, a state or name changed, text typed, focus moved) means it
//! is read again. Bounds, values and actions are never reused: they are read fresh every time.
//!
//! Before counts are compared, [`Changes::settled`] sends a barrier signal to ourselves and
//! waits for the drain thread to see it, so an event an app sent just before answering our
//! last action is always counted.
//!
//! The same thread remembers, per application, the object that last gained focus or became
//! its container's active descendant ([`Changes::focused`]): a huge container (a spreadsheet)
//! is read only where it shows, and its focused cell must be in the tree even when it is
//! scrolled out of view.
//!
//! If the drain thread stops, reuse stops with it ([`Changes::live`]), and if it ever fell
//! behind, zbus would hold back replies on the shared connection, so the thread does nothing
//! but count.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use atspi::zbus;
use futures_lite::StreamExt as _;

/// Event kinds registered with the registry: everything an application says about its tree.
const EVENTS: &[&str] = &["object:", "window:", "focus:"];

/// Per-application event counters, fed by a drain thread.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    counts: Mutex<HashMap<String, u64>>,
    /// Application → the object path that last gained focus or became an active descendant.
    focus: Mutex<HashMap<String, String>>,
    live: AtomicBool,
    /// Barrier marks sent to ourselves, and the last one the drain thread has seen.
    sent: AtomicU64,
    seen: AtomicU64,
}

/// Where the barrier signal travels (to our own connection only).
const MARK_INTERFACE: &str = "org.deskpilot.Barrier";
/// How long a barrier may take before the counts are not trusted for this read.
const MARK_WAIT: Duration = Duration::from_millis(250);

impl Changes {
    /// Registers for events on `conn` and starts counting them. Failures leave `live` false:
    /// nothing is then ever reused.
    pub(crate) async fn start(
        self: &Arc<Self>,
        conn: &zbus::Connection,
    ) -> Result<(), zbus::Error> {
        let rule = zbus::MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .build();
        // The stream exists (and its match rule is on the bus) before anything is registered,
        // so no event sent after a registration can be missed.
        let mut stream = zbus::MessageStream::for_match_rule(rule, conn, Some(4096)).await?;
        let registry = atspi::proxy::registry::RegistryProxy::new(conn).await?;
        for event in EVENTS {
            registry.register_event(event).await?;
        }
        let changes = self.clone();
        changes.live.store(true, Ordering::SeqCst);
        std::thread::Builder::new()
            .name("deskpilot-a11y-events".into())
            .spawn(move || {
                async_io::block_on(async {
                    while let Some(message) = stream.next().await {
                        let Ok(message) = message else { continue };
                        let header = message.header();
                        if header.interface().map(|i| i.as_str()) == Some(MARK_INTERFACE) {
                            if let Ok(mark) = message.body().deserialize::<u64>() {
                                changes.seen.fetch_max(mark, Ordering::SeqCst);
                            }
                            continue;
                        }
                        let Some(sender) = header.sender() else {
                            continue;
                        };
                        // An application leaving the bus says nothing itself: the bus does.
                        let app = if sender.as_str() == "org.freedesktop.DBus" {
                            if header.member().map(|m| m.as_str()) != Some("NameOwnerChanged") {
                                continue;
                            }
                            match message.body().deserialize::<(String, String, String)>() {
                                Ok((name, _, _)) => name,
                                Err(_) => continue,
                            }
                        } else {
                            sender.to_string()
                        };
                        if let Some(path) = focus_of(&message) {
                            changes
                                .focus
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .insert(app.clone(), path);
                        }
                        *changes
                            .counts
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .entry(app)
                            .or_default() += 1;
                    }
                });
                changes.live.store(false, Ordering::SeqCst);
                tracing::debug!("accessibility event stream ended");
            })
            .map_err(|e| zbus::Error::Failure(format!("event thread: {e}")))?;
        Ok(())
    }

    /// Whether events are being counted.
    pub(crate) fn live(&self) -> bool {
        self.live.load(Ordering::SeqCst)
    }

    /// Whether the counts include every event sent to us before now, so they may be trusted
    /// for this read: a signal to ourselves travels behind every event the bus routed to us
    /// earlier (including those an app sent before answering an action of ours), and the
    /// drain thread counts in arrival order. `false` when not listening or the mark is late.
    pub(crate) async fn settled(&self, conn: &zbus::Connection) -> bool {
        if !self.live() {
            return false;
        }
        let Some(me) = conn.unique_name() else {
            return false;
        };
        let mark = self.sent.fetch_add(1, Ordering::SeqCst) + 1;
        let sent = conn
            .emit_signal(
                Some(me.to_owned()),
                "/org/deskpilot/Barrier",
                MARK_INTERFACE,
                "Mark",
                &mark,
            )
            .await;
        if sent.is_err() {
            return false;
        }
        let deadline = Instant::now() + MARK_WAIT;
        while self.seen.load(Ordering::SeqCst) < mark {
            if Instant::now() > deadline {
                tracing::debug!(mark, "barrier late: reading the tree in full");
                return false;
            }
            async_io::Timer::after(Duration::from_micros(100)).await;
        }
        true
    }

    /// The object path in `app` that last gained focus or became its container's active
    /// descendant, as far as events told.
    pub(crate) fn focused(&self, app: &str) -> Option<String> {
        self.focus
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(app)
            .cloned()
    }

    /// How many events `app` (a bus name) has sent so far.
    pub(crate) fn count(&self, app: &str) -> u64 {
        self.counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(app)
            .copied()
            .unwrap_or(0)
    }
}

/// The object an event says now has the focus: the sender of `state-changed:focused` with
/// detail1 = 1, or the `any_data` of `active-descendant-changed` (LibreOffice's cell cursor).
fn focus_of(message: &zbus::Message) -> Option<String> {
    let header = message.header();
    let member = header.member()?.as_str();
    if member != "StateChanged" && member != "ActiveDescendantChanged" {
        return None;
    }
    let body = message.body();
    let (kind, detail1, any_data) = match body.deserialize::<atspi::events::EventBodyOwned>() {
        Ok(b) => (b.kind, b.detail1, b.any_data),
        Err(_) => {
            let b = body.deserialize::<atspi::events::EventBodyQtOwned>().ok()?;
            (b.kind, b.detail1, b.any_data)
        }
    };
    focus_change(member, &kind, detail1, header.path()?.as_str(), any_data)
}

/// The focused object's path from an event's parts (pure: unit-tested on recorded events).
fn focus_change(
    member: &str,
    kind: &str,
    detail1: i32,
    path: &str,
    any_data: zbus::zvariant::OwnedValue,
) -> Option<String> {
    match member {
        "StateChanged" if kind == "focused" && detail1 == 1 => Some(path.to_string()),
        "ActiveDescendantChanged" => {
            let o = atspi::ObjectRefOwned::try_from(any_data).ok()?;
            (!o.is_null()).then(|| o.path_as_str().to_string())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zbus::zvariant::{ObjectPath, OwnedValue, Value};

    /// The cell cursor of a huge sheet is known from events, not from its children.
    #[test]
    fn focus_follows_focused_states_and_active_descendants() {
        let none = || OwnedValue::from(0u32);
        assert_eq!(
            focus_change(
                "StateChanged",
                "focused",
                1,
                "/org/a11y/atspi/accessible/9",
                none()
            ),
            Some("/org/a11y/atspi/accessible/9".to_string())
        );
        assert_eq!(
            focus_change(
                "StateChanged",
                "focused",
                0,
                "/org/a11y/atspi/accessible/9",
                none()
            ),
            None
        );
        assert_eq!(
            focus_change("StateChanged", "selected", 1, "/a", none()),
            None
        );
        let cell = Value::from((
            ":1.5",
            ObjectPath::try_from("/org/a11y/atspi/accessible/2047").expect("path"),
        ));
        assert_eq!(
            focus_change(
                "ActiveDescendantChanged",
                "",
                0,
                "/org/a11y/atspi/accessible/1950",
                OwnedValue::try_from(cell).expect("value")
            ),
            Some("/org/a11y/atspi/accessible/2047".to_string())
        );
    }
}
