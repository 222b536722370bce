//! Accessibility trees over AT-SPI (D-Bus), with the `atspi` crate.
//!
//! zbus runs its own executor threads; the blocking trait methods drive futures with
//! `async_io::block_on` and race every read against a deadline, so a stuck application costs
//! one call its timeout, never the server.
//!
//! Reading a window's tree:
//! 1. the window's application: the registry's children whose D-Bus connection belongs to the
//!    window's pid; its frame: the top-level child whose extents and title match the window
//!    (else extents, else title); an application not on the bus is told what it lacks
//!    (`joining`);
//! 2. the subtree: `Cache.GetItems` (one call for the whole application) where the toolkit has
//!    it (GTK), walking only nodes whose cached child count disagrees (transient children, or
//!    children that left); a concurrent level-by-level walk where it has not (Qt) — never one
//!    round trip per property per node in sequence. No container is asked for its children
//!    before its count is known: a huge one (a spreadsheet) is read only where it shows;
//! 3. per kept element, concurrently: extents, advertised actions, a value or text excerpt;
//! 4. bounds placed on the screen: window-relative extents (GTK 4) moved by the window's
//!    origin, logical ones (scaled apps) made physical; the placement is remembered per frame
//!    for `live` and `hits`.
//!
//! Hidden elements are left out with their subtrees: not `Showing`, except where a toolkit
//! never sets it (GTK 4 below its toplevel, GTK 2 inside an open menu; see `shown`).
//!
//! This module holds the bus connection, the shared plumbing (deadlines, error mapping,
//! handles, proxies) and the node type; each concern has a module of its own: `roles`,
//! `frame`, `joining`, `cache` and `walk` (the two read strategies), `huge` (containers too
//! big to enumerate, read where they show), `shown` (visibility per toolkit), `enrich`,
//! `placement` (where bounds go on the screen, per window), `live` (an element re-read and
//! hit-tested), `advertised` (action names, also where a toolkit's bulk answer is malformed),
//! `tree`, `actions`, `text` (U+FFFC object characters taken out of every name, value and
//! text; excerpts within the text's length), and `passwords` (where password fields show, for
//! captures to paint over, without reading a tree).

mod actions;
mod advertised;
mod cache;
mod enrich;
mod frame;
mod grid;
mod huge;
pub(crate) mod joining;
mod live;
mod passwords;
mod placement;
mod roles;
mod shown;
mod text;
mod tree;
mod walk;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use atspi::proxy::accessible::AccessibleProxy;
use atspi::proxy::action::ActionProxy;
use atspi::proxy::cache::CacheProxy;
use atspi::proxy::component::ComponentProxy;
use atspi::proxy::editable_text::EditableTextProxy;
use atspi::proxy::selection::SelectionProxy;
use atspi::proxy::text::TextProxy;
use atspi::proxy::value::ValueProxy;
use atspi::zbus;
use atspi::{CoordType, Interface, InterfaceSet, ObjectRefOwned, State, StateSet};
use deskpilot_backend::{
    Accessibility, ElementHandle, ElementStates, Error, RawElement, RawTree, TreeLimits, TreeNote,
};
use deskpilot_types::{Point, Rect, Role, WindowInfo};
use futures_util::future::join_all;

use crate::a11y_changes::Changes;
use crate::desktop::X11Desktop;

use advertised::*;
use cache::*;
use enrich::*;
use frame::*;
use grid::*;
use huge::*;
use placement::*;
pub(crate) use roles::role;
use roles::*;
use shown::*;
use walk::*;

/// How long connecting to the accessibility bus may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Longest text excerpt kept as an element's value.
const EXCERPT: i32 = 200;

/// How many times a connection to an accessibility bus was found broken, in this process:
/// a connection made before the latest loss is dropped and made again on next use.
static LOSSES: AtomicU64 = AtomicU64::new(0);

/// What to do when there is no accessibility bus.
const BUS_FIX: &str = "if the bus is gone, to fix: start it in the desktop session with `/usr/libexec/at-spi-bus-launcher --launch-immediately` (package at-spi2-core); deskpilot reconnects by itself on the next call, and apps started before the bus came back must be restarted to join it";

