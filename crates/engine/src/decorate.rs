//! Drawing on a scaled screenshot before it is encoded: numbered pins for `find_elements`, and
//! the `grid`, `mark` and `dim` a caller asks for.
//!
//! Everything is drawn in image space, on the scaled pixels, so a label is the same size at
//! every screen resolution and never changes the geometry the image maps back through. The
//! frame signature behind `compare` / `verify` is taken before any of this, so a decorated
//! screenshot never counts as a change and never becomes the reference. Digits come from a
//! built-in 3×5 bitmap font: no font files, no dependency.

use deskpilot_backend::PixelFormat;

/// A scaled image being decorated, in the frame's own 4-byte pixel order.
pub struct Canvas<'a> {
    pub data: &'a mut [u8],
    pub width: u32,
    pub height: u32,
    pub format: PixelFormat,
}

/// A numbered marker (a pin): an outline around `rect` (image pixels) and a label with `number`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    pub number: usize,
    /// The element's bounds in image pixels (x, y, width, height).
    pub rect: (i32, i32, u32, u32),
}

/// Everything drawn on one screenshot, in image pixels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decorations {
    pub pins: Vec<Marker>,
    /// A labelled coordinate grid every this many image pixels.
    pub grid: Option<u32>,
    /// A crosshair at this image point.
    pub mark: Option<(i32, i32)>,
    /// Darken everything outside this image rectangle (x, y, width, height).
    pub dim: Option<(i32, i32, u32, u32)>,
}

impl Decorations {
    pub fn is_empty(&self) -> bool {
        self.pins.is_empty() && self.grid.is_none() && self.mark.is_none() && self.dim.is_none()
    }

    /// dsh-computer-use's default grid step: about a tenth of the width, rounded to 50 (at least 50).
    pub fn default_grid_step(width: u32) -> u32 {
        (((width as f64 / 10.0) / 50.0).round() as u32).max(1) * 50
    }
}

const PIN_RED: [u8; 3] = [230, 30, 60];
const GRID_CYAN: [u8; 3] = [0, 200, 255];
const MARK_MAGENTA: [u8; 3] = [255, 0, 200];
const WHITE: [u8; 3] = [255, 255, 255];

/// Rows of a 3×5 glyph, three bits each, most significant on the left.
const DIGITS: [[u8; 5]; 10] = [
    [0b111, 0b101, 0b101, 0b101, 0b111],
    [0b010, 0b110, 0b010, 0b010, 0b111],
    [0b111, 0b001, 0b111, 0b100, 0b111],
    [0b111, 0b001, 0b111, 0b001, 0b111],
    [0b101, 0b101, 0b111, 0b001, 0b001],
    [0b111, 0b100, 0b111, 0b001, 0b111],
    [0b111, 0b100, 0b111, 0b101, 0b111],
    [0b111, 0b001, 0b010, 0b010, 0b010],
    [0b111, 0b101, 0b111, 0b101, 0b111],
    [0b111, 0b101, 0b111, 0b001, 0b111],
];

/// Each font pixel is drawn as a square this many image pixels wide.
const GLYPH_SCALE: i32 = 3;

