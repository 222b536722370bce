//! Integer geometry in physical virtual-desktop pixels.
//!
//! `Rect` is half-open: it covers `x..x+width` and `y..y+height`. Origins may be negative
//! (a monitor left of the primary one). Widths and heights are never negative.

use serde::{Deserialize, Serialize};

/// A point in physical virtual-desktop pixels.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

impl Point {
    pub const fn new(x: i32, y: i32) -> Self {
        Self { x, y }
    }
}

/// An axis-aligned rectangle in physical virtual-desktop pixels (half-open).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

impl Rect {
    pub const fn new(x: i32, y: i32, width: u32, height: u32) -> Self {
        Self {
            x,
            y,
            width,
            height,
        }
    }

    /// One past the last column, widened so huge rectangles never overflow.
    pub const fn right(&self) -> i64 {
        self.x as i64 + self.width as i64
    }

    /// One past the last row.
    pub const fn bottom(&self) -> i64 {
        self.y as i64 + self.height as i64
    }

    pub const fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0
    }

    pub const fn area(&self) -> u64 {
        self.width as u64 * self.height as u64
    }

    pub const fn contains(&self, p: Point) -> bool {
        let (px, py) = (p.x as i64, p.y as i64);
        px >= self.x as i64 && px < self.right() && py >= self.y as i64 && py < self.bottom()
    }

    /// The overlap of two rectangles, `None` when they do not overlap.
    pub fn intersect(&self, other: &Rect) -> Option<Rect> {
        let x0 = (self.x as i64).max(other.x as i64);
        let y0 = (self.y as i64).max(other.y as i64);
        let x1 = self.right().min(other.right());
        let y1 = self.bottom().min(other.bottom());
        (x1 > x0 && y1 > y0)
            .then(|| Rect::new(x0 as i32, y0 as i32, (x1 - x0) as u32, (y1 - y0) as u32))
    }

    /// The smallest rectangle covering both.
    pub fn union(&self, other: &Rect) -> Rect {
        if self.is_empty() {
            return *other;
        }
        if other.is_empty() {
            return *self;
        }
        let x0 = (self.x as i64).min(other.x as i64);
        let y0 = (self.y as i64).min(other.y as i64);
        let x1 = self.right().max(other.right());
        let y1 = self.bottom().max(other.bottom());
        Rect::new(x0 as i32, y0 as i32, (x1 - x0) as u32, (y1 - y0) as u32)
    }

    pub fn center(&self) -> Point {
        Point::new(
            (self.x as i64 + self.width as i64 / 2) as i32,
            (self.y as i64 + self.height as i64 / 2) as i32,
        )
    }
}

impl std::fmt::Display for Rect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}{:+}{:+}", self.width, self.height, self.x, self.y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersect_and_union_handle_negative_origins() {
        let left = Rect::new(-1920, 0, 1920, 1080);
        let main = Rect::new(0, 0, 2560, 1440);
        assert_eq!(left.intersect(&main), None, "touching edges do not overlap");
        assert_eq!(left.union(&main), Rect::new(-1920, 0, 4480, 1440));
        let straddle = Rect::new(-10, 5, 20, 10);
        assert_eq!(straddle.intersect(&main), Some(Rect::new(0, 5, 10, 10)));
        assert_eq!(straddle.intersect(&left), Some(Rect::new(-10, 5, 10, 10)));
    }

    #[test]
    fn contains_is_half_open() {
        let r = Rect::new(-5, -5, 10, 10);
        assert!(r.contains(Point::new(-5, -5)));
        assert!(r.contains(Point::new(4, 4)));
        assert!(!r.contains(Point::new(5, 4)));
        assert!(!r.contains(Point::new(4, 5)));
    }

    #[test]
    fn display_is_x_geometry() {
        assert_eq!(Rect::new(-20, 30, 640, 480).to_string(), "640x480-20+30");
    }
}
