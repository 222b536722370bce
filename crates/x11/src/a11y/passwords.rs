//! Where password fields show, for captures to paint over (`Accessibility::password_fields`).
//!
//! A capture waits for this, so it never walks a tree: each application with a window on
//! screen is asked once, with AT-SPI's `Collection.GetMatches` on its root (role
//! `PASSWORD_TEXT`, state `SHOWING`; the toolkit searches its own tree in-process, ~0.4 ms for
//! a GTK 3 dialog), and the extents of what matched are read concurrently. The answer is kept
//! per application with its event count ([`Changes`](crate::a11y_changes::Changes)) and its
//! windows' frames: while the application has sent no event, the next capture reuses it without
//! asking, each field moved with its window (a keystroke, a focus change, a page switch are all
//! events; a window that changed size is asked again). An application without `Collection` (Qt, GTK 4) is answered from its windows' last
//! tree reads and the object that last took its focus, each checked for role and showing state.
//!
//! Deadlines: everything is raced against the capture's deadline. An application that has not
//! answered by then keeps its last answer (used as it was), or is reported unanswered when it
//! never answered, and is not asked again for [`SLOW_PAUSE`]: a hung application costs one
//! capture the deadline, not every capture. A window without
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
    /// Its password fields, each with its window, placed on the screen as `frames` were.
    fields: Vec<PasswordField>,
    /// It did not answer in time: not asked again before this.
    slow_until: Option<Instant>,
    /// `fields` is an answer; `false` for an application that has never answered in time
    /// (its windows are reported unanswered while it is not asked again).
    answered: bool,
}

impl Answer {
    /// The fields where they are with the application's windows at `now`: a field moves with
    /// its window; a window gone takes its fields with it. `None` when a window changed size
    /// or appeared (its content may have been laid out anew).
    fn moved_to(&self, now: &[(WindowId, Rect)]) -> Option<Vec<PasswordField>> {
        let same_windows = now.len() == self.frames.len()
            && now.iter().all(|(id, f)| {
                self.frames
                    .iter()
                    .any(|(was, old)| was == id && (old.width, old.height) == (f.width, f.height))
            });
        same_windows.then(|| self.shifted(now))
    }

