//! Containers too big to enumerate: a spreadsheet's table (LibreOffice Calc reports
//! 2,147,483,647 children and, asked for them, builds every cell until it runs out of memory),
//! a list or tree view with 100,000 rows, a log view with a long history.
//!
//! Before any node is asked for its children its count is looked at ([`too_many`]). Above the
//! bound only what is on screen is read: the toolkit's own hit test finds the children at the
//! container's visible corners, their indexes give the visible range (rows and columns through
//! the `Table` interface, child indexes otherwise), and only that range is fetched, one
//! `GetAccessibleAt` / `GetChildAtIndex` per child, at most [`MAX_VISIBLE`] of them. The rest is
//! described in one line on the container (`1,048,576×16,384, showing A1:O33`).
//!
//! **Invariant:** `GetChildren` is never sent to a container [`too_many`] refuses.

use atspi::proxy::table::TableProxy;

use super::*;

/// Above this many children a container is read only where it is on screen.
pub(super) const MAX_CHILDREN: i32 = 500;
/// The same bound for a container that manages its descendants (it creates each child object
/// when asked for it, so every child read costs the application an allocation).
pub(super) const MAX_MANAGED: i32 = 100;
/// At most this many children (cells) of a huge container are read.
pub(super) const MAX_VISIBLE: usize = 500;
/// How many children are read from the start when the toolkit's hit test says nothing.
const BLIND: i32 = 100;

/// Whether a container with `count` children must not be asked for all of them.
pub(super) fn too_many(count: i32, states: StateSet) -> bool {
    count > MAX_CHILDREN || (states.contains(State::ManagesDescendants) && count > MAX_MANAGED)
}

/// What was read of a huge container: the children on screen and one line about the rest.
pub(super) struct Visible {
    pub children: Vec<ObjectRefOwned>,
    pub summary: String,
    /// Each child's place in a table (`grid`); empty when the container is read as a list.
    pub cells: Vec<CellAt>,
}

/// A cell range, inclusive, zero-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cells {
    pub rows: (i32, i32),
    pub cols: (i32, i32),
}

impl Cells {
    fn count(&self) -> usize {
        ((self.rows.1 - self.rows.0 + 1).max(0) as usize)
            * ((self.cols.1 - self.cols.0 + 1).max(0) as usize)
    }
}

/// Where a hit at a corner of the container landed: the cell's row and column and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Corner {
    pub row: i32,
    pub col: i32,
    pub size: Option<(u32, u32)>,
}

/// The cells to read: from the cell at the top-left corner to the one at the bottom-right
/// (estimated from the first cell's size when the hit test found nothing there), clipped to
/// the table and shrunk proportionally from the top-left to at most `cap` cells.
pub(super) fn visible_cells(
    (rows, cols): (i32, i32),
    first: Option<Corner>,
    last: Option<Corner>,
    view: Rect,
    cap: usize,
) -> Option<Cells> {
    if rows <= 0 || cols <= 0 {
        return None;
    }
    // No child at the top-left (a header there): as many rows and columns before the last
    // visible cell as the view holds of its size.
    let first = match (first, last) {
        (Some(f), _) => f,
        (
            None,
            Some(Corner {
                row,
                col,
                size: Some((w, h)),
            }),
        ) => Corner {
            // One more of each: the cells at the edges may show in part.
            row: row - (view.height / h.max(1)) as i32,
            col: col - (view.width / w.max(1)) as i32,
            size: Some((w, h)),
        },
        (None, _) => Corner {
            row: 0,
            col: 0,
            size: None,
        },
    };
    let (r0, c0) = (first.row.clamp(0, rows - 1), first.col.clamp(0, cols - 1));
    let (r1, c1) = match last {
        Some(l) if l.row >= r0 && l.col >= c0 => (l.row, l.col),
        _ => {
            let (w, h) = first.size.unwrap_or((64, 16));
            (
                r0 + (view.height / h.max(1)) as i32,
                c0 + (view.width / w.max(1)) as i32,
            )
        }
    };
    let mut cells = Cells {
        rows: (r0, r1.min(rows - 1)),
        cols: (c0, c1.min(cols - 1)),
    };
    if cells.count() > cap {
        let shrink = (cap as f64 / cells.count() as f64).sqrt();
        let keep = |(a, b): (i32, i32)| {
            (
                a,
                a + (((b - a + 1) as f64 * shrink).floor() as i32).max(1) - 1,
            )
        };
        cells.rows = keep(cells.rows);
        cells.cols = keep(cells.cols);
        while cells.count() > cap && cells.rows.1 > cells.rows.0 {
            cells.rows.1 -= 1;
        }
    }
    Some(cells)
}

