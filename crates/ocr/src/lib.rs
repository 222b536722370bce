//! OCR engines: text and its bounds read off pixels, for windows that have no useful
//! accessibility tree.
//!
//! - Linux (and other Unixes): Tesseract 5, loaded at run time from the system's
//!   `libtesseract` ([`tesseract`]), run in a warm worker process (`deskpilot __ocr`,
//!   [`worker`]) that the server talks to through [`TesseractOcr`]. The worker splits an image
//!   into bands of text rows ([`prepare`]), enlarges them 2× (UI text is small for Tesseract's
//!   models), reads them on one engine per thread and remembers the words of bands whose pixels
//!   did not change ([`reader`]).
//! - Windows: `Windows.Media.Ocr` in process (`WinRtOcr`); under Wine, which lacks it, every
//!   call says so.
//!
//! Both implement [`deskpilot_backend::Ocr`]; the engine never knows which one it has.

pub mod languages;
pub mod prepare;

#[cfg(unix)]
mod client;
#[cfg(unix)]
pub mod reader;
#[cfg(unix)]
pub mod tesseract;
#[cfg(windows)]
mod winrt;
#[cfg(unix)]
pub mod worker;

#[cfg(unix)]
pub use client::{ENGINE_FIX, TesseractOcr, language_package};
#[cfg(windows)]
pub use winrt::WinRtOcr;

use std::ffi::OsString;
use std::sync::Arc;

/// The OCR engine of this platform. `worker` is the command that starts the OCR worker
/// process where the platform uses one (the `deskpilot` binary and `__ocr`).
pub fn platform(worker: Vec<OsString>) -> Arc<dyn deskpilot_backend::Ocr> {
    #[cfg(unix)]
    {
        Arc::new(TesseractOcr::new(worker))
    }
    #[cfg(windows)]
    {
        let _ = worker;
        Arc::new(WinRtOcr::default())
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = worker;
        Arc::new(deskpilot_backend::NoOcr {
            reason: "no OCR engine for this platform".to_string(),
        })
    }
}
