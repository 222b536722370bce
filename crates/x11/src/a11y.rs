//! Accessibility trees over AT-SPI (D-Bus), with the `atspi` crate.
//!
//! zbus runs its own executor threads; the blocking trait methods drive futures with
//! `async_io::block_on` and race every read against a deadline, so a stuck application costs
//! one call its timeout, never the server.
//!
//! Reading a window's tree:
//! 1. the window's application: the registry's children whose D-Bus connection belongs to the
//!    window's pid; its frame: the top-level child whose extents match the window's client or
//!    frame rectangle (else whose name is the title);
//! 2. the subtree: `Cache.GetItems` (one call for the whole application) where the toolkit has
//!    it (GTK), walking only nodes whose cached child count disagrees (transient children);
//!    a concurrent level-by-level walk where it has not (Qt) — never one round trip per
//!    property per node in sequence;
//! 3. per kept element, concurrently: extents, advertised actions, a value or text excerpt.
//!
//! Hidden elements (not `Showing`) are left out with their subtrees.

use std::collections::HashMap;
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
    Accessibility, ElementHandle, ElementStates, Error, RawElement, RawTree, TreeLimits,
};
use deskpilot_types::{Rect, Role, WindowInfo};
use futures_util::future::join_all;

use crate::X11Desktop;
use crate::a11y_changes::Changes;

/// How long connecting to the accessibility bus may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Longest text excerpt kept as an element's value.
const EXCERPT: i32 = 200;

/// The accessibility bus connection, made on first use.
#[derive(Default)]
pub(crate) struct A11y {
    conn: Mutex<Option<zbus::Connection>>,
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
            | "org.freedesktop.DBus.Error.UnknownInterface" => Error::Unsupported {
                what: "this operation on the element",
                reason: format!("{what}: {e}"),
            },
            _ => Error::os(what, e),
        },
        zbus::Error::InputOutput(_) => Error::ConnectionLost {
            link: deskpilot_backend::Link::Accessibility,
            message: format!("{what}: {e}"),
        },
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
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let conn = run(
            CONNECT_TIMEOUT,
            "connecting to the accessibility bus",
            async {
                let address = a11y_bus_address()
                    .await
                    .map_err(|e| unavailable(format!("no accessibility bus: {e}")))?;
                let conn = zbus::connection::Builder::address(address.as_str())
                    .map_err(|e| {
                        unavailable(format!("bad accessibility bus address {address}: {e}"))
                    })?
                    .build()
                    .await
                    .map_err(|e| unavailable(format!("no accessibility bus at {address}: {e}")))?;
                // Toolkit bridges (GTK's at-spi2-atk) serve their bulk cache only while some
                // client listens for events; listening also tells us which apps changed.
                if let Err(e) = self.changes.start(&conn).await {
                    tracing::warn!(error = %e, "cannot listen to accessibility events; trees are read in full every time");
                }
                Ok(conn)
            },
        )?;
        *slot = Some(conn.clone());
        Ok(conn)
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

/// AT-SPI role → deskpilot role.
pub(crate) fn role(r: atspi::Role) -> Role {
    use atspi::Role as A;
    match r {
        A::Application => Role::Application,
        A::Frame | A::Window => Role::Window,
        A::Dialog | A::FileChooser | A::ColorChooser | A::FontChooser => Role::Dialog,
        A::Alert | A::Notification => Role::Alert,
        A::Button | A::PushButtonMenu => Role::Button,
        A::ToggleButton => Role::ToggleButton,
        A::CheckBox => Role::CheckBox,
        A::RadioButton => Role::RadioButton,
        A::ComboBox => Role::ComboBox,
        A::Entry | A::PasswordText | A::Text | A::Terminal | A::Editbar => Role::Edit,
        A::Label | A::Static | A::Caption | A::Paragraph | A::Footnote => Role::Text,
        A::Heading => Role::Heading,
        A::Link => Role::Link,
        A::Image | A::Icon | A::DesktopIcon | A::Animation => Role::Image,
        A::List | A::ListBox | A::DescriptionList => Role::List,
        A::ListItem | A::DescriptionTerm | A::DescriptionValue => Role::ListItem,
        A::Tree | A::TreeTable => Role::Tree,
        A::TreeItem => Role::TreeItem,
        A::Table => Role::Table,
        A::TableRow => Role::Row,
        A::TableCell => Role::Cell,
        A::ColumnHeader | A::RowHeader | A::TableColumnHeader | A::TableRowHeader => {
            Role::ColumnHeader
        }
        A::Menu => Role::Menu,
        A::MenuBar => Role::MenuBar,
        A::MenuItem | A::TearoffMenuItem => Role::MenuItem,
        A::CheckMenuItem => Role::CheckMenuItem,
        A::RadioMenuItem => Role::RadioMenuItem,
        A::PageTabList => Role::TabList,
        A::PageTab => Role::Tab,
        A::ToolBar => Role::ToolBar,
        A::StatusBar => Role::StatusBar,
        A::Slider => Role::Slider,
        A::SpinButton => Role::SpinButton,
        A::ScrollBar => Role::ScrollBar,
        A::ProgressBar | A::LevelBar => Role::ProgressBar,
        A::Separator => Role::Separator,
        A::ToolTip => Role::ToolTip,
        A::DocumentFrame
        | A::DocumentText
        | A::DocumentWeb
        | A::DocumentEmail
        | A::DocumentPresentation
        | A::DocumentSpreadsheet
        | A::Article => Role::Document,
        A::ScrollPane | A::Viewport => Role::ScrollPane,
        A::SplitPane => Role::SplitPane,
        A::Panel
        | A::Filler
        | A::Section
        | A::Grouping
        | A::Form
        | A::InternalFrame
        | A::LayeredPane
        | A::RootPane
        | A::OptionPane
        | A::GlassPane
        | A::Landmark => Role::Group,
        _ => Role::Other,
    }
}

