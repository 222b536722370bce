//! 64-bit difference hash (dHash) of a frame region: the region is shrunk to 9×8 grayscale
//! cells by area averaging and each bit says whether a cell is brighter than its right-hand
//! neighbour (8 comparisons per row, 8 rows).
//!
//! Unlike an average hash, which keeps only "brighter or darker than the mean", dHash keeps
//! the direction of the gradient, so two unrelated flat windows rarely share a fingerprint.
//! Hamming distance between two hashes is a *weak* signal: recognition in
//! [`super::store`] only counts it when the title or the process agrees too.
//!
//! Privacy: this module hashes the pixels it is given and nothing else. Callers pass the frame
//! *after* the capture pipeline has painted its privacy masks, so masked content never reaches
//! the hash (and a hash never changes with what a mask hides).

use deskpilot_backend::{Frame, PixelFormat};
use deskpilot_types::Rect;
use serde::{Deserialize, Serialize};

/// Cells across (one more than the 8 comparisons per row).
const COLS: usize = 9;
/// Cell rows.
const ROWS: usize = 8;

/// The hash distance under which two windows' pixels count as "the same" (DesktopOS uses 6).
pub const HASH_THRESHOLD: u32 = 6;

/// A 64-bit dHash: bit `row * 8 + col` is set when cell `col` of `row` is brighter than cell
/// `col + 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Dhash(pub u64);

impl Dhash {
    /// Number of differing bits, 0 (identical) to 64.
    pub fn distance(self, other: Dhash) -> u32 {
        (self.0 ^ other.0).count_ones()
    }
}

impl std::fmt::Display for Dhash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// The half-open pixel range `[start, end)` of cell `i` of `n` over `len` pixels: an even
/// split, never empty (a region narrower than the cell count repeats pixels).
fn span(i: usize, n: usize, len: usize) -> (usize, usize) {
    let start = i * len / n;
    let end = ((i + 1) * len / n).max(start + 1).min(len.max(1));
    (start.min(len - 1), end)
}

/// dHash of the part of `region` (physical pixels) inside `frame`; `None` when they do not
/// overlap. `frame` must already carry its privacy masks (see the module doc).
pub fn dhash<D: AsRef<[u8]>>(frame: &Frame<D>, region: Rect) -> Option<Dhash> {
    let r = region.intersect(&frame.rect)?;
    if r.is_empty() {
        return None;
    }
    let (w, h) = (r.width as usize, r.height as usize);
    let stride = frame.rect.width as usize * 4;
    let x0 = (r.x as i64 - frame.rect.x as i64) as usize;
    let y0 = (r.y as i64 - frame.rect.y as i64) as usize;
    let (ri, gi, bi) = match frame.format {
        PixelFormat::Bgrx => (2, 1, 0),
        PixelFormat::Rgba => (0, 1, 2),
    };
    let bytes = frame.bytes();
    let mut sum = [[0u64; COLS]; ROWS];
    let mut count = [[0u64; COLS]; ROWS];
    let cols: [(usize, usize); COLS] = std::array::from_fn(|c| span(c, COLS, w));
    for (row, (sums, counts)) in sum.iter_mut().zip(count.iter_mut()).enumerate() {
        let (ys, ye) = span(row, ROWS, h);
        for (col, (s, c)) in sums.iter_mut().zip(counts.iter_mut()).enumerate() {
            let (xs, xe) = cols[col];
            // Luma is linear: sum each channel, weigh once per cell (BT.601, scaled by 1000).
            let mut ch = [0u64; 4];
            for y in ys..ye {
                let at = (y0 + y) * stride + (x0 + xs) * 4;
                for px in bytes[at..at + (xe - xs) * 4].chunks_exact(4) {
                    ch[0] += px[0] as u64;
                    ch[1] += px[1] as u64;
                    ch[2] += px[2] as u64;
                }
            }
            *s = 299 * ch[ri] + 587 * ch[gi] + 114 * ch[bi];
            *c = ((ye - ys) * (xe - xs)) as u64;
        }
    }
    let mut bits = 0u64;
    for row in 0..ROWS {
        for col in 0..COLS - 1 {
            // mean(left) > mean(right), compared without dividing.
            let left = sum[row][col] as u128 * count[row][col + 1] as u128;
            let right = sum[row][col + 1] as u128 * count[row][col] as u128;
            if left > right {
                bits |= 1 << (row * 8 + col);
            }
        }
    }
    Some(Dhash(bits))
}