/// `n` with thousands separators: 1,048,576.
pub(super) fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// Whether a cell name is a spreadsheet address (`A1`, `XFD1048576`).
fn address(name: &str) -> bool {
    let letters = name.chars().take_while(|c| c.is_ascii_uppercase()).count();
    (1..=3).contains(&letters)
        && name.len() > letters
        && name[letters..].chars().all(|c| c.is_ascii_digit())
}

/// The line describing a huge table: its size and the range read, by cell address where the
/// cells are named by address (a spreadsheet), else by row and column numbers.
pub(super) fn table_summary(
    (rows, cols): (i32, i32),
    cells: Cells,
    (first, last): (&str, &str),
) -> String {
    let size = format!("{}×{}", thousands(rows.into()), thousands(cols.into()));
    if address(first) && address(last) {
        return format!("{size}, showing {first}:{last}");
    }
    format!(
        "{size}, showing rows {}–{}, columns {}–{}",
        thousands(i64::from(cells.rows.0) + 1),
        thousands(i64::from(cells.rows.1) + 1),
        thousands(i64::from(cells.cols.0) + 1),
        thousands(i64::from(cells.cols.1) + 1)
    )
}

/// The line describing a huge container read by child index.
pub(super) fn list_summary(count: i32, shown: Option<(i32, i32)>) -> String {
    match shown {
        Some((a, b)) => format!(
            "{} items, showing {}–{}",
            thousands(count.into()),
            thousands(i64::from(a) + 1),
            thousands(i64::from(b) + 1)
        ),
        None => format!("{} items, none read", thousands(count.into())),
    }
}

/// The direct child of `container` that `hit` (a descendant from a hit test) lies in.
async fn child_of(
    conn: &zbus::Connection,
    container: &ObjectRefOwned,
    mut hit: ObjectRefOwned,
) -> Option<ObjectRefOwned> {
    for _ in 0..8 {
        if hit.is_null() || &hit == container {
            return None;
        }
        let parent = accessible(conn, &hit).await.ok()?.parent().await.ok()?;
        if &parent == container {
            return Some(hit);
        }
        hit = parent;
    }
    None
}

/// The child of the container under each point, with its index in the container.
async fn corner_children(
    conn: &zbus::Connection,
    container: &ObjectRefOwned,
    corners: [Vec<(i32, i32)>; 2],
) -> Option<[Option<(ObjectRefOwned, i32)>; 2]> {
    let c = proxy_at::<ComponentProxy>(conn, container).await.ok()?;
    let hits = join_all(corners.map(|points| {
        let c = &c;
        async move {
            // The first point that names a child: a column header or an empty margin at the
            // corner itself names nothing (GTK's tree view).
            for (x, y) in points {
                let Ok(hit) = c.get_accessible_at_point(x, y, CoordType::Screen).await else {
                    continue;
                };
                let Some(child) = child_of(conn, container, hit).await else {
                    continue;
                };
                let Ok(p) = accessible(conn, &child).await else {
                    continue;
                };
                if let Ok(index) = p.get_index_in_parent().await {
                    return Some((child, index));
                }
            }
            None
        }
    }))
    .await;
    let mut hits = hits.into_iter();
    Some([hits.next().flatten(), hits.next().flatten()])
}

