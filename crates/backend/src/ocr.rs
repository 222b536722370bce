//! Reading text off pixels: the [`Ocr`] capability and the gray image it reads.
//!
//! An OCR engine sees only what the engine hands it: a grayscale copy of a capture that has
//! already been privacy-masked. Bounds come back in that image's pixels; the engine places
//! them on the desktop.

use std::time::Duration;

use deskpilot_types::OcrLine;

use crate::{
    error::Error,
    frame::{Frame, PixelFormat},
};

/// 8-bit luminance, row-major, `width` bytes per row.
#[derive(Clone, PartialEq, Eq)]
pub struct GrayImage {
    pub width: u32,
    pub height: u32,
    pub data: Vec<u8>,
}

impl std::fmt::Debug for GrayImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GrayImage({}x{})", self.width, self.height)
    }
}

impl GrayImage {
    /// The luminance of a captured frame (Rec. 601 weights, integer arithmetic).
    pub fn from_frame<D: AsRef<[u8]>>(frame: &Frame<D>) -> GrayImage {
        let (r, b) = match frame.format {
            PixelFormat::Bgrx => (2, 0),
            PixelFormat::Rgba => (0, 2),
        };
        let data = frame
            .bytes()
            .chunks_exact(4)
            .map(|px| ((px[r] as u32 * 77 + px[1] as u32 * 150 + px[b] as u32 * 29) >> 8) as u8)
            .collect();
        GrayImage {
            width: frame.rect.width,
            height: frame.rect.height,
            data,
        }
    }
}

/// What to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OcrRequest {
    /// Language codes of the engine (`eng`, `chi_sim`); empty means the engine's default set.
    pub languages: Vec<String>,
}

/// What an engine read from one image.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OcrPage {
    /// Lines top to bottom, bounds in the image's pixels.
    pub lines: Vec<OcrLine>,
    /// The engine and its version, e.g. `tesseract 5.3.0`.
    pub engine: String,
    /// The languages it read with.
    pub languages: Vec<String>,
    /// Time spent recognising (not counting the capture).
    pub elapsed: Duration,
    /// Parts of the image whose pixels were unchanged since an earlier read and whose words
    /// were reused, out of how many parts it was split into.
    pub reused: (usize, usize),
}

/// What an engine says about itself, for `status` and `doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OcrInfo {
    /// `tesseract 5.3.0`, `Windows.Media.Ocr`, or `none`.
    pub engine: String,
    /// The installed languages, or why the engine cannot run.
    pub languages: Result<Vec<String>, String>,
    /// What a call without languages reads with.
    pub default_languages: Vec<String>,
    /// How to install what is missing (the engine, or languages worth having).
    pub fix: Option<String>,
}

/// An OCR engine.
pub trait Ocr: Send + Sync {
    /// What is installed. May start the engine, so it may take a moment the first time.
    fn info(&self) -> OcrInfo;

    /// Reads `image`. Fails with [`Error::OcrUnavailable`] when the engine cannot run and
    /// [`Error::OcrLanguageMissing`] for a language whose data is not installed.
    fn recognize(&self, image: &GrayImage, request: &OcrRequest) -> Result<OcrPage, Error>;
}

/// Stands in where a platform has no OCR engine.
#[derive(Debug)]
pub struct NoOcr {
    pub reason: String,
}

impl Ocr for NoOcr {
    fn info(&self) -> OcrInfo {
        OcrInfo {
            engine: "none".to_string(),
            languages: Err(self.reason.clone()),
            default_languages: Vec::new(),
            fix: None,
        }
    }

    fn recognize(&self, _image: &GrayImage, _request: &OcrRequest) -> Result<OcrPage, Error> {
        Err(Error::OcrUnavailable {
            reason: self.reason.clone(),
            fix: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_types::Rect;

    use super::*;

    #[test]
    fn gray_weighs_green_most_and_reads_both_orders() {
        let bgrx = Frame {
            rect: Rect::new(0, 0, 3, 1),
            format: PixelFormat::Bgrx,
            data: vec![255, 0, 0, 0, 0, 255, 0, 0, 0, 0, 255, 0],
        };
        let gray = GrayImage::from_frame(&bgrx);
        assert_eq!(gray.data, vec![28, 149, 76]);
        let rgba = Frame {
            rect: Rect::new(0, 0, 1, 1),
            format: PixelFormat::Rgba,
            data: vec![255, 255, 255, 255],
        };
        assert_eq!(GrayImage::from_frame(&rgba).data, vec![255]);
    }
}
