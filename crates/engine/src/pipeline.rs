//! The image pipeline: capture → privacy masks → scale to budget → JPEG or PNG.
//!
//! Frames arrive in the backend's native 4-byte order (usually BGRX); scaling works on any
//! 4-byte order and the JPEG encoder reads BGRA directly, so the common path never spends
//! time swapping channels. Masks are painted into the frame itself, so nothing downstream
//! (diff, decoration, OCR, encoding) can see what they cover.

use std::time::{Duration, Instant};

use deskpilot_backend::{Frame, PixelFormat};
use deskpilot_types::Rect;
use fast_image_resize as fr;

use crate::coords::ViewGeometry;
use crate::decorate::{Canvas, Decorations};
use crate::error::Error;

/// How an image is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// Lossy, small; quality 10–100.
    Jpeg { quality: u8 },
    /// Lossless.
    Png,
}

impl ImageFormat {
    pub const fn mime_type(self) -> &'static str {
        match self {
            ImageFormat::Jpeg { .. } => "image/jpeg",
            ImageFormat::Png => "image/png",
        }
    }
}

/// An encoded image and what it took to make it.
#[derive(Clone)]
pub struct EncodedImage {
    pub bytes: Vec<u8>,
    pub format: ImageFormat,
    pub width: u32,
    pub height: u32,
    pub resize_time: Duration,
    pub encode_time: Duration,
}

impl std::fmt::Debug for EncodedImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncodedImage")
            .field("format", &self.format)
            .field("width", &self.width)
            .field("height", &self.height)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// Paints every mask that touches the frame black; returns how many did.
pub fn apply_masks<D: AsMut<[u8]>>(frame: &mut Frame<D>, masks: &[Rect]) -> usize {
    let mut painted = 0;
    for mask in masks {
        if mask.intersect(&frame.rect).is_some() {
            frame.fill(*mask, [0, 0, 0]);
            painted += 1;
        }
    }
    painted
}

/// Scales `frame` to `view`'s image size, draws `decorations` on the scaled pixels and encodes it.
///
/// `scratch` holds the scaled pixels; pass the same vector every time so its pages are reused.
pub fn encode<D: AsRef<[u8]>>(
    frame: &Frame<D>,
    view: &ViewGeometry,
    format: ImageFormat,
    scratch: &mut Vec<u8>,
    decorations: &Decorations,
) -> Result<EncodedImage, Error> {
    let (w, h) = (frame.rect.width, frame.rect.height);
    let started = Instant::now();
    let pixels: &[u8] = if (view.width, view.height) == (w, h) && decorations.is_empty() {
        frame.bytes()
    } else if (view.width, view.height) == (w, h) {
        // Pins are drawn on a copy: the frame buffer stays as captured.
        scratch.clear();
        scratch.extend_from_slice(frame.bytes());
        scratch
    } else {
        // Typed to the one pixel layout deskpilot resizes, so the resizer is compiled for it
        // alone (the untyped entry point instantiates every pixel type: megabytes of code).
        let src = fr::images::TypedImageRef::<fr::pixels::U8x4>::from_buffer(w, h, frame.bytes())
            .map_err(|e| Error::Internal {
            message: format!("frame buffer does not match its size: {e}"),
        })?;
        scratch.resize(view.width as usize * view.height as usize * 4, 0);
        let mut dst = fr::images::TypedImage::<fr::pixels::U8x4>::from_buffer(
            view.width,
            view.height,
            scratch.as_mut_slice(),
        )
        .map_err(|e| Error::Internal {
            message: format!("scratch buffer does not fit the image: {e}"),
        })?;
        // The fourth byte is padding (X) or opaque alpha: never premultiply by it.
        let options = fr::ResizeOptions::new()
            .resize_alg(fr::ResizeAlg::Convolution(fr::FilterType::Bilinear))
            .use_alpha(false);
        fr::Resizer::new()
            .resize_typed(&src, &mut dst, &options)
            .map_err(|e| Error::Internal {
                message: format!("resize failed: {e}"),
            })?;
        scratch
    };
    let pixels: &[u8] = if decorations.is_empty() {
        pixels
    } else {
        Canvas {
            data: scratch,
            width: view.width,
            height: view.height,
            format: frame.format,
        }
        .decorate(decorations);
        scratch
    };
    let resize_time = started.elapsed();

    let started = Instant::now();
    let mut bytes = Vec::with_capacity(pixels.len() / 8);
    match format {
        ImageFormat::Jpeg { quality } => {
            let (Ok(iw), Ok(ih)) = (u16::try_from(view.width), u16::try_from(view.height)) else {
                return Err(Error::InvalidArgument {
                    message: format!(
                        "a JPEG cannot be {}x{}; use format png or a smaller max_width",
                        view.width, view.height
                    ),
                });
            };
            let color = match frame.format {
                PixelFormat::Bgrx => jpeg_encoder::ColorType::Bgra,
                PixelFormat::Rgba => jpeg_encoder::ColorType::Rgba,
            };
            jpeg_encoder::Encoder::new(&mut bytes, quality.clamp(1, 100))
                .encode(pixels, iw, ih, color)
                .map_err(|e| Error::Internal {
                    message: format!("JPEG encoding failed: {e}"),
                })?;
        }
        ImageFormat::Png => {
            let rgb = to_rgb(pixels, frame.format);
            let mut encoder = png::Encoder::new(&mut bytes, view.width, view.height);
            encoder.set_color(png::ColorType::Rgb);
            encoder.set_depth(png::BitDepth::Eight);
            encoder.set_compression(png::Compression::Fast);
            let mut writer = encoder.write_header().map_err(|e| Error::Internal {
                message: format!("PNG header: {e}"),
            })?;
            writer.write_image_data(&rgb).map_err(|e| Error::Internal {
                message: format!("PNG encoding failed: {e}"),
            })?;
            writer.finish().map_err(|e| Error::Internal {
                message: format!("PNG encoding failed: {e}"),
            })?;
        }
    }
    Ok(EncodedImage {
        bytes,
        format,
        width: view.width,
        height: view.height,
        resize_time,
        encode_time: started.elapsed(),
    })
}

