//! `SendInput`'s absolute pointer coordinates: 0..=65535 across the virtual desktop
//! (`MOUSEEVENTF_ABSOLUTE | MOUSEEVENTF_VIRTUALDESK`). Windows maps a normalized `n` back to
//! pixel `left + (n * width) >> 16`; rounding up here makes that land exactly on the pixel
//! asked for, on every monitor layout, negative origins included.

use deskpilot_types::{Point, Rect};

/// The normalized coordinates of physical pixel `p` on the virtual desktop `desk`.
pub fn normalized(p: Point, desk: Rect) -> (i32, i32) {
    fn axis(v: i32, origin: i32, size: u32) -> i32 {
        let size = i64::from(size.max(1));
        let offset = i64::from(v - origin).clamp(0, size - 1);
        ((offset * 65536 + size - 1) / size).min(65535) as i32
    }
    (
        axis(p.x, desk.x, desk.width),
        axis(p.y, desk.y, desk.height),
    )
}

/// Where Windows puts the pointer for normalized coordinates (the inverse, for tests).
pub fn denormalized(n: (i32, i32), desk: Rect) -> Point {
    Point::new(
        desk.x + ((i64::from(n.0) * i64::from(desk.width)) >> 16) as i32,
        desk.y + ((i64::from(n.1) * i64::from(desk.height)) >> 16) as i32,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pixel_round_trips_on_odd_and_negative_layouts() {
        for desk in [
            Rect::new(0, 0, 1920, 1080),
            Rect::new(-1280, -200, 3200, 1280),
            Rect::new(0, 0, 1366, 768),
            Rect::new(-3840, 0, 7680, 2160),
        ] {
            for x in (desk.x..desk.x + desk.width as i32).step_by(7) {
                let p = Point::new(x, desk.y + desk.height as i32 - 1);
                assert_eq!(denormalized(normalized(p, desk), desk), p, "{desk}");
            }
            let corner = Point::new(desk.x, desk.y);
            assert_eq!(normalized(corner, desk), (0, 0));
        }
    }
}
