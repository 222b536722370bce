//! `WinRtOcr`: Windows.Media.Ocr, in process (it is fast and runs out of process already).
//!
//! One engine per language tag is kept. Windows reports no per-word confidence; words are
//! given 100 and the engine name says so. Under Wine, which has no Windows.Media.Ocr, every
//! call fails with `OcrUnavailable` saying that.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use deskpilot_backend::{Error, GrayImage, Ocr, OcrInfo, OcrPage, OcrRequest};
use deskpilot_types::{OcrLine, OcrWord, Rect};
use windows::Globalization::Language;
use windows::Graphics::Imaging::{BitmapPixelFormat, SoftwareBitmap};
use windows::Media::Ocr::OcrEngine;
use windows::Storage::Streams::DataWriter;
use windows::core::HSTRING;

use crate::languages;

/// The engine name results carry.
const ENGINE: &str = "Windows.Media.Ocr (reports no confidence: 100 given)";

/// Windows.Media.Ocr with one warm engine per language.
#[derive(Default)]
pub struct WinRtOcr {
    engines: Mutex<HashMap<String, OcrEngine>>,
}

impl std::fmt::Debug for WinRtOcr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WinRtOcr")
    }
}

fn unavailable(e: windows::core::Error) -> Error {
    Error::OcrUnavailable {
        reason: format!(
            "Windows.Media.Ocr cannot be used here ({e}); Wine and Windows Server without the \
             desktop experience lack it"
        ),
        fix: Some(
            "on Windows 10/11 add an OCR language: Settings > Time & language > Language, add a \
             language with its optical character recognition feature"
                .to_string(),
        ),
    }
}

fn installed() -> windows::core::Result<Vec<String>> {
    let mut out = Vec::new();
    for lang in OcrEngine::AvailableRecognizerLanguages()? {
        out.push(languages::tesseract_code(&lang.LanguageTag()?.to_string()));
    }
    out.sort();
    out.dedup();
    Ok(out)
}

impl WinRtOcr {
    fn engine(&self, tag: Option<&str>) -> Result<(String, OcrEngine), Error> {
        let key = tag.unwrap_or("").to_string();
        let mut engines = self.engines.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = engines.get(&key) {
            return Ok((key, e.clone()));
        }
        let engine = match tag {
            None => OcrEngine::TryCreateFromUserProfileLanguages().map_err(unavailable)?,
            Some(tag) => {
                let language =
                    Language::CreateLanguage(&HSTRING::from(tag)).map_err(unavailable)?;
                if !OcrEngine::IsLanguageSupported(&language).map_err(unavailable)? {
                    return Err(Error::OcrLanguageMissing {
                        language: languages::tesseract_code(tag),
                        installed: installed().unwrap_or_default(),
                        fix: Some(format!(
                            "add the language {tag} with its optical character recognition feature in Windows settings"
                        )),
                    });
                }
                OcrEngine::TryCreateFromLanguage(&language).map_err(unavailable)?
            }
        };
        engines.insert(key.clone(), engine.clone());
        Ok((key, engine))
    }
}

/// BGRA pixels of a gray image, as a SoftwareBitmap.
fn bitmap(image: &GrayImage) -> windows::core::Result<SoftwareBitmap> {
    let mut bgra = Vec::with_capacity(image.data.len() * 4);
    for v in &image.data {
        bgra.extend_from_slice(&[*v, *v, *v, 255]);
    }
    let writer = DataWriter::new()?;
    writer.WriteBytes(&bgra)?;
    let buffer = writer.DetachBuffer()?;
    SoftwareBitmap::CreateCopyFromBuffer(
        &buffer,
        BitmapPixelFormat::Bgra8,
        image.width as i32,
        image.height as i32,
    )
}

impl Ocr for WinRtOcr {
    fn info(&self) -> OcrInfo {
        match installed() {
            Ok(list) => OcrInfo {
                engine: ENGINE.to_string(),
                default_languages: list.iter().take(1).cloned().collect(),
                fix: (!list.iter().any(|l| l == "chi_sim")).then(|| {
                    "add Chinese (Simplified) with its OCR feature in Windows settings to read Chinese".to_string()
                }),
                languages: Ok(list),
            },
            Err(e) => OcrInfo {
                engine: ENGINE.to_string(),
                languages: Err(unavailable(e).to_string()),
                default_languages: Vec::new(),
                fix: None,
            },
        }
    }

    fn recognize(&self, image: &GrayImage, request: &OcrRequest) -> Result<OcrPage, Error> {
        let started = Instant::now();
        let tag = languages::single(&request.languages);
        let (tag, engine) = self.engine(tag.as_deref())?;
        let max = OcrEngine::MaxImageDimension().map_err(unavailable)?;
        if image.width > max || image.height > max {
            return Err(Error::Unsupported {
                what: "OCR of an image this large",
                reason: format!(
                    "Windows.Media.Ocr reads at most {max} pixels a side; this capture is {}x{}: read a window or a region",
                    image.width, image.height
                ),
            });
        }
        let os = |e: windows::core::Error| Error::os("Windows.Media.Ocr", e);
        let bitmap = bitmap(image).map_err(os)?;
        let result = engine
            .RecognizeAsync(&bitmap)
            .map_err(os)?
            .join()
            .map_err(os)?;
        let language = if tag.is_empty() {
            engine
                .RecognizerLanguage()
                .and_then(|l| l.LanguageTag())
                .map(|t| languages::tesseract_code(&t.to_string()))
                .unwrap_or_default()
        } else {
            languages::tesseract_code(&tag)
        };
        let mut lines = Vec::new();
        for line in result.Lines().map_err(os)? {
            let mut words = Vec::new();
            for word in line.Words().map_err(os)? {
                let r = word.BoundingRect().map_err(os)?;
                words.push(OcrWord {
                    text: word.Text().map_err(os)?.to_string(),
                    confidence: 100.0,
                    bounds: Rect::new(
                        r.X.floor() as i32,
                        r.Y.floor() as i32,
                        r.Width.ceil().max(1.0) as u32,
                        r.Height.ceil().max(1.0) as u32,
                    ),
                    language: language.clone(),
                });
            }
            if !words.is_empty() {
                lines.push(OcrLine::from_words(words));
            }
        }
        Ok(OcrPage {
            lines,
            engine: ENGINE.to_string(),
            languages: vec![language],
            elapsed: started.elapsed(),
            reused: (0, 1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On Windows this reads; under Wine (no Windows.Media.Ocr) it must say so as
    /// `OcrUnavailable`, never fail some other way.
    #[test]
    fn reads_or_says_windows_media_ocr_is_missing() {
        let ocr = WinRtOcr::default();
        let image = GrayImage {
            width: 64,
            height: 32,
            data: vec![255; 64 * 32],
        };
        match ocr.recognize(&image, &OcrRequest::default()) {
            Ok(page) => assert!(page.lines.is_empty(), "a blank image has no text"),
            Err(Error::OcrUnavailable { reason, .. }) => {
                assert!(reason.contains("Windows.Media.Ocr"), "{reason}");
                assert!(ocr.info().languages.is_err());
            }
            Err(other) => panic!("unexpected failure: {other}"),
        }
    }
}
