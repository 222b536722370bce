//! Where password fields show, for captures to paint over (`Accessibility::password_fields`).
//!
//! A capture waits for this, so it never walks a tree: each application with a window on
//! screen is asked once, with AT-SPI's `Collection.GetMatches` on its root (role
//! `PASSWORD_TEXT`, state `SHOWING`; the toolkit searches its own tree in-process, ~0.4 ms for
//! a GTK 3 dialog), and the extents of what matched are read concurrently. The answer is kept
//! per application with its event count ([`Changes`](crate::a11y_changes::Changes)) and its
//! windows' frames: while the application has sent no event and its windows have not moved,
//! the next capture reuses it without asking (a keystroke, a focus change, a page switch are all
//! events). An application without `Collection` (Qt, GTK 4) is answered from its windows' last
//! tree reads and the object that last took its focus, each checked for role and showing state.
//!
//! Deadlines: everything is raced against the capture's deadline. An application that has not
//! answered by then keeps its last answer (used as it was) and is not asked again for
//! [`SLOW_PAUSE`]; one with no earlier answer is reported unanswered. A window without
//! `_NET_WM_PID` cannot be tied to its application and is skipped; a pid not on the
//! accessibility bus (xterm) is looked for again after [`ABSENT_RECHECK`].

use std::collections::HashSet;

use deskpilot_backend::{PasswordField, PasswordFields};
use deskpilot_types::WindowId;

use super::*;

/// How long an application that did not answer in time is answered from its last answer.
const SLOW_PAUSE: Duration = Duration::from_secs(5);
/// How long a pid found not on the accessibility bus is not looked for again.
const ABSENT_RECHECK: Duration = Duration::from_secs(2);
/// The root object of every application on the bus.
const APP_ROOT: &str = "/org/a11y/atspi/accessible/root";

/// What the password-field lookups remember.
#[derive(Debug, Default)]
pub(super) struct Known {
    /// Application bus name → its last answer.
    answers: Mutex<HashMap<String, Answer>>,
    /// Pid → when it was last found not on the bus.
    absent: Mutex<HashMap<u32, Instant>>,
    /// Applications whose root has no `Collection` interface.
    no_collection: Mutex<HashSet<String>>,
}

impl Known {
    /// Drops everything learnt (the bus connection was made again).
    pub(super) fn forget(&self) {
        fn clear<T: Default>(m: &Mutex<T>) {
            *m.lock().unwrap_or_else(|e| e.into_inner()) = T::default();
        }
        clear(&self.answers);
        clear(&self.absent);
        clear(&self.no_collection);
    }
}

/// One application's password fields, and what they depend on.
#[derive(Debug, Clone)]
struct Answer {
    /// The application's event count before it was asked.
    count: u64,
    /// Its windows on screen then.
    frames: Vec<(WindowId, Rect)>,
    /// Its password fields, placed on the screen.
    fields: Vec<Rect>,
    /// It did not answer in time: not asked again before this.
    slow_until: Option<Instant>,
}

/// Which window of an application a field belongs to: the one whose frame holds its centre,
/// else the one it overlaps most; `None` when it lies outside all of them (a window not on
/// screen).
fn owner(field: Rect, frames: &[(WindowId, Rect)]) -> Option<WindowId> {
    let centre = field.center();
    if let Some((id, _)) = frames.iter().find(|(_, f)| f.contains(centre)) {
        return Some(*id);
    }
    frames
        .iter()
        .filter_map(|(id, f)| Some((*id, f.intersect(&field)?.area())))
        .max_by_key(|(_, area)| *area)
        .map(|(id, _)| id)
}

/// The one placement all of `app`'s windows share, if they share one (an application's
/// toolkit places all its windows alike; a scaled app's windows differ only with their frames).
fn shared(placements: &HashMap<String, Placement>) -> Placement {
    let mut all = placements.values();
    match all.next() {
        Some(first) if all.all(|p| p == first) => *first,
        _ => Placement::default(),
    }
}