/// The accessibility bus connection, made on first use.
#[derive(Default)]
pub(crate) struct A11y {
    /// The connection and the [`LOSSES`] count when it was made.
    conn: Mutex<Option<(zbus::Connection, u64)>>,
    /// Application bus name → pid.
    pids: Mutex<HashMap<String, u32>>,
    /// Applications whose `Cache.GetItems` is unusable (Qt's legacy signature): walk at once.
    no_cache: Mutex<std::collections::HashSet<String>>,
    /// X window id → its frame, found once and re-validated on every read.
    frames: Mutex<HashMap<u64, Node>>,
    /// Event counts per application: when a window's last read may be reused.
    changes: Arc<Changes>,
    /// X window id → the nodes of its last read.
    trees: Mutex<HashMap<u64, KnownTree>>,
    /// Application bus name → what its toolkit does differently, learnt once.
    apps: Mutex<HashMap<String, AppTraits>>,
    /// Application bus name → frame path → where its bounds go, from the latest read.
    placements: Mutex<HashMap<String, HashMap<String, Placement>>>,
    /// What the password-field lookups of captures learnt (`passwords`).
    passwords: passwords::Known,
}

/// What an application's toolkit does differently from the specification.
#[derive(Debug, Clone, Copy, PartialEq)]
struct AppTraits {
    /// How it says an element shows.
    shown: Shown,
    /// Whether it reports screen extents relative to its window (GTK 4 on X11); `None` until
    /// a window of it placed away from the screen's origin told.
    relative: Option<bool>,
}

/// A window's nodes as last read, and what they depend on.
#[derive(Debug, Clone)]
struct KnownTree {
    app: String,
    /// The application's event count before the read.
    count: u64,
    limits: (usize, u32),
    nodes: Vec<Node>,
    source: &'static str,
    walked: usize,
}

impl std::fmt::Debug for A11y {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A11y").finish_non_exhaustive()
    }
}

fn unavailable(reason: impl std::fmt::Display) -> Error {
    Error::Unsupported {
        what: "accessibility tree",
        reason: reason.to_string(),
    }
}

/// A D-Bus failure as the engine needs to tell it apart: the object is gone, the interface is
/// missing, the bus broke, or something else.
fn dbus_err(what: &'static str) -> impl Fn(zbus::Error) -> Error {
    move |e| match &e {
        zbus::Error::MethodError(name, _, _) => match name.as_str() {
            "org.freedesktop.DBus.Error.UnknownObject"
            | "org.freedesktop.DBus.Error.ServiceUnknown"
            | "org.freedesktop.DBus.Error.NameHasNoOwner" => Error::ElementGone {
                reason: format!("{what}: {e}"),
            },
            "org.freedesktop.DBus.Error.UnknownMethod"
            | "org.freedesktop.DBus.Error.UnknownInterface"
            // GTK 4 answers GrabFocus on a widget that cannot take focus so.
            | "org.freedesktop.DBus.Error.NotSupported" => Error::Unsupported {
                what: "this operation on the element",
                reason: format!("{what}: {e}"),
            },
            _ => Error::os(what, e),
        },
        zbus::Error::InputOutput(_) => {
            LOSSES.fetch_add(1, Ordering::AcqRel);
            Error::ConnectionLost {
                link: deskpilot_backend::Link::Accessibility,
                message: format!("{what}: {e}; {BUS_FIX}"),
            }
        }
        _ => Error::os(what, e),
    }
}

/// Runs `fut` to completion or fails after `timeout`.
fn run<T>(
    timeout: Duration,
    what: &str,
    fut: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    let what = what.to_string();
    async_io::block_on(futures_lite::future::or(fut, async move {
        async_io::Timer::after(timeout).await;
        Err(Error::Timeout {
            operation: what,
            after: timeout,
        })
    }))
}

/// `fut`'s output, or `None` when `deadline` comes first.
async fn before<T>(deadline: Instant, fut: impl Future<Output = T>) -> Option<T> {
    futures_lite::future::or(async { Some(fut.await) }, async {
        async_io::Timer::at(deadline).await;
        None
    })
    .await
}