fn states(s: StateSet, bounds: Option<Rect>, window: Rect) -> ElementStates {
    ElementStates {
        enabled: s.contains(State::Enabled) || s.contains(State::Sensitive),
        focusable: s.contains(State::Focusable),
        focused: s.contains(State::Focused),
        selected: s.contains(State::Selected),
        checked: s.contains(State::Checked) || s.contains(State::Pressed),
        expandable: s.contains(State::Expandable),
        expanded: s.contains(State::Expanded),
        editable: s.contains(State::Editable),
        onscreen: bounds.is_some_and(|b| b.intersect(&window).is_some()),
    }
}

/// Extents as a rectangle; `None` for the placeholders toolkits give hidden or unplaced
/// elements (GTK `i32::MIN`, Qt all zeros, empty sizes).
fn bounds(x: i32, y: i32, w: i32, h: i32) -> Option<Rect> {
    if w <= 0 || h <= 0 || x == i32::MIN || y == i32::MIN || (x, y, w, h) == (0, 0, 0, 0) {
        return None;
    }
    Some(Rect::new(x, y, w as u32, h as u32))
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

/// The window's frame in its application's tree.
async fn find_frame(
    conn: &zbus::Connection,
    window: &WindowInfo,
    pids: &Mutex<HashMap<String, u32>>,
) -> Result<Node, Error> {
    let root = AccessibleProxy::builder(conn)
        .destination("org.a11y.atspi.Registry")
        .map_err(dbus_err("registry"))?
        .path("/org/a11y/atspi/accessible/root")
        .map_err(dbus_err("registry"))?
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .map_err(dbus_err("registry"))?;
    let apps = root
        .get_children()
        .await
        .map_err(dbus_err("registry children"))?;
    let dbus = zbus::fdo::DBusProxy::new(conn)
        .await
        .map_err(|e| Error::os("DBus proxy", e))?;
    // A bus connection keeps its pid for life: ask the bus once per application.
    let known: HashMap<String, u32> = pids.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let app_pids = join_all(apps.iter().map(|app| {
        let dbus = &dbus;
        let known = &known;
        async move {
            let name = app.name_as_str()?;
            if let Some(pid) = known.get(name) {
                return Some(*pid);
            }
            let bus = zbus::names::BusName::try_from(name.to_string()).ok()?;
            dbus.get_connection_unix_process_id(bus).await.ok()
        }
    }))
    .await;
    {
        let mut cache = pids.lock().unwrap_or_else(|e| e.into_inner());
        for (app, pid) in apps.iter().zip(&app_pids) {
            if let (Some(name), Some(pid)) = (app.name_as_str(), pid) {
                cache.insert(name.to_string(), *pid);
            }
        }
    }
    let pids = app_pids;
    let ours: Vec<&ObjectRefOwned> = apps
        .iter()
        .zip(pids)
        .filter(|(_, pid)| window.pid.is_none() || *pid == window.pid)
        .map(|(app, _)| app)
        .collect();
    if ours.is_empty() {
        return Err(unavailable(format!(
            "the application of window {} (pid {}) is not on the accessibility bus (GTK apps need GTK_MODULES=gail:atk-bridge, Qt apps QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1, set before they start)",
            window.id,
            window.pid.map_or("?".to_string(), |p| p.to_string())
        )));
    }
    let mut best: Option<(u32, Node)> = None;
    for app in ours {
        let proxy = accessible(conn, app).await?;
        let frames = proxy.get_children().await.unwrap_or_default();
        let described = join_all(frames.iter().map(|f| async move {
            let p = accessible(conn, f).await.ok()?;
            let (name, role, states, ifaces) = futures_lite::future::zip(
                futures_lite::future::zip(p.name(), p.get_role()),
                futures_lite::future::zip(p.get_state(), p.get_interfaces()),
            )
            .await
            .pipe(|((n, r), (s, i))| (n.ok(), r.ok(), s.ok(), i.ok()));
            let extents = match proxy_at::<ComponentProxy>(conn, f).await {
                Ok(c) => c.get_extents(CoordType::Screen).await.ok(),
                Err(_) => None,
            };
            Some((f.clone(), name?, role?, states?, ifaces?, extents))
        }))
        .await;
        for (object, name, role, states, ifaces, extents) in described.into_iter().flatten() {
            let rect = extents.and_then(|(x, y, w, h)| bounds(x, y, w, h));
            let near = |a: Rect, b: Rect| {
                (a.x - b.x).abs() <= 2
                    && (a.y - b.y).abs() <= 2
                    && (a.width as i64 - b.width as i64).abs() <= 2
                    && (a.height as i64 - b.height as i64).abs() <= 2
            };
            let score = match rect {
                Some(r) if near(r, window.client) || near(r, window.frame) => 3,
                _ if !window.title.is_empty() && name == window.title => 2,
                _ if states.contains(State::Showing) => 1,
                _ => 0,
            };
            if best.as_ref().is_none_or(|(s, _)| score > *s) {
                best = Some((
                    score,
                    Node {
                        object,
                        parent: None,
                        depth: 0,
                        role,
                        name,
                        description: None,
                        states,
                        ifaces,
                    },
                ));
            }
        }
    }
    best.map(|(_, n)| n).ok_or_else(|| {
        unavailable(format!(
            "the application of window {} shows no top-level accessible element",
            window.id
        ))
    })
}

/// A remembered frame, refreshed, if it still exists and shows.
async fn still_showing(conn: &zbus::Connection, frame: &Node) -> Option<Node> {
    let p = accessible(conn, &frame.object).await.ok()?;
    let (states, name) = futures_lite::future::zip(p.get_state(), p.name()).await;
    let states = states.ok()?;
    if !states.contains(State::Showing) || states.contains(State::Defunct) {
        return None;
    }
    let mut frame = frame.clone();
    frame.states = states;
    frame.name = name.unwrap_or_default();
    Some(frame)
}

/// Small helper so tuple plumbing reads left to right.
trait Pipe: Sized {
    fn pipe<T>(self, f: impl FnOnce(Self) -> T) -> T {
        f(self)
    }
}
impl<T> Pipe for T {}

/// What the application's cache says about a frame's subtree.
enum FromCache {
    /// The application has no usable cache (Qt's differs from the specification).
    Unusable,
    /// The application serves no cache right now (GTK before it learns a client listens).
    NotNow,
    /// The frame is no longer in the cache, or no longer showing.
    FrameGone,
    /// The subtree (frame first) and the nodes whose children must be read directly.
    Tree(Vec<Node>, Vec<usize>),
}

/// The subtree under `frame` from the application's cache.
async fn from_cache(conn: &zbus::Connection, frame: &Node, limits: &TreeLimits) -> FromCache {
    let mut not_now = false;
    match read_cache(conn, frame, limits, &mut not_now).await {
        None if not_now => FromCache::NotNow,
        None => FromCache::Unusable,
        Some(None) => FromCache::FrameGone,
        Some(Some((nodes, unfinished))) => FromCache::Tree(nodes, unfinished),
    }
}

async fn read_cache(
    conn: &zbus::Connection,
    frame: &Node,
    limits: &TreeLimits,
    not_now: &mut bool,
) -> Option<Option<(Vec<Node>, Vec<usize>)>> {
    let items = get_items(conn, frame.object.name_as_str()?, not_now).await?;
    let items = items.as_slice();
    let mut children: HashMap<String, Vec<&atspi::CacheItem>> = HashMap::new();
    for item in items {
        children
            .entry(item.parent.path_as_str().to_string())
            .or_default()
            .push(item);
    }
    for list in children.values_mut() {
        list.sort_by_key(|i| i.index);
    }
    // The frame as the cache sees it now: a remembered frame that is gone or hidden is stale.
    let Some(now) = items
        .iter()
        .find(|i| i.object.path_as_str() == frame.object.path_as_str())
        .filter(|i| i.states.contains(State::Showing) && !i.states.contains(State::Defunct))
    else {
        return Some(None);
    };
    let mut frame = frame.clone();
    frame.name = now.short_name.clone();
    frame.description = Some(now.name.clone());
    frame.states = now.states;
    let mut nodes = vec![frame];
    // Nodes whose cached children are fewer than they report: walk them.
    let mut unfinished = Vec::new();
    let mut stack = vec![0usize];
    while let Some(at) = stack.pop() {
        let node = nodes[at].clone();
        let path = node.object.path_as_str().to_string();
        let kids = children.get(&path).map(Vec::as_slice).unwrap_or_default();
        let reported = items
            .iter()
            .find(|i| i.object.path_as_str() == path)
            .map(|i| i.children)
            .unwrap_or(kids.len() as i32);
        if node.depth >= limits.max_depth {
            continue;
        }
        if (kids.len() as i32) < reported {
            unfinished.push(at);
            continue;
        }
        let mut pushed = Vec::new();
        for item in kids {
            if nodes.len() >= limits.max_elements {
                break;
            }
            if !item.states.contains(State::Showing) {
                continue;
            }
            nodes.push(Node {
                object: item.object.clone(),
                parent: Some(at),
                depth: node.depth + 1,
                role: item.role,
                // atspi's field names are shifted: `short_name` carries the accessible name,
                // `name` the description.
                name: item.short_name.clone(),
                description: Some(item.name.clone()),
                states: item.states,
                ifaces: item.ifaces,
            });
            pushed.push(nodes.len() - 1);
        }
        stack.extend(pushed.into_iter().rev());
    }
    // Toolkits create some children lazily (GTK list boxes, tables, menus): the cache lists
    // such a container with no children at all. Ask the containers that look empty.
    let mut has_children = vec![false; nodes.len()];
    for n in &nodes {
        if let Some(p) = n.parent {
            has_children[p] = true;
        }
    }
    let suspects: Vec<usize> = (0..nodes.len())
        .filter(|&i| !has_children[i] && !unfinished.contains(&i))
        .filter(|&i| nodes[i].depth < limits.max_depth && lazy_container(&nodes[i]))
        .collect();
    let t = Instant::now();
    let n_suspects = suspects.len();
    let counts = join_all(suspects.iter().map(|&i| {
        let object = nodes[i].object.clone();
        async move {
            let p = accessible(conn, &object).await.ok()?;
            p.child_count().await.ok()
        }
    }))
    .await;
    tracing::debug!(
        suspects = n_suspects,
        ms = t.elapsed().as_secs_f64() * 1e3,
        "child counts"
    );
    for (i, count) in suspects.into_iter().zip(counts) {
        if count.unwrap_or(0) > 0 {
            unfinished.push(i);
        }
    }
    Some(Some((nodes, unfinished)))
}

/// One application's whole cache; `None` when it serves none (`not_now` when it may later).
async fn get_items(
    conn: &zbus::Connection,
    app: &str,
    not_now: &mut bool,
) -> Option<Vec<atspi::CacheItem>> {
    let cache = zbus::proxy::Builder::<CacheProxy>::new(conn)
        .destination(app.to_string())
        .ok()?
        .path("/org/a11y/atspi/cache")
        .ok()?
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .ok()?;
    let t = Instant::now();
    let items = match cache.get_items().await {
        Ok(items) => items,
        Err(e) => {
            tracing::debug!(error = %e, "Cache.GetItems unusable");
            *not_now = matches!(
                &e,
                zbus::Error::MethodError(name, _, _)
                    if name.as_str() == "org.freedesktop.DBus.Error.UnknownMethod"
                        || name.as_str() == "org.freedesktop.DBus.Error.UnknownObject"
            );
            return None;
        }
    };
    tracing::debug!(
        items = items.len(),
        ms = t.elapsed().as_secs_f64() * 1e3,
        "Cache.GetItems"
    );
    Some(items)
}

/// Roles whose children are mostly hidden until opened.
fn hides_children(r: atspi::Role) -> bool {
    use atspi::Role as A;
    matches!(
        r,
        A::Menu | A::MenuBar | A::ComboBox | A::PopupMenu | A::MenuItem
    )
}

/// Containers whose children a toolkit may create only when asked. Menus and combo boxes
/// count only while open: a closed one's items are hidden anyway.
fn lazy_container(n: &Node) -> bool {
    use atspi::Role as A;
    match n.role {
        A::Menu | A::ComboBox => n.states.contains(State::Expanded),
        r => matches!(
            r,
            A::List
                | A::ListBox
                | A::Table
                | A::TreeTable
                | A::Tree
                | A::PageTabList
                | A::ScrollPane
                | A::Viewport
                | A::Panel
                | A::Filler
        ),
    }
}

/// Reads one node's basics (its states are known already).
async fn describe(
    conn: &zbus::Connection,
    object: ObjectRefOwned,
    states: StateSet,
    parent: usize,
    depth: u32,
) -> Option<Node> {
    let p = accessible(conn, &object).await.ok()?;
    let (name, (role, ifaces)) = futures_lite::future::zip(
        p.name(),
        futures_lite::future::zip(p.get_role(), p.get_interfaces()),
    )
    .await;
    Some(Node {
        object,
        parent: Some(parent),
        depth,
        role: role.ok()?,
        name: name.unwrap_or_default(),
        description: None,
        states,
        ifaces: ifaces.unwrap_or_default(),
    })
}

/// Walks the subtrees under `starts` level by level, every level's requests in flight at once.
/// Reads the children of `starts`, level by level, until the limits or `deadline`; returns
/// whether it finished (false: the deadline cut it short, and the levels read are kept).
async fn walk(
    conn: &zbus::Connection,
    nodes: &mut Vec<Node>,
    starts: Vec<usize>,
    limits: &TreeLimits,
    deadline: Instant,
) -> bool {
    let mut level = starts;
    while !level.is_empty() && nodes.len() < limits.max_elements {
        let reading = join_all(level.iter().map(|&at| {
            let object = nodes[at].object.clone();
            let depth = nodes[at].depth;
            let role = nodes[at].role;
            async move {
                if depth >= limits.max_depth {
                    return Vec::new();
                }
                let Ok(p) = accessible(conn, &object).await else {
                    return Vec::new();
                };
                let children = p.get_children().await.unwrap_or_default();
                if !hides_children(role) {
                    // Everything in one round: few children here are hidden.
                    return join_all(children.into_iter().map(|c| async move {
                        let p = accessible(conn, &c).await.ok()?;
                        let states = p.get_state().await.ok()?;
                        states.contains(State::Showing).then_some(())?;
                        describe(conn, c, states, at, depth + 1).await
                    }))
                    .await
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>();
                }
                // Menus hold many hidden items: states first, then only what is showing.
                let showing = join_all(children.into_iter().map(|c| async move {
                    let p = accessible(conn, &c).await.ok()?;
                    let states = p.get_state().await.ok()?;
                    states.contains(State::Showing).then_some((c, states))
                }))
                .await;
                join_all(
                    showing
                        .into_iter()
                        .flatten()
                        .map(|(c, states)| describe(conn, c, states, at, depth + 1)),
                )
                .await
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
            }
        }));
        let Some(kids) = before(deadline, reading).await else {
            return false;
        };
        let mut next = Vec::new();
        for batch in kids {
            for node in batch {
                if nodes.len() >= limits.max_elements {
                    break;
                }
                nodes.push(node);
                next.push(nodes.len() - 1);
            }
        }
        level = next;
    }
    true
}

/// Puts `nodes` (parents before children, but not necessarily depth-first) in depth-first order.
fn depth_first(nodes: Vec<Node>) -> Vec<Node> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        if let Some(p) = n.parent {
            children[p].push(i);
        }
    }
    let mut order = Vec::with_capacity(nodes.len());
    let mut stack = vec![0usize];
    while let Some(i) = stack.pop() {
        order.push(i);
        stack.extend(children[i].iter().rev());
    }
    let mut new_index = vec![0usize; nodes.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    order
        .iter()
        .map(|&old| {
            let mut n = nodes[old].clone();
            n.parent = n.parent.map(|p| new_index[p]);
            n
        })
        .collect()
}

