//! A captured frame: tightly packed 4-byte pixels in the platform's native order.
//!
//! Backends hand over pixels in whatever 32-bit order the OS produced (X11 and GDI both give
//! BGRX) so no capture pays for a conversion that the encoder can do for free.

use deskpilot_types::{Point, Rect};

/// Byte order of one 4-byte pixel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PixelFormat {
    /// Blue, green, red, unused (X11 ZPixmap depth 24 little-endian, GDI 32-bit DIB).
    Bgrx,
    /// Red, green, blue, alpha.
    Rgba,
}

/// Pixels of `rect`, row-major, `rect.width * 4` bytes per row. `D` is where they live: an
/// owned `Vec<u8>` by default, or `&mut [u8]` for a frame lent for the length of one capture
/// (see `Capture::capture_with`).
#[derive(Clone, PartialEq, Eq)]
pub struct Frame<D = Vec<u8>> {
    /// Where the pixels came from, in physical virtual-desktop pixels.
    pub rect: Rect,
    pub format: PixelFormat,
    pub data: D,
}

/// A frame lent for the length of one call.
pub type FrameMut<'a> = Frame<&'a mut [u8]>;

impl<D: AsRef<[u8]>> std::fmt::Debug for Frame<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame")
            .field("rect", &self.rect)
            .field("format", &self.format)
            .field("bytes", &self.data.as_ref().len())
            .finish()
    }
}

impl Frame {
    /// The same pixels, lent.
    pub fn view_mut(&mut self) -> FrameMut<'_> {
        Frame {
            rect: self.rect,
            format: self.format,
            data: self.data.as_mut_slice(),
        }
    }
}

impl<D: AsRef<[u8]>> Frame<D> {
    /// The pixel bytes.
    pub fn bytes(&self) -> &[u8] {
        self.data.as_ref()
    }

    /// The `[r, g, b]` of a pixel given in physical coordinates, `None` outside the frame.
    pub fn rgb_at(&self, p: Point) -> Option<[u8; 3]> {
        if !self.rect.contains(p) {
            return None;
        }
        let col = (p.x as i64 - self.rect.x as i64) as usize;
        let row = (p.y as i64 - self.rect.y as i64) as usize;
        let i = (row * self.rect.width as usize + col) * 4;
        let px = &self.data.as_ref()[i..i + 4];
        Some(match self.format {
            PixelFormat::Bgrx => [px[2], px[1], px[0]],
            PixelFormat::Rgba => [px[0], px[1], px[2]],
        })
    }
}

impl<D: AsMut<[u8]>> Frame<D> {
    /// Paints `rect` (physical coordinates, clipped to the frame) in one colour.
    pub fn fill(&mut self, rect: Rect, rgb: [u8; 3]) {
        let Some(r) = rect.intersect(&self.rect) else {
            return;
        };
        let px = match self.format {
            PixelFormat::Bgrx => [rgb[2], rgb[1], rgb[0], 255],
            PixelFormat::Rgba => [rgb[0], rgb[1], rgb[2], 255],
        };
        let stride = self.rect.width as usize * 4;
        let x0 = (r.x as i64 - self.rect.x as i64) as usize;
        let y0 = (r.y as i64 - self.rect.y as i64) as usize;
        for row in y0..y0 + r.height as usize {
            let line = &mut self.data.as_mut()
                [row * stride + x0 * 4..row * stride + (x0 + r.width as usize) * 4];
            for chunk in line.chunks_exact_mut(4) {
                chunk.copy_from_slice(&px);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_clips_and_rgb_at_reads_back_with_negative_origin() {
        let rect = Rect::new(-4, -2, 8, 4);
        let mut f = Frame {
            rect,
            format: PixelFormat::Bgrx,
            data: vec![0; 8 * 4 * 4],
        };
        f.fill(Rect::new(-10, -10, 12, 10), [10, 20, 30]);
        assert_eq!(f.rgb_at(Point::new(-4, -2)), Some([10, 20, 30]));
        assert_eq!(f.rgb_at(Point::new(1, -1)), Some([10, 20, 30]));
        assert_eq!(f.rgb_at(Point::new(2, -1)), Some([0, 0, 0]));
        assert_eq!(f.rgb_at(Point::new(4, 0)), None);
    }
}
