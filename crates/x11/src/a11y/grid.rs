//! The visible cells of a huge table (`huge`), described with half the requests.
//!
//! A sheet shows hundreds of cells, and every request is served by the application's one UI
//! thread: asking each cell for its role, interfaces and extents as well as its states and name
//! made a cold read of a Calc window as slow as walking the rest of the window twice. The cells
//! of one column share a role and interfaces (one renderer, one cell kind), and a cell's
//! extents are its column's x and width with its row's y and height. So only the first cell of
//! each row and of each column is described in full; every other cell is asked for its states
//! and its name (one `GetAll`, which carries its description and child count too) and placed
//! from its row and column. A cell with no single position (a merged cell, a column header,
//! the focused cell out of view) is described in full.

use super::*;

/// Where a cell sits: `(row, column)`, or `None` for a child that has no single position.
pub(super) type CellAt = Option<(i32, i32)>;

/// What the first cell of a column says for the whole column.
#[derive(Clone, Copy)]
struct Column {
    role: atspi::Role,
    ifaces: InterfaceSet,
    x: i32,
    width: u32,
}

/// Describes `children` of the huge table at `parent`; `cells` gives each child's position.
/// The nodes come back in the children's order; hidden ones (but the focused) are dropped.
pub(super) async fn describe_grid(
    conn: &zbus::Connection,
    children: Vec<ObjectRefOwned>,
    cells: Vec<CellAt>,
    parent: usize,
    depth: u32,
    policy: Shown,
) -> Vec<Node> {
    let full = representatives(&cells);
    let first = join_all(
        children
            .iter()
            .zip(&full)
            .enumerate()
            .filter(|(_, (_, full))| **full)
            .map(|(i, (object, _))| async move {
                (
                    i,
                    in_full(conn, object.clone(), parent, depth, policy).await,
                )
            }),
    )
    .await;
    let mut nodes: Vec<Option<Node>> = vec![None; children.len()];
    let mut columns: HashMap<i32, Column> = HashMap::new();
    let mut rows: HashMap<i32, (i32, u32)> = HashMap::new();
    for (i, node) in first {
        if let (Some(node), Some((row, col))) = (&node, cells[i])
            && let Some(b) = node.bounds
        {
            columns.entry(col).or_insert(Column {
                role: node.role,
                ifaces: node.ifaces,
                x: b.x,
                width: b.width,
            });
            rows.entry(row).or_insert((b.y, b.height));
        }
        nodes[i] = node;
    }
    let rest = join_all(
        children
            .into_iter()
            .zip(cells)
            .zip(full)
            .enumerate()
            .filter(|(_, (_, full))| !*full)
            .map(|(i, ((object, at), _))| {
                let shape = at.and_then(|(row, col)| Some((*columns.get(&col)?, *rows.get(&row)?)));
                async move {
                    let node = match shape {
                        Some((column, row)) => {
                            placed(conn, object, column, row, parent, depth, policy).await
                        }
                        // Its column's or row's first cell is hidden or unanswered.
                        None => in_full(conn, object, parent, depth, policy).await,
                    };
                    (i, node)
                }
            }),
    )
    .await;
    for (i, node) in rest {
        nodes[i] = node;
    }
    (0u32..)
        .zip(nodes)
        .filter_map(|(rank, n)| n.map(|n| Node { rank, ..n }))
        .collect()
}

/// Which cells are described in full: those with no position and the first cell (by row) of
/// each column and (by column) of each row.
fn representatives(cells: &[CellAt]) -> Vec<bool> {
    let mut first_row: HashMap<i32, i32> = HashMap::new();
    let mut first_col: HashMap<i32, i32> = HashMap::new();
    for &(row, col) in cells.iter().flatten() {
        let r = first_row.entry(col).or_insert(row);
        *r = (*r).min(row);
        let c = first_col.entry(row).or_insert(col);
        *c = (*c).min(col);
    }
    cells
        .iter()
        .map(|at| match at {
            None => true,
            Some((row, col)) => first_row[col] == *row || first_col[row] == *col,
        })
        .collect()
}

/// A cell (or any child) described as the walk describes it, with its extents.
async fn in_full(
    conn: &zbus::Connection,
    object: ObjectRefOwned,
    parent: usize,
    depth: u32,
    policy: Shown,
) -> Option<Node> {
    let node = describe_shown(conn, object, parent, depth, policy).await?;
    let bounds = if node.ifaces.contains(Interface::Component) {
        screen_bounds(conn, &node.object).await
    } else {
        None
    };
    Some(Node { bounds, ..node })
}

/// A cell described by its states and name, its role, interfaces and extents from its column
/// and row.
async fn placed(
    conn: &zbus::Connection,
    object: ObjectRefOwned,
    column: Column,
    (y, height): (i32, u32),
    parent: usize,
    depth: u32,
    policy: Shown,
) -> Option<Node> {
    let p = accessible(conn, &object).await.ok()?;
    let (states, (name, description, children)) =
        futures_lite::future::zip(p.get_state(), basics(conn, &object, &p)).await;
    let states = states.ok()?;
    (shown(states, policy) || states.contains(State::Focused)).then_some(())?;
    Some(Node {
        object,
        parent: Some(parent),
        depth,
        role: column.role,
        name,
        description,
        states,
        ifaces: column.ifaces,
        summary: None,
        children,
        rank: 0,
        bounds: Some(Rect::new(column.x, y, column.width, height)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_cell_of_each_row_and_column_is_read_in_full() {
        // A 3×3 range from B2, a header before it and a merged cell without a position.
        let mut cells: Vec<CellAt> = vec![None];
        for row in 1..=3 {
            for col in 1..=3 {
                cells.push(Some((row, col)));
            }
        }
        cells.push(None);
        let full = representatives(&cells);
        let read: Vec<CellAt> = cells
            .iter()
            .zip(&full)
            .filter(|(_, f)| **f)
            .map(|(c, _)| *c)
            .collect();
        assert_eq!(
            read,
            vec![
                None,
                Some((1, 1)),
                Some((1, 2)),
                Some((1, 3)),
                Some((2, 1)),
                Some((3, 1)),
                None
            ]
        );
    }
}