/// Reads the part of a huge container that is on screen; see the module documentation.
/// At most `cap` (and never more than [`MAX_VISIBLE`]) children are read.
pub(super) async fn read_visible(
    conn: &zbus::Connection,
    node: &Node,
    count: i32,
    cap: usize,
    focused: Option<&str>,
) -> Visible {
    let cap = cap.clamp(1, MAX_VISIBLE);
    let t = Instant::now();
    let view = screen_bounds(conn, &node.object).await;
    let visible = match view {
        Some(view) if node.ifaces.contains(Interface::Table) => {
            match read_table(conn, node, view, cap).await {
                Some(v) => v,
                None => read_list(conn, node, count, Some(view), cap).await,
            }
        }
        _ => read_list(conn, node, count, view, cap).await,
    };
    let mut visible = visible;
    if let Some(path) = focused
        && !visible.children.iter().any(|c| c.path_as_str() == path)
        && let Some(cell) = focused_child(conn, &node.object, path).await
    {
        // The focused cell scrolled out of view is still what the keyboard acts on.
        visible.children.push(cell);
        if !visible.cells.is_empty() {
            visible.cells.push(None);
        }
    }
    tracing::debug!(
        count,
        read = visible.children.len(),
        summary = %visible.summary,
        ms = t.elapsed().as_secs_f64() * 1e3,
        "huge container read where it shows"
    );
    visible
}

/// The object at `path` in the container's application, if it is a child of the container.
async fn focused_child(
    conn: &zbus::Connection,
    container: &ObjectRefOwned,
    path: &str,
) -> Option<ObjectRefOwned> {
    let name = zbus::names::UniqueName::try_from(container.name_as_str()?.to_string()).ok()?;
    let path = zbus::zvariant::ObjectPath::try_from(path.to_string()).ok()?;
    let o = ObjectRefOwned::new(atspi::ObjectRef::Owned { name, path });
    let parent = accessible(conn, &o).await.ok()?.parent().await.ok()?;
    (&parent == container).then_some(o)
}

/// Points inside the corners of `view` where a hit test finds its first and last visible
/// child, each corner's tried in order: the corner itself, then a little further in (past a
/// column header).
pub(super) fn corners(view: Rect) -> [Vec<(i32, i32)>; 2] {
    let (x0, y0) = (view.x + 1, view.y + 1);
    let (x1, y1) = (view.right() as i32 - 2, view.bottom() as i32 - 2);
    let h = view.height as i32;
    [
        vec![(x0, y0), (x0, y0 + h / 16), (x0, y0 + h / 8)],
        vec![(x1, y1), (x1, y1 - h / 16)],
    ]
}