fn to_rgb(pixels: &[u8], format: PixelFormat) -> Vec<u8> {
    let mut rgb = Vec::with_capacity(pixels.len() / 4 * 3);
    match format {
        PixelFormat::Bgrx => pixels
            .chunks_exact(4)
            .for_each(|p| rgb.extend_from_slice(&[p[2], p[1], p[0]])),
        PixelFormat::Rgba => pixels
            .chunks_exact(4)
            .for_each(|p| rgb.extend_from_slice(&p[..3])),
    }
    rgb
}

#[cfg(test)]
mod tests {
    use deskpilot_types::Point;

    use super::*;
    use crate::coords::ImageBudget;

    fn frame(rect: Rect) -> Frame {
        let mut f = Frame {
            rect,
            format: PixelFormat::Bgrx,
            data: vec![0; rect.area() as usize * 4],
        };
        // Left half red, right half blue.
        let half = rect.width / 2;
        f.fill(Rect::new(rect.x, rect.y, half, rect.height), [255, 0, 0]);
        f.fill(
            Rect::new(rect.x + half as i32, rect.y, rect.width - half, rect.height),
            [0, 0, 255],
        );
        f
    }

    fn decode_jpeg(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let mut d = jpeg_decoder::Decoder::new(bytes);
        let px = d.decode().unwrap();
        let info = d.info().unwrap();
        (info.width as u32, info.height as u32, px)
    }

    #[test]
    fn masks_paint_black_only_where_they_touch() {
        let mut f = frame(Rect::new(0, 0, 100, 50));
        let n = apply_masks(
            &mut f,
            &[Rect::new(10, 10, 5, 5), Rect::new(500, 500, 5, 5)],
        );
        assert_eq!(n, 1);
        assert_eq!(f.rgb_at(Point::new(12, 12)), Some([0, 0, 0]));
        assert_eq!(f.rgb_at(Point::new(16, 12)), Some([255, 0, 0]));
    }

    #[test]
    fn jpeg_from_bgrx_keeps_colours_and_budget_size() {
        let f = frame(Rect::new(-200, 0, 1920, 1080));
        let view = ViewGeometry::fit(f.rect, ImageBudget::default());
        let img = encode(
            &f,
            &view,
            ImageFormat::Jpeg { quality: 80 },
            &mut Vec::new(),
            &Decorations::default(),
        )
        .unwrap();
        let (w, h, px) = decode_jpeg(&img.bytes);
        assert_eq!((w, h), (view.width, view.height));
        let at = |x: u32, y: u32| {
            let i = ((y * w + x) * 3) as usize;
            [px[i], px[i + 1], px[i + 2]]
        };
        let close = |a: [u8; 3], b: [u8; 3]| {
            a.iter()
                .zip(b)
                .all(|(x, y)| (*x as i32 - y as i32).abs() < 24)
        };
        assert!(close(at(10, 10), [255, 0, 0]), "{:?}", at(10, 10));
        assert!(
            close(at(w - 10, h - 10), [0, 0, 255]),
            "{:?}",
            at(w - 10, h - 10)
        );
    }

    #[test]
    fn png_is_lossless_at_scale_one() {
        let f = frame(Rect::new(0, 0, 64, 32));
        let view = ViewGeometry::fit(f.rect, ImageBudget::default());
        let img = encode(
            &f,
            &view,
            ImageFormat::Png,
            &mut Vec::new(),
            &Decorations::default(),
        )
        .unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(img.bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (64, 32));
        assert_eq!(&buf[..3], &[255, 0, 0]);
        assert_eq!(&buf[(63 * 3)..(64 * 3)], &[0, 0, 255]);
    }
}