/// What asking one application gave.
enum Asked {
    Fields(Vec<Rect>),
    /// Its root has no `Collection` interface.
    NoCollection,
}

/// `Collection.GetMatches`'s rule, `(aiia{ss}iaiiasib)`, as at-spi2-core reads it: states and
/// roles as bit sets (two and four 32-bit words), then attributes, interfaces and inversion,
/// each with its match type. (`atspi::ObjectMatchRule` sends roles as a list of role numbers,
/// which the toolkit bridge reads as a bit set: role 40 became roles 3 and 5, nothing matched.)
type MatchRule = (
    Vec<i32>,
    i32,
    HashMap<String, String>,
    i32,
    Vec<i32>,
    i32,
    Vec<String>,
    i32,
    bool,
);

/// `ATSPI_Collection_MATCH_ALL`: every criterion holds (an empty set always does).
const MATCH_ALL: i32 = 1;
/// `ATSPI_Collection_MATCH_ANY`.
const MATCH_ANY: i32 = 2;
/// `ATSPI_Collection_SORT_ORDER_CANONICAL`.
const SORT_CANONICAL: u32 = 1;

/// The rule "a showing password field".
fn password_rule() -> MatchRule {
    let states = StateSet::new(State::Showing).bits();
    let mut roles = vec![0i32; 4];
    let role = atspi::Role::PasswordText as usize;
    roles[role / 32] |= 1 << (role % 32);
    (
        vec![states as u32 as i32, (states >> 32) as u32 as i32],
        MATCH_ALL,
        HashMap::new(),
        MATCH_ALL,
        roles,
        MATCH_ANY,
        Vec::new(),
        MATCH_ALL,
        false,
    )
}

/// `app`'s showing password fields through `Collection.GetMatches` on its root, placed.
async fn by_collection(
    conn: &zbus::Connection,
    app: &str,
    placement: Placement,
) -> Result<Asked, Error> {
    let root = zbus::Proxy::new(conn, app.to_string(), APP_ROOT, "org.a11y.atspi.Collection")
        .await
        .map_err(dbus_err("Collection proxy"))?;
    let reply = root
        .call_method("GetMatches", &(password_rule(), SORT_CANONICAL, 0i32, true))
        .await;
    let matches: Vec<ObjectRefOwned> = match reply {
        Ok(m) => m
            .body()
            .deserialize()
            .map_err(|e| Error::os("Collection.GetMatches reply", e))?,
        Err(e) => {
            return match dbus_err("Collection.GetMatches")(e) {
                Error::Unsupported { .. } => Ok(Asked::NoCollection),
                e => Err(e),
            };
        }
    };
    let bounds = join_all(matches.iter().map(|o| screen_bounds(conn, o))).await;
    tracing::debug!(
        app,
        matches = matches.len(),
        ?bounds,
        "password fields: Collection matches"
    );
    Ok(Asked::Fields(
        bounds
            .into_iter()
            .flatten()
            .map(|b| placement.on_screen(b))
            .collect(),
    ))
}

/// `o`'s screen bounds, if it is a password field that shows.
async fn showing_password(conn: &zbus::Connection, o: &ObjectRefOwned) -> Option<Rect> {
    let p = accessible(conn, o).await.ok()?;
    let (role, states) = futures_lite::future::zip(p.get_role(), p.get_state()).await;
    let showing = states.ok()?.contains(State::Showing);
    if role.ok()? != atspi::Role::PasswordText || !showing {
        return None;
    }
    screen_bounds(conn, o).await
}