impl A11y {
    /// The accessibility bus connection, made on first use. A plain bus connection: nothing
    /// is asked of the applications while connecting, so a hung app cannot block it.
    fn connection(&self) -> Result<zbus::Connection, Error> {
        let mut slot = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        let losses = LOSSES.load(Ordering::Acquire);
        match slot.as_ref() {
            Some((c, made)) if *made == losses => return Ok(c.clone()),
            Some(_) => {
                // A bus that comes back hands out its names afresh: nothing read on the old
                // one may be taken for the new one's.
                *slot = None;
                self.forget();
                tracing::info!("the accessibility bus connection broke; connecting again");
            }
            None => {}
        }
        let gone = |message: String| Error::ConnectionLost {
            link: deskpilot_backend::Link::Accessibility,
            message: format!("{message}; {BUS_FIX}"),
        };
        let conn = run(
            CONNECT_TIMEOUT,
            "connecting to the accessibility bus",
            async {
                let address = a11y_bus_address()
                    .await
                    .map_err(|e| gone(format!("no accessibility bus: {e}")))?;
                let conn = zbus::connection::Builder::address(address.as_str())
                    .map_err(|e| {
                        unavailable(format!("bad accessibility bus address {address}: {e}"))
                    })?
                    .build()
                    .await
                    .map_err(|e| gone(format!("no accessibility bus at {address}: {e}")))?;
                // Toolkit bridges (GTK's at-spi2-atk) serve their bulk cache only while some
                // client listens for events; listening also tells us which apps changed.
                if let Err(e) = self.changes.start(&conn).await {
                    tracing::warn!(error = %e, "cannot listen to accessibility events; trees are read in full every time");
                }
                Ok(conn)
            },
        )?;
        *slot = Some((conn.clone(), losses));
        Ok(conn)
    }

    /// Drops everything learnt from the bus: applications' names, frames, trees.
    fn forget(&self) {
        fn clear<T: Default>(m: &Mutex<T>) {
            *m.lock().unwrap_or_else(|e| e.into_inner()) = T::default();
        }
        clear(&self.pids);
        clear(&self.no_cache);
        clear(&self.frames);
        clear(&self.trees);
        clear(&self.apps);
        clear(&self.placements);
        self.passwords.forget();
    }

    /// Remembers where a window's bounds go, for elements re-read after the tree.
    fn remember_placement(&self, frame: &ObjectRefOwned, placement: Placement) {
        let Some(app) = frame.name_as_str() else {
            return;
        };
        let mut all = self.placements.lock().unwrap_or_else(|e| e.into_inner());
        if all.len() > 256 {
            all.clear();
        }
        let frames = all.entry(app.to_string()).or_default();
        if frames.len() > 64 {
            frames.clear();
        }
        frames.insert(frame.path_as_str().to_string(), placement);
    }

    /// The placements remembered for `app`'s windows.
    fn placements(&self, app: &str) -> HashMap<String, Placement> {
        self.placements
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(app)
            .cloned()
            .unwrap_or_default()
    }
}

/// Where the accessibility bus is: `AT_SPI_BUS_ADDRESS` when set (as libatspi reads it), else
/// what the bus launcher tells the session bus.
async fn a11y_bus_address() -> Result<String, zbus::Error> {
    if let Some(a) = std::env::var("AT_SPI_BUS_ADDRESS")
        .ok()
        .filter(|a| !a.trim().is_empty())
    {
        return Ok(a);
    }
    let session = zbus::Connection::session().await?;
    let bus = atspi::proxy::bus::BusProxy::new(&session).await?;
    bus.get_address().await
}

/// What the first pass knows about a node, before enrichment.
#[derive(Debug, Clone)]
struct Node {
    object: ObjectRefOwned,
    parent: Option<usize>,
    depth: u32,
    role: atspi::Role,
    name: String,
    /// Known from the application's cache; `None` means it must be asked for.
    description: Option<String>,
    states: StateSet,
    ifaces: InterfaceSet,
    /// What a container too big to enumerate holds beyond the children read (`huge`).
    summary: Option<String>,
    /// The child count read with the node's name; `None` means it must be asked for.
    children: Option<i32>,
    /// Where the node stands among its siblings (nodes read in one batch keep their order).
    rank: u32,
    /// Its screen extents when already known (a grid cell placed by its row and column).
    bounds: Option<Rect>,
}

fn handle(o: &ObjectRefOwned) -> ElementHandle {
    ElementHandle(format!(
        "{}|{}",
        o.name_as_str().unwrap_or_default(),
        o.path_as_str()
    ))
}

/// Parses a handle back into the bus name and path it came from.
pub(crate) fn parse_handle(h: &ElementHandle) -> Option<(String, String)> {
    let (name, path) = h.0.split_once('|')?;
    Some((name.to_string(), path.to_string()))
}

async fn accessible<'c>(
    conn: &'c zbus::Connection,
    o: &ObjectRefOwned,
) -> Result<AccessibleProxy<'c>, Error> {
    proxy_at::<AccessibleProxy>(conn, o).await
}