/// Extents, actions and a value for every node, all in flight together.
/// Every node with its bounds, actions, value and names, read concurrently. A node whose
/// reads do not finish by `deadline` comes back bare (what the node list knew); the count of
/// those is returned too.
async fn enrich(
    conn: &zbus::Connection,
    nodes: &[Node],
    window: &WindowInfo,
    deadline: Instant,
) -> (Vec<RawElement>, usize) {
    let all = join_all(nodes.iter().map(|n| async move {
        match before(deadline, enrich_one(conn, n, window)).await {
            Some(e) => (e, true),
            None => (bare(n, window), false),
        }
    }))
    .await;
    let unanswered = all.iter().filter(|(_, answered)| !answered).count();
    (all.into_iter().map(|(e, _)| e).collect(), unanswered)
}

/// What the node list alone says about a node.
fn bare(n: &Node, window: &WindowInfo) -> RawElement {
    RawElement {
        parent: n.parent,
        depth: n.depth,
        role: role(n.role),
        platform_role: n.role.name().to_string(),
        name: n.name.trim().to_string(),
        description: n.description.clone().unwrap_or_default().trim().to_string(),
        value: None,
        states: states(n.states, None, window.frame),
        actions: Vec::new(),
        bounds: None,
        handle: handle(&n.object),
    }
}