impl X11Desktop {
    /// `app`'s password fields without `Collection`: the password nodes of its windows' last
    /// tree reads and the object that last took its focus, each checked now.
    async fn without_collection(&self, conn: &zbus::Connection, app: &str) -> Vec<Rect> {
        let placements = self.a11y.placements(app);
        let mut candidates: Vec<(ObjectRefOwned, Placement)> = self
            .a11y
            .trees
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|t| t.app == app)
            .flat_map(|t| {
                let placement = t
                    .nodes
                    .first()
                    .and_then(|f| placements.get(f.object.path_as_str()))
                    .copied()
                    .unwrap_or_default();
                t.nodes
                    .iter()
                    .filter(|n| n.role == atspi::Role::PasswordText)
                    .map(move |n| (n.object.clone(), placement))
            })
            .collect();
        if let Some(path) = self.a11y.changes.focused(app)
            && let (Ok(name), Ok(path)) = (
                zbus::names::UniqueName::try_from(app.to_string()),
                zbus::zvariant::ObjectPath::try_from(path),
            )
        {
            let focused = ObjectRefOwned::new(atspi::ObjectRef::Owned { name, path });
            if !candidates.iter().any(|(o, _)| *o == focused) {
                candidates.push((focused, shared(&placements)));
            }
        }
        join_all(candidates.iter().map(|(o, placement)| async move {
            showing_password(conn, o)
                .await
                .map(|b| placement.on_screen(b))
        }))
        .await
        .into_iter()
        .flatten()
        .collect()
    }

    /// `app`'s password fields now.
    async fn ask(&self, conn: &zbus::Connection, app: &str) -> Result<Vec<Rect>, Error> {
        let known = &self.a11y.passwords;
        let collection = !known
            .no_collection
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(app);
        if collection {
            let placement = shared(&self.a11y.placements(app));
            match by_collection(conn, app, placement).await? {
                Asked::Fields(fields) => return Ok(fields),
                Asked::NoCollection => {
                    tracing::debug!(app, "no Collection interface: password fields from trees");
                    known
                        .no_collection
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(app.to_string());
                }
            }
        }
        Ok(self.without_collection(conn, app).await)
    }

    /// Application bus name → its windows among `windows`, by pid; the registry is asked again
    /// only for a pid not seen on the bus before (or not for [`ABSENT_RECHECK`]).
    async fn apps_of(
        &self,
        conn: &zbus::Connection,
        windows: &[WindowInfo],
    ) -> HashMap<String, Vec<(WindowId, Rect)>> {
        let known = &self.a11y.passwords;
        let pids_of =
            |pids: &HashMap<String, u32>| -> HashSet<u32> { pids.values().copied().collect() };
        let on_bus = pids_of(&self.a11y.pids.lock().unwrap_or_else(|e| e.into_inner()));
        let now = Instant::now();
        let unknown: Vec<u32> = {
            let absent = known.absent.lock().unwrap_or_else(|e| e.into_inner());
            windows
                .iter()
                .filter_map(|w| w.pid)
                .filter(|pid| !on_bus.contains(pid))
                .filter(|pid| absent.get(pid).is_none_or(|at| now >= *at + ABSENT_RECHECK))
                .collect()
        };
        if !unknown.is_empty() {
            match registry_names_and_pids(conn).await {
                Ok(found) => {
                    let mut pids = self.a11y.pids.lock().unwrap_or_else(|e| e.into_inner());
                    pids.extend(found);
                }
                Err(e) => {
                    tracing::debug!(error = %e, "password fields: the registry did not answer")
                }
            }
            let on_bus = pids_of(&self.a11y.pids.lock().unwrap_or_else(|e| e.into_inner()));
            let mut absent = known.absent.lock().unwrap_or_else(|e| e.into_inner());
            if absent.len() > 1024 {
                absent.clear();
            }
            for pid in unknown.into_iter().filter(|p| !on_bus.contains(p)) {
                absent.insert(pid, now);
            }
        }
        let pids = self.a11y.pids.lock().unwrap_or_else(|e| e.into_inner());
        let mut apps: HashMap<String, Vec<(WindowId, Rect)>> = HashMap::new();
        for (app, pid) in pids.iter() {
            let frames: Vec<(WindowId, Rect)> = windows
                .iter()
                .filter(|w| w.pid == Some(*pid))
                .map(|w| (w.id, w.frame))
                .collect();
            if !frames.is_empty() {
                apps.insert(app.clone(), frames);
            }
        }
        apps
    }

    /// See [`Accessibility::password_fields`]: the module doc says how.
    pub(super) fn find_password_fields(
        &self,
        windows: &[WindowInfo],
        deadline: Instant,
    ) -> Result<PasswordFields, Error> {
        let started = Instant::now();
        let conn = &self.a11y.connection()?;
        // The backstop: every step below is raced against `deadline` itself.
        let limit = deadline.saturating_duration_since(Instant::now()) + Duration::from_millis(50);
        let found = run(limit, "looking for password fields", async {
            let settled = before(deadline, self.a11y.changes.settled(conn))
                .await
                .unwrap_or(false);
            let Some(apps) = before(deadline, self.apps_of(conn, windows)).await else {
                return Ok(PasswordFields {
                    fields: Vec::new(),
                    unanswered: windows.iter().map(|w| w.id).collect(),
                });
            };
            let known = &self.a11y.passwords;
            let answers = known
                .answers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            let asked = join_all(apps.iter().map(|(app, frames)| {
                let last = answers.get(app).cloned();
                async move {
                    let now = Instant::now();
                    let count = self.a11y.changes.count(app);
                    let reuse = last.as_ref().filter(|a| {
                        (settled && a.count == count && a.frames == *frames)
                            || a.slow_until.is_some_and(|until| now < until)
                    });
                    if let Some(a) = reuse {
                        return (app, frames, Some(a.clone()), false);
                    }
                    match before(deadline, self.ask(conn, app)).await {
                        Some(Ok(fields)) => (
                            app,
                            frames,
                            Some(Answer {
                                count,
                                frames: frames.clone(),
                                fields,
                                slow_until: None,
                            }),
                            true,
                        ),
                        Some(Err(e)) => {
                            tracing::debug!(app, error = %e, "password fields: not answered");
                            (app, frames, None, false)
                        }
                        None => {
                            tracing::debug!(app, "password fields: no answer in time");
                            let stale = last.map(|a| Answer {
                                slow_until: Some(now + SLOW_PAUSE),
                                ..a
                            });
                            (app, frames, stale, true)
                        }
                    }
                }
            }))
            .await;
            let mut out = PasswordFields::default();
            let mut answers = known.answers.lock().unwrap_or_else(|e| e.into_inner());
            if answers.len() > 256 {
                answers.clear();
            }
            for (app, frames, answer, fresh) in asked {
                let Some(answer) = answer else {
                    out.unanswered.extend(frames.iter().map(|(id, _)| *id));
                    continue;
                };
                out.fields.extend(answer.fields.iter().filter_map(|b| {
                    Some(PasswordField {
                        window: owner(*b, frames)?,
                        bounds: *b,
                    })
                }));
                if fresh {
                    answers.insert(app.clone(), answer);
                }
            }
            Ok(out)
        })?;
        tracing::debug!(
            fields = found.fields.len(),
            unanswered = found.unanswered.len(),
            ms = started.elapsed().as_secs_f64() * 1e3,
            "password fields looked for"
        );
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_belongs_to_the_window_that_holds_it() {
        let frames = [
            (WindowId(1), Rect::new(0, 0, 400, 300)),
            (WindowId(2), Rect::new(500, 0, 400, 300)),
        ];
        assert_eq!(
            owner(Rect::new(600, 100, 200, 30), &frames),
            Some(WindowId(2))
        );
        // Its centre outside every frame: the one it overlaps most.
        assert_eq!(
            owner(Rect::new(350, 100, 100, 30), &frames),
            Some(WindowId(1))
        );
        assert_eq!(owner(Rect::new(0, 900, 100, 30), &frames), None);
    }

    #[test]
    fn a_placement_is_shared_only_when_every_window_has_it() {
        let gtk4 = Placement {
            offset: (800, 400),
            scale: None,
        };
        let mut all = HashMap::new();
        assert_eq!(shared(&all), Placement::default());
        all.insert("/a".to_string(), gtk4);
        all.insert("/b".to_string(), gtk4);
        assert_eq!(shared(&all), gtk4);
        all.insert("/c".to_string(), Placement::default());
        assert_eq!(shared(&all), Placement::default());
    }
}
