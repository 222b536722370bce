//! Drawing on a scaled screenshot before it is encoded: numbered pins for `find_elements`.
//!
//! Everything is drawn in image space, on the scaled pixels, so a pin is the same size at
//! every screen resolution and never changes the geometry the image maps back through.
//! Digits come from a built-in 3×5 bitmap font: no font files, no dependency.

use deskpilot_backend::PixelFormat;

/// A scaled image being decorated, in the frame's own 4-byte pixel order.
pub struct Canvas<'a> {
    pub data: &'a mut [u8],
    pub width: u32,
    pub height: u32,
    pub format: PixelFormat,
}

/// A numbered pin: an outline around `rect` (image pixels) and a label with `number`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pin {
    pub number: usize,
    /// The element's bounds in image pixels (x, y, width, height).
    pub rect: (i32, i32, u32, u32),
}

const PIN_RED: [u8; 3] = [230, 30, 60];
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

    fn text(&mut self, x: i32, y: i32, digits: &str, rgb: [u8; 3]) {
        for (i, d) in digits.bytes().enumerate() {
            let glyph = DIGITS[(d - b'0') as usize % 10];
            let gx = x + i as i32 * 4 * GLYPH_SCALE;
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..3 {
                    if bits & (0b100 >> col) != 0 {
                        self.fill(
                            gx + col * GLYPH_SCALE,
                            y + row as i32 * GLYPH_SCALE,
                            GLYPH_SCALE,
                            GLYPH_SCALE,
                            rgb,
                        );
                    }
                }
            }
        }
    }

    /// Draws `pin`: a red outline around the element and a red label holding its number in
    /// white, above the element's top-left corner when there is room, else inside it.
    pub fn pin(&mut self, pin: &Pin) {
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
        canvas(&mut data, w, h).pin(&Pin {
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
        c.pin(&Pin {
            number: 123,
            rect: (-10, -10, 80, 80),
        });
        c.pin(&Pin {
            number: 4,
            rect: (28, 0, 10, 10),
        });
        // Nothing panicked and something was drawn.
        assert!(data.chunks_exact(4).any(|p| p[2] == PIN_RED[0]));
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