async fn enrich_one(conn: &zbus::Connection, n: &Node, window: &WindowInfo) -> RawElement {
    {
        let o = &n.object;
        let extents = async {
            if !n.ifaces.contains(Interface::Component) {
                return None;
            }
            let c = proxy_at::<ComponentProxy>(conn, o).await.ok()?;
            let (x, y, w, h) = c.get_extents(CoordType::Screen).await.ok()?;
            bounds(x, y, w, h)
        };
        let actions = async {
            if !n.ifaces.contains(Interface::Action) {
                return Vec::new();
            }
            let Ok(a) = proxy_at::<ActionProxy>(conn, o).await else {
                return Vec::new();
            };
            a.get_actions()
                .await
                .map(|v| v.into_iter().map(|a| a.name).collect())
                .unwrap_or_default()
        };
        let value = async {
            let label = matches!(n.role, atspi::Role::Label | atspi::Role::Static);
            if n.ifaces.contains(Interface::Text) && !label {
                let t = proxy_at::<TextProxy>(conn, o).await.ok()?;
                let text = t.get_text(0, EXCERPT).await.ok()?;
                return (!text.is_empty()).then_some(text);
            }
            if n.ifaces.contains(Interface::Value) {
                let v = proxy_at::<ValueProxy>(conn, o).await.ok()?;
                return v.current_value().await.ok().map(|v| format!("{v}"));
            }
            None
        };
        // Names and descriptions the cache delivered are used as they are. An empty name is
        // asked for again only where one is expected (a control GTK names from its label late);
        // a label without a name is named by its text.
        let name_and_description = async {
            let label = n.ifaces.contains(Interface::Text)
                && matches!(n.role, atspi::Role::Label | atspi::Role::Static);
            let ask_name = n.name.trim().is_empty() && (label || role(n.role).is_interactive());
            if !ask_name && n.description.is_some() {
                return Some((None, n.description.clone()));
            }
            let p = accessible(conn, o).await.ok()?;
            let (name, description) = match (&n.description, ask_name) {
                (Some(d), _) => (p.name().await.ok(), Some(d.clone())),
                (None, true) => {
                    let (name, description) =
                        futures_lite::future::zip(p.name(), p.description()).await;
                    (name.ok(), description.ok())
                }
                (None, false) => (None, p.description().await.ok()),
            };
            let name = match name {
                Some(name) if name.trim().is_empty() && label => {
                    let t = proxy_at::<TextProxy>(conn, o).await.ok()?;
                    t.get_text(0, EXCERPT).await.ok()
                }
                other => other,
            };
            Some((name, description))
        };
        let ((bounds, actions), (value, names)) = futures_lite::future::zip(
            futures_lite::future::zip(extents, actions),
            futures_lite::future::zip(value, name_and_description),
        )
        .await;
        let (better_name, description) = names.unwrap_or_default();
        let name = better_name
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| n.name.clone());
        RawElement {
            parent: n.parent,
            depth: n.depth,
            role: role(n.role),
            platform_role: n.role.name().to_string(),
            name: name.trim().to_string(),
            description: description.unwrap_or_default().trim().to_string(),
            value,
            states: states(n.states, bounds, window.frame),
            actions,
            bounds,
            handle: handle(o),
        }
    }
}