    /// The fields moved with their windows to `now` (fields of windows not in `now` dropped).
    fn shifted(&self, now: &[(WindowId, Rect)]) -> Vec<PasswordField> {
        self.fields
            .iter()
            .filter_map(|f| {
                let (_, old) = self.frames.iter().find(|(id, _)| *id == f.window)?;
                let (_, new) = now.iter().find(|(id, _)| *id == f.window)?;
                let b = f.bounds;
                Some(PasswordField {
                    window: f.window,
                    bounds: Rect::new(
                        b.x + (new.x - old.x),
                        b.y + (new.y - old.y),
                        b.width,
                        b.height,
                    ),
                })
            })
            .collect()
    }
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
                    // Nothing happened in the application since it answered: its fields are
                    // where they were, moved with their windows.
                    let unchanged = last
                        .as_ref()
                        .filter(|a| a.answered && settled && a.count == count)
                        .and_then(|a| Some((a, a.moved_to(frames)?)));
                    if let Some((a, fields)) = unchanged {
                        let a = Answer {
                            frames: frames.clone(),
                            fields,
                            ..a.clone()
                        };
                        return (app, frames, Some(a), true);
                    }
                    if let Some(a) = last
                        .as_ref()
                        .filter(|a| a.slow_until.is_some_and(|until| now < until))
                    {
                        // Not asked again yet: its last answer, moved with its windows.
                        let fields = a.shifted(frames);
                        return (
                            app,
                            frames,
                            Some(Answer {
                                fields,
                                ..a.clone()
                            }),
                            false,
                        );
                    }
                    match before(deadline, self.ask(conn, app)).await {
                        Some(Ok(found)) => {
                            let fields = found
                                .into_iter()
                                .filter_map(|b| {
                                    Some(PasswordField {
                                        window: owner(b, frames)?,
                                        bounds: b,
                                    })
                                })
                                .collect();
                            let a = Answer {
                                count,
                                frames: frames.clone(),
                                fields,
                                slow_until: None,
                                answered: true,
                            };
                            (app, frames, Some(a), true)
                        }
                        Some(Err(e)) => {
                            tracing::debug!(app, error = %e, "password fields: not answered");
                            (app, frames, None, false)
                        }
                        None => {
                            tracing::debug!(app, "password fields: no answer in time");
                            // Its last answer stands (moved with its windows), or none; either
                            // way it is not asked again for a while, so a hung application
                            // costs one capture the deadline, not every capture.
                            let stale = match last {
                                Some(a) => Answer {
                                    fields: a.shifted(frames),
                                    frames: frames.clone(),
                                    ..a
                                },
                                None => Answer {
                                    count,
                                    frames: frames.clone(),
                                    fields: Vec::new(),
                                    slow_until: None,
                                    answered: false,
                                },
                            };
                            let stale = Answer {
                                slow_until: Some(now + SLOW_PAUSE),
                                ..stale
                            };
                            (app, frames, Some(stale), true)
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
            for (app, frames, answer, keep) in asked {
                match &answer {
                    Some(a) if a.answered => out.fields.extend(a.fields.iter().copied()),
                    _ => out.unanswered.extend(frames.iter().map(|(id, _)| *id)),
                }
                if let Some(a) = answer.filter(|_| keep) {
                    answers.insert(app.clone(), a);
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

    /// A field moves with its window while the application says nothing; a window that changed
    /// size (or appeared) is asked again; a window gone takes its field along.
    #[test]
    fn an_answer_follows_its_windows_until_one_changes_size() {
        let field = |window, x, y| PasswordField {
            window: WindowId(window),
            bounds: Rect::new(x, y, 168, 34),
        };
        let answer = Answer {
            count: 7,
            frames: vec![
                (WindowId(1), Rect::new(814, 445, 292, 189)),
                (WindowId(2), Rect::new(0, 0, 400, 300)),
            ],
            fields: vec![field(1, 923, 542), field(2, 10, 10)],
            slow_until: None,
            answered: true,
        };
        let moved = [
            (WindowId(1), Rect::new(60, 80, 292, 189)),
            (WindowId(2), Rect::new(0, 0, 400, 300)),
        ];
        assert_eq!(
            answer.moved_to(&moved),
            Some(vec![field(1, 169, 177), field(2, 10, 10)])
        );
        let resized = [
            (WindowId(1), Rect::new(814, 445, 420, 260)),
            (WindowId(2), Rect::new(0, 0, 400, 300)),
        ];
        assert_eq!(answer.moved_to(&resized), None);
        assert_eq!(answer.moved_to(&moved[..1]), None, "a window went away");
        assert_eq!(answer.shifted(&moved[..1]), vec![field(1, 169, 177)]);
    }

    /// Regression: `atspi::ObjectMatchRule` sent role 40 as a list `[40]`, which at-spi2-atk
    /// reads as a bit set (roles 3 and 5): GetMatches found no password field in a zenity
    /// password dialog.
    #[test]
    fn the_rule_asks_for_showing_password_fields_as_the_bridge_reads_it() {
        let (states, states_mt, attrs, attrs_mt, roles, roles_mt, ifaces, ifaces_mt, invert) =
            password_rule();
        // ATSPI_ROLE_PASSWORD_TEXT = 40: bit 8 of the second word.
        assert_eq!(roles, vec![0, 1 << 8, 0, 0]);
        // ATSPI_STATE_SHOWING = 25.
        assert_eq!(states, vec![1 << 25, 0]);
        assert_eq!((states_mt, roles_mt), (MATCH_ALL, MATCH_ANY));
        // Empty criteria must be MATCH_ALL: the bridge fails every object on an invalid type.
        assert!(attrs.is_empty() && ifaces.is_empty() && !invert);
        assert_eq!((attrs_mt, ifaces_mt), (MATCH_ALL, MATCH_ALL));
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
