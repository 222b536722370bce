//! The OCR worker process: `deskpilot __ocr`, started by [`crate::TesseractOcr`] with
//! `OMP_THREAD_LIMIT=1`, reading requests on stdin and answering on stdout.
//!
//! Keeping Tesseract in its own process lets its thread limit take effect (libgomp reads it
//! when it loads) and keeps a crash or a hang inside Tesseract out of the server.
//!
//! The protocol, one exchange at a time:
//! - request: one JSON line ([`Request`]), then for `read` exactly `width * height` bytes of
//!   8-bit gray pixels;
//! - answer: one JSON line ([`Answer`]).

use std::io::{BufRead, Read as _, Write};

use deskpilot_backend::GrayImage;
use deskpilot_types::OcrLine;
use serde::{Deserialize, Serialize};

use crate::reader::{self, ReadError, Reader, Tuning};

/// What the server asks.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// What is installed.
    Info,
    /// Start engines for these languages now.
    Warm { languages: Vec<String> },
    /// Read the gray image that follows the line.
    Read {
        languages: Vec<String>,
        width: u32,
        height: u32,
    },
}

/// What the worker answers.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Answer {
    Info {
        version: Option<String>,
        unavailable: Option<String>,
        installed: Vec<String>,
        default: Vec<String>,
    },
    Ready,
    Read {
        /// `tesseract 5.3.0`.
        engine: String,
        lines: Vec<OcrLine>,
        languages: Vec<String>,
        elapsed_us: u64,
        reused: usize,
        bands: usize,
    },
    Unavailable {
        reason: String,
    },
    LanguageMissing {
        language: String,
        installed: Vec<String>,
    },
    Invalid {
        reason: String,
    },
}

impl From<ReadError> for Answer {
    fn from(e: ReadError) -> Answer {
        match e {
            ReadError::Unavailable(reason) => Answer::Unavailable { reason },
            ReadError::LanguageMissing {
                language,
                installed,
            } => Answer::LanguageMissing {
                language,
                installed,
            },
        }
    }
}

/// The largest image accepted (a 8K screen).
const MAX_PIXELS: u64 = 7680 * 4320;

/// How long the worker waits for a request before it exits to give its memory back (its warm
/// engines for English and Chinese hold ~140 MB); the server starts a new one when needed.
/// `DESKPILOT_OCR_IDLE_S` changes it.
const IDLE: std::time::Duration = std::time::Duration::from_secs(300);

/// Ends the process once no request has come for `idle` (checked while none is in progress).
fn exit_when_idle(
    idle: std::time::Duration,
) -> std::sync::Arc<std::sync::Mutex<std::time::Instant>> {
    let last = std::sync::Arc::new(std::sync::Mutex::new(std::time::Instant::now()));
    let seen = last.clone();
    let _ = std::thread::Builder::new()
        .name("ocr-idle".to_string())
        .spawn(move || {
            loop {
                std::thread::sleep(idle.min(std::time::Duration::from_secs(5)));
                let since = seen.lock().unwrap_or_else(|e| e.into_inner()).elapsed();
                if since >= idle {
                    std::process::exit(0);
                }
            }
        });
    last
}

/// Serves requests until stdin closes. Returns the process exit code.
pub fn run() -> i32 {
    let idle = std::env::var("DESKPILOT_OCR_IDLE_S")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(IDLE, std::time::Duration::from_secs);
    let activity = exit_when_idle(idle);
    let reader = Reader::new(Tuning::default());
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut output = stdout.lock();
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => return 0,
            Ok(_) => {}
        }
        // Held for the whole request: the idle check cannot end a read in progress.
        let mut busy = activity.lock().unwrap_or_else(|e| e.into_inner());
        let answer = match serde_json::from_str::<Request>(line.trim()) {
            Err(e) => Answer::Invalid {
                reason: format!("bad request: {e}"),
            },
            Ok(Request::Info) => {
                let installed = reader::installed_languages();
                let (version, unavailable) = match crate::tesseract::version() {
                    Ok(v) => (Some(v), None),
                    Err(e) => (None, Some(e)),
                };
                Answer::Info {
                    version,
                    unavailable,
                    default: reader::default_languages(&installed),
                    installed,
                }
            }
            Ok(Request::Warm { languages }) => match reader.warm(&languages) {
                Ok(()) => Answer::Ready,
                Err(e) => e.into(),
            },
            Ok(Request::Read {
                languages,
                width,
                height,
            }) => {
                let size = width as u64 * height as u64;
                if size > MAX_PIXELS {
                    // The pixels still follow; without reading them the stream is lost.
                    return 3;
                }
                let mut data = vec![0u8; size as usize];
                if input.read_exact(&mut data).is_err() {
                    return 0;
                }
                let image = GrayImage {
                    width,
                    height,
                    data,
                };
                match reader.read(&image, &languages) {
                    Ok(read) => Answer::Read {
                        engine: format!(
                            "tesseract {}",
                            crate::tesseract::version().unwrap_or_default()
                        ),
                        lines: read.lines,
                        languages: read.languages,
                        elapsed_us: read.elapsed.as_micros() as u64,
                        reused: read.reused.0,
                        bands: read.reused.1,
                    },
                    Err(e) => e.into(),
                }
            }
        };
        let Ok(mut text) = serde_json::to_string(&answer) else {
            return 4;
        };
        text.push('\n');
        if output
            .write_all(text.as_bytes())
            .and_then(|_| output.flush())
            .is_err()
        {
            return 0;
        }
        *busy = std::time::Instant::now();
        drop(busy);
    }
}