/// Converts element bounds from logical to physical pixels when the app reports its frame
/// smaller than its X window by a common factor (GTK with `GDK_SCALE=2`, Qt with a scale
/// factor): each point is mapped relative to the frame, so odd physical origins stay exact.
/// Returns the horizontal scale when bounds were converted.
fn to_physical(elements: &mut [RawElement], window: &WindowInfo) -> Option<f64> {
    let frame = elements.first()?.bounds?;
    let (target, sx, sy) = [window.client, window.frame].into_iter().find_map(|r| {
        let sx = r.width as f64 / frame.width.max(1) as f64;
        let sy = r.height as f64 / frame.height.max(1) as f64;
        let same = (sx - sy).abs() <= 0.03 * sx;
        (same && (1.1..=4.0).contains(&sx)).then_some((r, sx, sy))
    })?;
    // Toolkits scale by quarter steps (GTK by whole ones); the frame's size is rounded to
    // logical pixels, so snap a measured 1.99 to 2.
    let snap = |s: f64| {
        let q = (s * 4.0).round() / 4.0;
        if (q - s).abs() <= 0.02 * s { q } else { s }
    };
    let (sx, sy) = (snap(sx), snap(sy));
    let map = |b: Rect| {
        let x = target.x as f64 + (b.x - frame.x) as f64 * sx;
        let y = target.y as f64 + (b.y - frame.y) as f64 * sy;
        Rect::new(
            x.round() as i32,
            y.round() as i32,
            (b.width as f64 * sx).round().max(1.0) as u32,
            (b.height as f64 * sy).round().max(1.0) as u32,
        )
    };
    for e in elements.iter_mut() {
        e.bounds = e.bounds.map(map);
        e.states.onscreen = e
            .bounds
            .is_some_and(|b| b.intersect(&window.frame).is_some());
    }
    Some(sx)
}