async fn read_table(
    conn: &zbus::Connection,
    node: &Node,
    view: Rect,
    cap: usize,
) -> Option<Visible> {
    let table = proxy_at::<TableProxy>(conn, &node.object).await.ok()?;
    let (size, hits) = futures_lite::future::zip(
        futures_lite::future::zip(table.n_rows(), table.n_columns()),
        corner_children(conn, &node.object, corners(view)),
    )
    .await;
    let size = (size.0.ok()?, size.1.ok()?);
    let [first, last] = hits.unwrap_or([None, None]);
    let corner = |hit: Option<(ObjectRefOwned, i32)>| {
        let table = &table;
        async move {
            let (child, index) = hit?;
            let ((row, col), size) = futures_lite::future::zip(
                futures_lite::future::zip(
                    table.get_row_at_index(index),
                    table.get_column_at_index(index),
                ),
                async {
                    screen_bounds(conn, &child)
                        .await
                        .map(|b| (b.width, b.height))
                },
            )
            .await;
            Some(Corner {
                row: row.ok()?,
                col: col.ok()?,
                size,
            })
        }
    };
    let (first, last) = futures_lite::future::zip(corner(first), corner(last)).await;
    let cells = visible_cells(size, first, last, view, cap)?;
    let wanted: Vec<(i32, i32)> = (cells.rows.0..=cells.rows.1)
        .flat_map(|r| (cells.cols.0..=cells.cols.1).map(move |c| (r, c)))
        .collect();
    // The visible columns' headers first (GTK's tree view has them among its children).
    let headers = join_all((cells.cols.0..=cells.cols.1).map(|c| {
        let table = &table;
        async move { table.get_column_header(c).await.ok() }
    }));
    let got = join_all(wanted.iter().map(|&(r, c)| {
        let table = &table;
        async move { table.get_accessible_at(r, c).await.ok() }
    }));
    let (headers, got) = futures_lite::future::zip(headers, got).await;
    let mut children: Vec<ObjectRefOwned> = Vec::with_capacity(got.len());
    let mut places: Vec<CellAt> = Vec::with_capacity(got.len());
    let headers: Vec<ObjectRefOwned> = headers
        .into_iter()
        .flatten()
        .filter(|o| !o.is_null())
        .collect();
    for (o, &at) in got.into_iter().zip(&wanted) {
        let Some(o) = o.filter(|o| !o.is_null()) else {
            continue;
        };
        // A merged cell answers for every position it spans: listed once, with no one place.
        match children.iter().position(|c| c == &o) {
            Some(i) => places[i] = None,
            None => {
                children.push(o);
                places.push(Some(at));
            }
        }
    }
    let name = |o: Option<&ObjectRefOwned>| {
        let o = o.cloned();
        async move {
            let o = o?;
            accessible(conn, &o).await.ok()?.name().await.ok()
        }
    };
    let (a, b) = futures_lite::future::zip(name(children.first()), name(children.last())).await;
    let mut children = children;
    for (i, h) in headers.into_iter().enumerate() {
        if !children.contains(&h) {
            children.insert(i.min(children.len()), h);
            places.insert(i.min(places.len()), None);
        }
    }
    let summary = table_summary(
        size,
        cells,
        (a.as_deref().unwrap_or(""), b.as_deref().unwrap_or("")),
    );
    Some(Visible {
        children,
        summary,
        cells: places,
    })
}

async fn read_list(
    conn: &zbus::Connection,
    node: &Node,
    count: i32,
    view: Option<Rect>,
    cap: usize,
) -> Visible {
    let hits = match view {
        Some(view) => corner_children(conn, &node.object, corners(view))
            .await
            .unwrap_or([None, None]),
        None => [None, None],
    };
    let [first, last] = hits.map(|h| h.map(|(_, i)| i));
    let range = visible_indexes(count, first, last, cap);
    let got = join_all((range.0..=range.1).map(|i| {
        let object = node.object.clone();
        async move {
            accessible(conn, &object)
                .await
                .ok()?
                .get_child_at_index(i)
                .await
                .ok()
                .filter(|o| !o.is_null())
        }
    }))
    .await;
    let children: Vec<ObjectRefOwned> = got.into_iter().flatten().collect();
    let summary = list_summary(count, (!children.is_empty()).then_some(range));
    Visible {
        children,
        summary,
        cells: Vec::new(),
    }
}

