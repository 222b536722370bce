//! The frame signature: the average colour of every 16×16-pixel cell of a masked,
//! undecorated frame (every other row sampled, ~1 ms for a full HD screen), and the rule that
//! tells two apart: the cells that moved do not fit in a caret-sized box (2×4 cells), leaving
//! out cells the overlay paints. Pure functions of pixels: `verify`, `compare` and `wait_for
//! stable` are built on them, and the engine's capture path stores one per capture.

use deskpilot_backend::Frame;
use deskpilot_types::Rect;

/// Side of a signature cell, in physical pixels.
const CELL: u32 = 16;
/// Most cells per side (a 4K screen still gets 16-pixel cells; larger ones coarser).
const MAX_CELLS: u32 = 320;
/// The largest change that is still "nothing": a caret, in cells (columns, rows).
const CARET_CELLS: (u32, u32) = (2, 4);
/// A cell moved when one of its average channels moved by more than this.
const CELL_TOLERANCE: u8 = 2;

/// A frame reduced to cell averages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signature {
    rect: Rect,
    cols: u32,
    rows: u32,
    cells: Vec<[u8; 3]>,
}

/// How two signatures of the same rectangle differ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    /// Whether the moved cells are more than a caret.
    pub changed: bool,
    /// Share of cells that moved.
    pub ratio: f64,
}

/// Cell boundaries along one axis: `n + 1` offsets from 0 to `len`.
fn edges(len: u32, n: u32) -> impl Iterator<Item = u32> {
    (0..=n).map(move |k| (k as u64 * len as u64 / n.max(1) as u64) as u32)
}

fn grid(rect: Rect) -> (u32, u32) {
    (
        rect.width.div_ceil(CELL).clamp(1, MAX_CELLS),
        rect.height.div_ceil(CELL).clamp(1, MAX_CELLS),
    )
}

/// The signature of a frame: per cell, the average of its pixels on every other row.
pub(crate) fn signature<D: AsRef<[u8]>>(frame: &Frame<D>) -> Signature {
    let rect = frame.rect;
    let (cols, rows) = grid(rect);
    let (w, h) = (rect.width as usize, rect.height as usize);
    let mut sums = vec![[0u32; 4]; (cols * rows) as usize];
    let xs: Vec<usize> = edges(rect.width, cols).map(|e| e as usize * 4).collect();
    for y in (0..h).step_by(2) {
        let Some(line) = frame.bytes().get(y * w * 4..(y + 1) * w * 4) else {
            break;
        };
        let row = y * rows as usize / h.max(1);
        let sums = &mut sums[row * cols as usize..(row + 1) * cols as usize];
        for (c, s) in sums.iter_mut().enumerate() {
            let span = &line[xs[c]..xs[c + 1]];
            let (mut a, mut b, mut d) = (0u32, 0u32, 0u32);
            for px in span.chunks_exact(4) {
                a += u32::from(px[0]);
                b += u32::from(px[1]);
                d += u32::from(px[2]);
            }
            s[0] += a;
            s[1] += b;
            s[2] += d;
            s[3] += (span.len() / 4) as u32;
        }
    }
    let cells = sums
        .iter()
        .map(|s| {
            let n = s[3].max(1);
            [(s[0] / n) as u8, (s[1] / n) as u8, (s[2] / n) as u8]
        })
        .collect();
    Signature {
        rect,
        cols,
        rows,
        cells,
    }
}

/// Compares two signatures of the same rectangle, leaving out cells touching `ignore` (the
/// overlay, which may have appeared or gone between the two). Signatures of different
/// rectangles are all change.
pub(crate) fn difference(a: &Signature, b: &Signature, ignore: &[Rect]) -> Difference {
    if a.rect != b.rect || a.cells.len() != b.cells.len() {
        return Difference {
            changed: true,
            ratio: 1.0,
        };
    }
    let r = a.rect;
    let xs: Vec<u32> = edges(r.width, a.cols).collect();
    let ys: Vec<u32> = edges(r.height, a.rows).collect();
    let cell = |c: u32, row: u32| {
        Rect::new(
            r.x + xs[c as usize] as i32,
            r.y + ys[row as usize] as i32,
            xs[c as usize + 1] - xs[c as usize],
            ys[row as usize + 1] - ys[row as usize],
        )
    };
    let mut moved = 0usize;
    let (mut c0, mut r0, mut c1, mut r1) = (u32::MAX, u32::MAX, 0, 0);
    for (k, (p, q)) in a.cells.iter().zip(&b.cells).enumerate() {
        if !p
            .iter()
            .zip(q)
            .any(|(x, y)| x.abs_diff(*y) > CELL_TOLERANCE)
        {
            continue;
        }
        let (c, row) = (k as u32 % a.cols, k as u32 / a.cols);
        if ignore.iter().any(|g| g.intersect(&cell(c, row)).is_some()) {
            continue;
        }
        moved += 1;
        (c0, r0, c1, r1) = (c0.min(c), r0.min(row), c1.max(c), r1.max(row));
    }
    let caret_sized = moved == 0 || (c1 - c0 < CARET_CELLS.0 && r1 - r0 < CARET_CELLS.1);
    Difference {
        changed: !caret_sized,
        ratio: moved as f64 / a.cells.len().max(1) as f64,
    }
}