/// The selection interface of `o`'s container and `o`'s index in it.
async fn container_selection<'c>(
    conn: &'c zbus::Connection,
    o: &ObjectRefOwned,
    what: &'static str,
) -> Result<(SelectionProxy<'c>, i32), Error> {
    let p = accessible(conn, o).await?;
    let (parent, index) = futures_lite::future::zip(p.parent(), p.get_index_in_parent()).await;
    let parent = parent.map_err(dbus_err("Parent"))?;
    let index = index.map_err(dbus_err("GetIndexInParent"))?;
    let ifaces = accessible(conn, &parent)
        .await?
        .get_interfaces()
        .await
        .map_err(dbus_err("GetInterfaces"))?;
    if !ifaces.contains(Interface::Selection) {
        return Err(Error::Unsupported {
            what,
            reason: "the element's container has no selection interface".to_string(),
        });
    }
    Ok((proxy_at::<SelectionProxy>(conn, &parent).await?, index))
}

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

impl X11Desktop {
    /// Finds the window's frame and reads the nodes under it (cache, then walk), and remembers
    /// them with the application's event count from before the read.
    async fn read_nodes(
        &self,
        conn: &zbus::Connection,
        window: &WindowInfo,
        limits: &TreeLimits,
        deadline: Instant,
    ) -> Result<(Vec<Node>, &'static str, usize, bool), Error> {
        // A remembered frame is re-validated by the read itself (the cache must still list
        // it as showing) or, for walked apps, by one state query; a stale one is looked up again.
        let mut remembered = self
            .a11y
            .frames
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&window.id.0)
            .cloned();
        let (frame, outcome, app, count) = loop {
            let fresh = remembered.is_none();
            let frame = match remembered.take() {
                Some(f) => f,
                None => find_frame(conn, window, &self.a11y.pids).await?,
            };
            let app = frame.object.name_as_str().unwrap_or_default().to_string();
            // Counted before the read: an event during it makes the next read fresh.
            let count = self.a11y.changes.count(&app);
            let walk_only = self
                .a11y
                .no_cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(&app);
            let outcome = if walk_only {
                FromCache::Unusable
            } else {
                from_cache(conn, &frame, limits).await
            };
            let frame = match (&outcome, fresh) {
                (FromCache::FrameGone, false) => continue,
                (FromCache::Unusable | FromCache::NotNow, false) => {
                    match still_showing(conn, &frame).await {
                        Some(f) => f,
                        None => continue,
                    }
                }
                _ => frame,
            };
            if let FromCache::Unusable = outcome {
                self.a11y
                    .no_cache
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(app.clone());
            }
            break (frame, outcome, app, count);
        };
        {
            let mut frames = self.a11y.frames.lock().unwrap_or_else(|e| e.into_inner());
            if frames.len() > 256 {
                frames.clear();
            }
            frames.insert(window.id.0, frame.clone());
        }
        let (mut nodes, source, unfinished) = match outcome {
            FromCache::Tree(nodes, unfinished) => (nodes, "atspi-cache", unfinished),
            // A fresh frame the cache does not list (yet): read it directly this time.
            FromCache::Unusable | FromCache::NotNow | FromCache::FrameGone => {
                (vec![frame.clone()], "atspi-walk", vec![0])
            }
        };
        let walked = unfinished.len();
        let finished = walk(conn, &mut nodes, unfinished, limits, deadline).await;
        let nodes = depth_first(nodes);
        if !finished {
            // A cut-short read is returned, never reused.
            return Ok((nodes, source, walked, false));
        }
        let mut trees = self.a11y.trees.lock().unwrap_or_else(|e| e.into_inner());
        if trees.len() > 256 {
            trees.clear();
        }
        trees.insert(
            window.id.0,
            KnownTree {
                app,
                count,
                limits: (limits.max_elements, limits.max_depth),
                nodes: nodes.clone(),
                source,
                walked,
            },
        );
        Ok((nodes, source, walked, true))
    }
}