/// The child indexes to read: from the first visible child to the last (or [`BLIND`] children
/// on from the first when the last is unknown), at most `cap`.
pub(super) fn visible_indexes(
    count: i32,
    first: Option<i32>,
    last: Option<i32>,
    cap: usize,
) -> (i32, i32) {
    let a = first.unwrap_or(0).clamp(0, count.max(1) - 1);
    let b = match last {
        Some(b) if b >= a => b,
        _ => a + BLIND - 1,
    };
    let b = b.min(a + cap.max(1) as i32 - 1).min(count - 1);
    (a, b.max(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: a LibreOffice Calc sheet (7.4, gtk3) reports 2,147,483,647 children with
    /// `manages descendants`; `GetChildren` on it kept soffice at 100% CPU building cells.
    #[test]
    fn huge_and_managing_containers_are_never_enumerated() {
        let calc = StateSet::new(
            State::Editable
                | State::Enabled
                | State::Focusable
                | State::Focused
                | State::Multiselectable
                | State::Showing
                | State::Visible
                | State::ManagesDescendants,
        );
        assert!(too_many(i32::MAX, calc));
        assert!(too_many(120, calc));
        assert!(!too_many(40, calc));
        let plain = StateSet::new(State::Showing | State::Visible);
        assert!(too_many(100_000, plain));
        assert!(!too_many(300, plain));
        assert!(!too_many(0, plain));
    }

    /// Recorded on a 1600×1000 desktop: the sheet's extents are 41,197 1486×719; the hit at
    /// its top-left corner is A1 (index 0, row 0, column 0, 82×17), at the bottom-right S43
    /// (index 688146 = 42 × 16384 + 18).
    #[test]
    fn a_calc_sheet_is_read_where_it_shows() {
        let view = Rect::new(41, 197, 1486, 719);
        let size = (1_048_576, 16_384);
        let first = Corner {
            row: 0,
            col: 0,
            size: Some((82, 17)),
        };
        let last = Corner {
            row: 42,
            col: 18,
            size: None,
        };
        let all = visible_cells(size, Some(first), Some(last), view, 10_000).expect("cells");
        assert_eq!(
            all,
            Cells {
                rows: (0, 42),
                cols: (0, 18)
            }
        );
        let capped =
            visible_cells(size, Some(first), Some(last), view, MAX_VISIBLE).expect("cells");
        assert!(capped.count() <= MAX_VISIBLE, "{capped:?}");
        assert_eq!(
            capped,
            Cells {
                rows: (0, 32),
                cols: (0, 13)
            }
        );
        // No hit at the bottom-right (an empty area below a short table): estimated from
        // the first cell's size, clipped to the table.
        let est = visible_cells((10, 3), Some(first), None, view, MAX_VISIBLE).expect("cells");
        assert_eq!(
            est,
            Cells {
                rows: (0, 9),
                cols: (0, 2)
            }
        );
        assert_eq!(visible_cells((0, 0), None, None, view, MAX_VISIBLE), None);
        // Recorded, GTK 3 tree view of 100,000 rows scrolled to row 50,000: the top-left corner
        // is its column header (no child), the bottom-right cell is row 50,024, column 1,
        // 416×21, in a view of 500×600.
        let gtk = visible_cells(
            (100_000, 2),
            None,
            Some(Corner {
                row: 50_024,
                col: 1,
                size: Some((416, 21)),
            }),
            Rect::new(1099, 20, 500, 600),
            MAX_VISIBLE,
        )
        .expect("cells");
        assert_eq!(
            gtk,
            Cells {
                rows: (49_996, 50_024),
                cols: (0, 1)
            }
        );
        assert_eq!(
            table_summary(size, capped, ("A1", "N33")),
            "1,048,576×16,384, showing A1:N33"
        );
        assert_eq!(
            table_summary(
                (100_000, 3),
                Cells {
                    rows: (10, 40),
                    cols: (0, 2)
                },
                ("", "x")
            ),
            "100,000×3, showing rows 11–41, columns 1–3"
        );
    }

    #[test]
    fn a_long_list_is_read_between_its_visible_ends() {
        assert_eq!(
            visible_indexes(100_000, Some(500), Some(530), MAX_VISIBLE),
            (500, 530)
        );
        assert_eq!(
            visible_indexes(100_000, None, None, MAX_VISIBLE),
            (0, BLIND - 1)
        );
        assert_eq!(
            visible_indexes(100_000, Some(10), Some(5_000), MAX_VISIBLE),
            (10, 509)
        );
        assert_eq!(
            visible_indexes(600, Some(590), None, MAX_VISIBLE),
            (590, 599)
        );
        assert_eq!(
            list_summary(100_000, Some((500, 530))),
            "100,000 items, showing 501–531"
        );
        assert_eq!(thousands(2_147_483_647), "2,147,483,647");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
    }
}