/// Hamming distance between two hashes (0 identical, 64 opposite).
pub fn hamming(a: Dhash, b: Dhash) -> u32 {
    a.distance(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BGRX frame of `w`×`h` at `(x, y)` whose pixel at column `c`, row `r` has grey `f(c, r)`.
    fn frame(x: i32, y: i32, w: u32, h: u32, f: impl Fn(u32, u32) -> u8) -> Frame {
        let mut data = Vec::with_capacity((w * h * 4) as usize);
        for r in 0..h {
            for c in 0..w {
                let g = f(c, r);
                data.extend_from_slice(&[g, g, g, 255]);
            }
        }
        Frame {
            rect: Rect::new(x, y, w, h),
            format: PixelFormat::Bgrx,
            data,
        }
    }

    /// A busy test picture: blocks whose brightness depends on position.
    fn picture(c: u32, r: u32, w: u32, h: u32, variant: u32) -> u8 {
        let (bx, by) = (c * 9 / w, r * 8 / h);
        ((bx * 37 + by * 91 + variant * 53).wrapping_mul(2654435761) >> 24) as u8
    }

    #[test]
    fn known_patterns_hash_to_known_values() {
        let cases: &[(&str, Frame, u64)] = &[
            ("uniform", frame(0, 0, 90, 80, |_, _| 128), 0),
            (
                "brighter to the right",
                frame(0, 0, 90, 80, |c, _| c as u8),
                0,
            ),
            (
                "darker to the right",
                frame(0, 0, 90, 80, |c, _| 255 - c as u8),
                u64::MAX,
            ),
            (
                "top half darker to the right",
                frame(
                    0,
                    0,
                    90,
                    80,
                    |c, r| if r < 40 { 255 - c as u8 } else { c as u8 },
                ),
                0x0000_0000_FFFF_FFFF,
            ),
            (
                "tiny 3x2 region repeats pixels",
                frame(0, 0, 3, 2, |c, _| 200 - 50 * c as u8),
                0x2424_2424_2424_2424,
            ),
        ];
        for (name, f, want) in cases {
            assert_eq!(dhash(f, f.rect), Some(Dhash(*want)), "{name}");
        }
    }

    #[test]
    fn hash_survives_scale_brightness_and_offset_origin() {
        let base = frame(0, 0, 900, 640, |c, r| picture(c, r, 900, 640, 1));
        let small = frame(-300, -20, 450, 320, |c, r| picture(c, r, 450, 320, 1));
        let bright = frame(0, 0, 900, 640, |c, r| picture(c, r, 900, 640, 1) / 2 + 60);
        let other = frame(0, 0, 900, 640, |c, r| picture(c, r, 900, 640, 7));
        let h = dhash(&base, base.rect).unwrap();
        assert!(h.distance(dhash(&small, small.rect).unwrap()) <= 2);
        assert!(h.distance(dhash(&bright, bright.rect).unwrap()) <= 2);
        assert!(hamming(h, dhash(&other, other.rect).unwrap()) > 12);
    }

    #[test]
    fn region_is_clipped_to_the_frame_and_disjoint_is_none() {
        let f = frame(10, 10, 100, 100, |c, _| c as u8);
        assert_eq!(dhash(&f, Rect::new(500, 500, 10, 10)), None);
        assert_eq!(
            dhash(&f, Rect::new(0, 0, 60, 60)),
            dhash(&f, Rect::new(10, 10, 50, 50))
        );
    }

    #[test]
    fn masked_pixels_do_not_reach_the_hash() {
        // Two frames that differ only inside the masked rectangle hash the same once masked.
        let secret = Rect::new(20, 20, 40, 30);
        let mut a = frame(0, 0, 200, 100, |c, r| picture(c, r, 200, 100, 3));
        let mut b = frame(0, 0, 200, 100, |c, r| {
            if secret.contains(deskpilot_types::Point::new(c as i32, r as i32)) {
                255 - picture(c, r, 200, 100, 3)
            } else {
                picture(c, r, 200, 100, 3)
            }
        });
        assert_ne!(dhash(&a, a.rect), dhash(&b, b.rect));
        a.fill(secret, [0, 0, 0]);
        b.fill(secret, [0, 0, 0]);
        assert_eq!(dhash(&a, a.rect), dhash(&b, b.rect));
    }

    #[test]
    #[allow(clippy::print_stderr)]
    fn cost_on_a_full_hd_frame() {
        let f = frame(0, 0, 1920, 1080, |c, r| ((c ^ r) & 0xff) as u8);
        let runs = 5;
        let start = std::time::Instant::now();
        let mut last = None;
        for _ in 0..runs {
            last = dhash(&f, f.rect);
        }
        let each = start.elapsed() / runs;
        assert!(last.is_some());
        eprintln!("dhash of a 1920x1080 BGRX frame: {each:?} per hash ({runs} runs)");
    }
}