impl Accessibility for X11Desktop {
    fn do_action(&self, element: &ElementHandle, action: &str) -> Result<(), Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "the action", async {
            let a = proxy_at::<ActionProxy>(conn, &o).await?;
            let actions = a.get_actions().await.map_err(dbus_err("GetActions"))?;
            let index = actions
                .iter()
                .position(|x| x.name.eq_ignore_ascii_case(action))
                .ok_or_else(|| {
                    unavailable(format!(
                        "the element has no action \"{action}\"; it has [{}]",
                        actions
                            .iter()
                            .map(|x| x.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })?;
            let done = a
                .do_action(index as i32)
                .await
                .map_err(dbus_err("DoAction"))?;
            if done {
                Ok(())
            } else {
                Err(unavailable(format!("the application refused \"{action}\"")))
            }
        })
    }

    fn states(&self, element: &ElementHandle) -> Result<ElementStates, Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "reading the element's states", async {
            let p = accessible(conn, &o).await?;
            let s = p.get_state().await.map_err(dbus_err("GetState"))?;
            if s.contains(State::Defunct) {
                return Err(Error::ElementGone {
                    reason: "the application reports the element defunct".to_string(),
                });
            }
            let mut flags = states(s, None, Rect::new(0, 0, 0, 0));
            // GTK combo boxes and menus never say "expanded": their popup shows instead.
            if !flags.expanded {
                let role = p.get_role().await.map_err(dbus_err("GetRole"))?;
                if matches!(role, atspi::Role::ComboBox | atspi::Role::Menu) {
                    let children = p.get_children().await.unwrap_or_default();
                    let shown = join_all(children.iter().take(64).map(|c| async move {
                        let c = accessible(conn, c).await.ok()?;
                        c.get_state().await.ok().map(|s| s.contains(State::Showing))
                    }))
                    .await;
                    flags.expanded = shown.into_iter().flatten().any(|showing| showing);
                }
            }
            Ok(flags)
        })
    }

    fn select(&self, element: &ElementHandle) -> Result<(), Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "selecting", async {
            let (selection, index) = container_selection(conn, &o, "selecting elements").await?;
            if selection
                .select_child(index)
                .await
                .map_err(dbus_err("SelectChild"))?
            {
                Ok(())
            } else {
                Err(unavailable("the container refused the selection"))
            }
        })
    }

    fn deselect(&self, element: &ElementHandle) -> Result<(), Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "deselecting", async {
            let (selection, index) = container_selection(conn, &o, "deselecting elements").await?;
            // GTK menu bars implement only clearing the whole selection.
            let done = selection.deselect_child(index).await.unwrap_or(false)
                || selection
                    .clear_selection()
                    .await
                    .map_err(dbus_err("ClearSelection"))?;
            if done {
                Ok(())
            } else {
                Err(unavailable("the container refused to deselect"))
            }
        })
    }

    fn set_value(&self, element: &ElementHandle, value: &str) -> Result<(), Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "setting the value", async {
            let ifaces = accessible(conn, &o)
                .await?
                .get_interfaces()
                .await
                .map_err(dbus_err("GetInterfaces"))?;
            if ifaces.contains(Interface::EditableText) {
                let t = proxy_at::<EditableTextProxy>(conn, &o).await?;
                let done = t
                    .set_text_contents(value)
                    .await
                    .map_err(dbus_err("SetTextContents"))?;
                return if done {
                    Ok(())
                } else {
                    Err(unavailable("the application refused the new text"))
                };
            }
            if ifaces.contains(Interface::Value) {
                let number: f64 = value.trim().parse().map_err(|_| {
                    unavailable(format!(
                        "\"{value}\" is not a number, and this element takes numbers only"
                    ))
                })?;
                let v = proxy_at::<ValueProxy>(conn, &o).await?;
                return v
                    .set_current_value(number)
                    .await
                    .map_err(dbus_err("Value.CurrentValue"));
            }
            Err(unavailable(
                "the element has neither editable text nor a value",
            ))
        })
    }

    fn read_text(&self, element: &ElementHandle) -> Result<String, Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "reading the text", async {
            let ifaces = accessible(conn, &o)
                .await?
                .get_interfaces()
                .await
                .map_err(dbus_err("GetInterfaces"))?;
            if ifaces.contains(Interface::Text) {
                let t = proxy_at::<TextProxy>(conn, &o).await?;
                return t.get_text(0, -1).await.map_err(dbus_err("GetText"));
            }
            if ifaces.contains(Interface::Value) {
                let v = proxy_at::<ValueProxy>(conn, &o).await?;
                return v
                    .current_value()
                    .await
                    .map(|v| format!("{v}"))
                    .map_err(dbus_err("Value.CurrentValue"));
            }
            accessible(conn, &o)
                .await?
                .name()
                .await
                .map_err(dbus_err("Name"))
        })
    }

    fn focus(&self, element: &ElementHandle) -> Result<(), Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "focusing", async {
            let c = proxy_at::<ComponentProxy>(conn, &o).await?;
            if c.grab_focus().await.map_err(dbus_err("GrabFocus"))? {
                Ok(())
            } else {
                Err(unavailable("the application refused the focus"))
            }
        })
    }

    /// # Timeouts
    /// `limits.timeout` bounds the read. At four fifths of it, a walk still going keeps the
    /// levels it read and elements whose details did not arrive come back bare; the tree is
    /// then marked incomplete with a note. When the application answered nothing at all, the
    /// read fails with [`Error::Timeout`] at `limits.timeout`.
    fn tree(&self, window: &WindowInfo, limits: &TreeLimits) -> Result<RawTree, Error> {
        let started = Instant::now();
        let deadline = started + limits.timeout * 4 / 5;
        let conn = &self.a11y.connection()?;
        run(limits.timeout, "reading the accessibility tree", async {
            let t0 = Instant::now();
            // The whole node list of the last read, while the app has sent no event since.
            let settled = !limits.fresh && self.a11y.changes.settled(conn).await;
            let unchanged = self
                .a11y
                .trees
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&window.id.0)
                .filter(|m| {
                    settled
                        && m.limits == (limits.max_elements, limits.max_depth)
                        && self.a11y.changes.count(&m.app) == m.count
                })
                .cloned();
            let (nodes, source, walked, finished, reused) = match unchanged {
                Some(m) => {
                    tracing::debug!(nodes = m.nodes.len(), "tree reused: no events since");
                    (m.nodes, m.source, m.walked, true, true)
                }
                None => {
                    let (nodes, source, walked, finished) =
                        self.read_nodes(conn, window, limits, deadline).await?;
                    (nodes, source, walked, finished, false)
                }
            };
            let t_nodes = t0.elapsed();
            let truncated = nodes.len() >= limits.max_elements;
            let (mut elements, unanswered) = enrich(conn, &nodes, window, deadline).await;
            if reused && unanswered == elements.len() && !elements.is_empty() {
                // Nothing at all came from the application: there is nothing to return.
                return Err(Error::Timeout {
                    operation: "reading the accessibility tree".to_string(),
                    after: limits.timeout,
                });
            }
            let mut notes = Vec::new();
            if !finished {
                notes.push(format!(
                    "timeout_ms {} ran out while reading the tree: showing the {} elements read so far",
                    limits.timeout.as_millis(),
                    nodes.len()
                ));
            }
            if unanswered > 0 {
                notes.push(format!(
                    "timeout_ms {} ran out before {unanswered} of {} elements told their bounds, actions and values; they are listed without them",
                    limits.timeout.as_millis(),
                    elements.len()
                ));
            }
            if let Some(scale) = to_physical(&mut elements, window) {
                notes.push(format!(
                    "the application reports logical coordinates (scale {scale:.2}); element bounds were converted to physical pixels"
                ));
            }
            tracing::debug!(
                nodes_ms = t_nodes.as_secs_f64() * 1e3,
                enrich_ms = (t0.elapsed() - t_nodes).as_secs_f64() * 1e3,
                "accessibility tree phases"
            );
            if source == "atspi-cache" && walked > 0 && walked < nodes.len() {
                notes.push(format!(
                    "{walked} containers not fully in the application's cache were read directly"
                ));
            }
            tracing::debug!(
                elements = elements.len(),
                source,
                ms = started.elapsed().as_secs_f64() * 1e3,
                "accessibility tree"
            );
            Ok(RawTree {
                elements,
                source: source.to_string(),
                complete: !truncated && finished && unanswered == 0,
                notes,
            })
        })
    }
}

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

    #[test]
    fn logical_bounds_of_a_scaled_app_become_physical() {
        // Measured: GTK with GDK_SCALE=2 reports its frame at 159,3 642x533 while the X
        // window is 1282x1065 at 319,7.
        let w = window(Rect::new(319, 7, 1282, 1065));
        let mut els = vec![
            raw(Rect::new(159, 3, 642, 533)),
            raw(Rect::new(200, 100, 50, 20)),
        ];
        let scale = to_physical(&mut els, &w).expect("scaled");
        assert_eq!(scale, 2.0);
        assert_eq!(els[0].bounds, Some(Rect::new(319, 7, 1284, 1066)));
        assert_eq!(els[1].bounds, Some(Rect::new(401, 201, 100, 40)));
        assert!(els[1].states.onscreen);
        // An unscaled app is left alone.
        let mut same = vec![
            raw(Rect::new(319, 7, 1282, 1065)),
            raw(Rect::new(1, 2, 3, 4)),
        ];
        assert_eq!(to_physical(&mut same, &w), None);
        assert_eq!(same[1].bounds, Some(Rect::new(1, 2, 3, 4)));
    }
}