impl Canvas<'_> {
    fn put(&mut self, x: i32, y: i32, rgb: [u8; 3]) {
        if x < 0 || y < 0 || x >= self.width as i32 || y >= self.height as i32 {
            return;
        }
        let at = (y as usize * self.width as usize + x as usize) * 4;
        let Some(px) = self.data.get_mut(at..at + 4) else {
            return;
        };
        match self.format {
            PixelFormat::Bgrx => {
                px[0] = rgb[2];
                px[1] = rgb[1];
                px[2] = rgb[0];
            }
            PixelFormat::Rgba => {
                px[..3].copy_from_slice(&rgb);
                px[3] = 255;
            }
        }
    }

    /// Fills a rectangle, clipped to the image.
    pub fn fill(&mut self, x: i32, y: i32, w: i32, h: i32, rgb: [u8; 3]) {
        let (x0, y0) = (x.max(0), y.max(0));
        let (x1, y1) = (
            (x + w).min(self.width as i32),
            (y + h).min(self.height as i32),
        );
        for yy in y0..y1 {
            for xx in x0..x1 {
                self.put(xx, yy, rgb);
            }
        }
    }

    /// A `t`-pixel outline just inside the rectangle.
    pub fn outline(&mut self, x: i32, y: i32, w: i32, h: i32, t: i32, rgb: [u8; 3]) {
        self.fill(x, y, w, t, rgb);
        self.fill(x, y + h - t, w, t, rgb);
        self.fill(x, y, t, h, rgb);
        self.fill(x + w - t, y, t, h, rgb);
    }

    /// Draws every decoration: dim first, then the grid, the pins and the mark on top.
    pub fn decorate(&mut self, d: &Decorations) {
        if let Some(rect) = d.dim {
            self.dim_outside(rect);
        }
        if let Some(step) = d.grid {
            self.grid(step.max(10));
        }
        for pin in &d.pins {
            self.pin(pin);
        }
        if let Some((x, y)) = d.mark {
            self.mark(x, y);
        }
    }

    fn get(&self, x: i32, y: i32) -> Option<[u8; 3]> {
        if x < 0 || y < 0 || x >= self.width as i32 || y >= self.height as i32 {
            return None;
        }
        let at = (y as usize * self.width as usize + x as usize) * 4;
        let px = self.data.get(at..at + 4)?;
        Some(match self.format {
            PixelFormat::Bgrx => [px[2], px[1], px[0]],
            PixelFormat::Rgba => [px[0], px[1], px[2]],
        })
    }

    /// Darkens every pixel outside `(x, y, w, h)` to 35 %.
    fn dim_outside(&mut self, (x, y, w, h): (i32, i32, u32, u32)) {
        let (x1, y1) = (x + w as i32, y + h as i32);
        for yy in 0..self.height as i32 {
            for xx in 0..self.width as i32 {
                if xx >= x && xx < x1 && yy >= y && yy < y1 {
                    continue;
                }
                if let Some(p) = self.get(xx, yy) {
                    let d = |c: u8| (c as u16 * 35 / 100) as u8;
                    self.put(xx, yy, [d(p[0]), d(p[1]), d(p[2])]);
                }
            }
        }
    }

    /// Lines every `step` image pixels, each labelled with its image coordinate (x along the
    /// top edge, y along the left edge), so a label can be fed straight back to a click.
    fn grid(&mut self, step: u32) {
        let (w, h) = (self.width as i32, self.height as i32);
        let step = step as i32;
        let mut x = step;
        while x < w {
            self.fill(x, 0, 1, h, GRID_CYAN);
            x += step;
        }
        let mut y = step;
        while y < h {
            self.fill(0, y, w, 1, GRID_CYAN);
            y += step;
        }
        let label = |c: &mut Self, lx: i32, ly: i32, n: i32| {
            let digits = n.to_string();
            let lw = digits.len() as i32 * 4 * 2 + 2;
            c.fill(lx, ly, lw, 5 * 2 + 2, [0, 0, 0]);
            c.text_scaled(lx + 1, ly + 1, &digits, GRID_CYAN, 2);
        };
        let mut x = step;
        while x < w {
            label(self, x + 2, 2, x);
            x += step;
        }
        let mut y = step;
        while y < h {
            label(self, 2, y + 2, y);
            y += step;
        }
    }

    /// A crosshair centred on `(x, y)` with a gap in the middle, so the point stays visible.
    fn mark(&mut self, x: i32, y: i32) {
        let (arm, gap) = (14, 3);
        for (t, rgb) in [(3, [0, 0, 0]), (1, MARK_MAGENTA)] {
            let o = t / 2;
            self.fill(x - arm, y - o, arm - gap, t, rgb);
            self.fill(x + gap + 1, y - o, arm - gap, t, rgb);
            self.fill(x - o, y - arm, t, arm - gap, rgb);
            self.fill(x - o, y + gap + 1, t, arm - gap, rgb);
        }
        self.put(x, y, MARK_MAGENTA);
    }

    fn text(&mut self, x: i32, y: i32, digits: &str, rgb: [u8; 3]) {
        self.text_scaled(x, y, digits, rgb, GLYPH_SCALE);
    }

    fn text_scaled(&mut self, x: i32, y: i32, digits: &str, rgb: [u8; 3], scale: i32) {
        for (i, d) in digits.bytes().enumerate() {
            let glyph = DIGITS[(d - b'0') as usize % 10];
            let gx = x + i as i32 * 4 * scale;
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..3 {
                    if bits & (0b100 >> col) != 0 {
                        self.fill(gx + col * scale, y + row as i32 * scale, scale, scale, rgb);
                    }
                }
            }
        }
    }

    /// Draws `pin`: a red outline around the element and a red label holding its number in
    /// white, above the element's top-left corner when there is room, else inside it.
    pub fn pin(&mut self, pin: &Marker) {
        let (x, y, w, h) = pin.rect;
        let (w, h) = (w.max(4) as i32, h.max(4) as i32);
        self.outline(x, y, w, h, 2, PIN_RED);
        let digits = pin.number.to_string();
        let label_w = digits.len() as i32 * 4 * GLYPH_SCALE + 2 * GLYPH_SCALE;
        let label_h = 5 * GLYPH_SCALE + 4;
        let ly = if y - label_h >= 0 { y - label_h } else { y };
        let lx = x.clamp(0, (self.width as i32 - label_w).max(0));
        self.fill(lx, ly, label_w, label_h, PIN_RED);
        self.text(lx + 2 * GLYPH_SCALE - 1, ly + 2, &digits, WHITE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canvas(data: &mut [u8], w: u32, h: u32) -> Canvas<'_> {
        Canvas {
            data,
            width: w,
            height: h,
            format: PixelFormat::Bgrx,
        }
    }

    fn rgb_at(data: &[u8], w: u32, x: u32, y: u32) -> [u8; 3] {
        let at = ((y * w + x) * 4) as usize;
        [data[at + 2], data[at + 1], data[at]]
    }

    #[test]
    fn a_pin_outlines_the_element_and_labels_it_above() {
        let (w, h) = (100, 60);
        let mut data = vec![0u8; (w * h * 4) as usize];
        canvas(&mut data, w, h).pin(&Marker {
            number: 7,
            rect: (20, 30, 40, 20),
        });
        // Outline on the element's edges, its inside untouched.
        assert_eq!(rgb_at(&data, w, 20, 40), PIN_RED);
        assert_eq!(rgb_at(&data, w, 59, 40), PIN_RED);
        assert_eq!(rgb_at(&data, w, 40, 40), [0, 0, 0]);
        // The label sits above the element and holds white digit pixels.
        let label: Vec<[u8; 3]> = (16..30)
            .flat_map(|y| (20..32).map(move |x| (x, y)))
            .map(|(x, y)| rgb_at(&data, w, x, y))
            .collect();
        assert!(label.contains(&PIN_RED) && label.contains(&WHITE));
    }

    #[test]
    fn pins_at_the_edges_stay_inside_the_image() {
        let (w, h) = (30, 20);
        let mut data = vec![0u8; (w * h * 4) as usize];
        let mut c = canvas(&mut data, w, h);
        c.pin(&Marker {
            number: 123,
            rect: (-10, -10, 80, 80),
        });
        c.pin(&Marker {
            number: 4,
            rect: (28, 0, 10, 10),
        });
        // Nothing panicked and something was drawn.
        assert!(data.chunks_exact(4).any(|p| p[2] == PIN_RED[0]));
    }

    #[test]
    fn grid_mark_and_dim() {
        let (w, h) = (200, 120);
        let mut data = vec![200u8; (w * h * 4) as usize];
        canvas(&mut data, w, h).decorate(&Decorations {
            grid: Some(50),
            mark: Some((120, 80)),
            dim: Some((100, 60, 50, 40)),
            ..Decorations::default()
        });
        // Grid lines at multiples of 50, labels at their top / left ends.
        assert_eq!(rgb_at(&data, w, 50, 110), GRID_CYAN);
        assert_eq!(rgb_at(&data, w, 190, 100), GRID_CYAN);
        assert!((52..70).any(|x| (2..14).any(|y| rgb_at(&data, w, x, y) == GRID_CYAN)));
        // Dimmed outside the rectangle, untouched inside (away from lines and the mark).
        assert_eq!(rgb_at(&data, w, 30, 30), [70, 70, 70]);
        assert_eq!(rgb_at(&data, w, 140, 95), [200, 200, 200]);
        // The mark: its centre and arms.
        assert_eq!(rgb_at(&data, w, 120, 80), MARK_MAGENTA);
        assert_eq!(rgb_at(&data, w, 110, 80), MARK_MAGENTA);
        assert_eq!(rgb_at(&data, w, 120, 90), MARK_MAGENTA);
        assert_eq!(Decorations::default_grid_step(1280), 150);
        assert_eq!(Decorations::default_grid_step(300), 50);
        assert_eq!(Decorations::default_grid_step(1032), 100);
    }

    #[test]
    fn rgba_frames_get_the_same_colours() {
        let mut data = vec![0u8; 10 * 10 * 4];
        Canvas {
            data: &mut data,
            width: 10,
            height: 10,
            format: PixelFormat::Rgba,
        }
        .fill(0, 0, 1, 1, PIN_RED);
        assert_eq!(&data[..4], &[PIN_RED[0], PIN_RED[1], PIN_RED[2], 255]);
    }
}