async fn proxy_at<'c, P>(conn: &'c zbus::Connection, o: &ObjectRefOwned) -> Result<P, Error>
where
    P: From<zbus::Proxy<'c>> + zbus::proxy::Defaults,
{
    let name = o
        .name_as_str()
        .ok_or_else(|| unavailable("a null object reference"))?
        .to_string();
    let proxy = zbus::proxy::Builder::<P>::new(conn)
        .destination(name)
        .map_err(dbus_err("destination"))?
        .path(o.path_as_str().to_string())
        .map_err(dbus_err("path"))?
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .map_err(dbus_err("proxy"))?;
    Ok(proxy)
}

/// Small helper so tuple plumbing reads left to right.
trait Pipe: Sized {
    fn pipe<T>(self, f: impl FnOnce(Self) -> T) -> T {
        f(self)
    }
}
impl<T> Pipe for T {}

/// An object reference from a handle this module issued.
fn object(h: &ElementHandle) -> Result<ObjectRefOwned, Error> {
    let (name, path) =
        parse_handle(h).ok_or_else(|| unavailable("not an AT-SPI element handle"))?;
    let name = zbus::names::UniqueName::try_from(name)
        .map_err(|e| unavailable(format!("bad bus name in handle: {e}")))?;
    let path = zbus::zvariant::ObjectPath::try_from(path)
        .map_err(|e| unavailable(format!("bad path in handle: {e}")))?;
    Ok(ObjectRefOwned::new(atspi::ObjectRef::Owned { name, path }))
}

/// How long one element operation may take.
const OPERATION_TIMEOUT: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use deskpilot_types::{WindowId, WindowState};

    use super::*;

    fn raw(bounds: Rect) -> RawElement {
        RawElement {
            parent: None,
            depth: 0,
            role: Role::Button,
            platform_role: String::new(),
            name: String::new(),
            description: String::new(),
            value: None,
            states: ElementStates::default(),
            actions: Vec::new(),
            bounds: Some(bounds),
            handle: ElementHandle(String::new()),
        }
    }

    fn window(client: Rect) -> WindowInfo {
        WindowInfo {
            id: WindowId(1),
            title: String::new(),
            class: String::new(),
            pid: None,
            process: None,
            frame: client,
            client,
            state: WindowState::default(),
            z: 0,
            monitor: None,
        }
    }

    /// Regression: gtk4-demo (GTK 4.8.3 on X11) reported its frame at 0,0 790×590 and its
    /// Search button at 76,10 while the X window was 800×600 at 800,400: every bound was off
    /// by the window's origin.
    #[test]
    fn window_relative_extents_are_recognised_and_moved_onto_the_screen() {
        let w = window(Rect::new(800, 400, 800, 600));
        assert_eq!(window_relative(Rect::new(0, 0, 790, 590), &w), Some(true));
        // GTK 3 (mousepad): the frame where the window is.
        assert_eq!(
            window_relative(Rect::new(800, 400, 800, 600), &w),
            Some(false)
        );
        // A window at the screen's origin cannot tell; nor can a scaled app's frame.
        let origin = window(Rect::new(0, 0, 800, 600));
        assert_eq!(window_relative(Rect::new(0, 0, 790, 590), &origin), None);
        assert_eq!(window_relative(Rect::new(0, 0, 395, 295), &w), None);
        let mut els = vec![
            raw(Rect::new(0, 0, 790, 590)),
            raw(Rect::new(76, 10, 24, 24)),
        ];
        Placement {
            offset: (800, 400),
            scale: None,
        }
        .apply(&mut els, &w);
        assert_eq!(els[1].bounds, Some(Rect::new(876, 410, 24, 24)));
        assert!(els[1].states.onscreen);
    }

    #[test]
    fn logical_bounds_of_a_scaled_app_become_physical() {
        // Measured: GTK with GDK_SCALE=2 reports its frame at 159,3 642x533 while the X
        // window is 1282x1065 at 319,7.
        let w = window(Rect::new(319, 7, 1282, 1065));
        let mut els = vec![
            raw(Rect::new(159, 3, 642, 533)),
            raw(Rect::new(200, 100, 50, 20)),
        ];
        let scale = Scale::of(els[0].bounds.expect("frame"), &w).expect("scaled");
        assert_eq!(scale.sx, 2.0);
        Placement {
            offset: (0, 0),
            scale: Some(scale),
        }
        .apply(&mut els, &w);
        assert_eq!(els[0].bounds, Some(Rect::new(319, 7, 1284, 1066)));
        assert_eq!(els[1].bounds, Some(Rect::new(401, 201, 100, 40)));
        assert!(els[1].states.onscreen);
        // An unscaled app is left alone.
        assert_eq!(Scale::of(Rect::new(319, 7, 1282, 1065), &w), None);
    }
}
