//! [`TesseractOcr`]: the server's side of the OCR worker process.
//!
//! The worker is started on first use and kept warm; requests go one at a time. A worker that
//! does not answer within the deadline is killed (the call fails with `Timeout`) and the next
//! call starts a fresh one; one that died is restarted the same way.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use deskpilot_backend::{Error, GrayImage, Ocr, OcrInfo, OcrPage, OcrRequest};

use crate::worker::{Answer, Request};

/// How long one read may take before the worker is presumed stuck.
const READ_DEADLINE: Duration = Duration::from_secs(60);
/// How long `info` and `warm` may take.
const INFO_DEADLINE: Duration = Duration::from_secs(20);

/// What an exchange says when the worker had ended on its own (idle) before answering.
const IDLE_EXIT: &str = "the OCR worker had ended (idle)";

/// The Debian packages that provide the engine.
pub const ENGINE_FIX: &str =
    "install Tesseract: apt-get install -y tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim";

/// The Debian package holding a Tesseract language (`chi_sim` → `tesseract-ocr-chi-sim`).
pub fn language_package(language: &str) -> String {
    format!(
        "tesseract-ocr-{}",
        language.to_lowercase().replace('_', "-")
    )
}

struct Worker {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<String>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Tesseract in a warm worker process.
pub struct TesseractOcr {
    command: Vec<OsString>,
    worker: Mutex<Option<Worker>>,
}

impl std::fmt::Debug for TesseractOcr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TesseractOcr")
            .field("command", &self.command)
            .finish_non_exhaustive()
    }
}

impl TesseractOcr {
    /// `command` starts the worker (e.g. `[deskpilot, __ocr]`).
    pub fn new(command: Vec<OsString>) -> TesseractOcr {
        TesseractOcr {
            command,
            worker: Mutex::new(None),
        }
    }

    fn spawn(&self) -> Result<Worker, Error> {
        let (program, args) = self
            .command
            .split_first()
            .ok_or_else(|| Error::OcrUnavailable {
                reason: "no OCR worker command".to_string(),
                fix: None,
            })?;
        let mut child = Command::new(program)
            .args(args)
            // libgomp reads this when it loads: one OpenMP thread per engine. On a small
            // machine Tesseract's own threads make it several times slower.
            .env("OMP_THREAD_LIMIT", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| Error::OcrUnavailable {
                reason: format!("cannot start the OCR worker {program:?}: {e}"),
                fix: None,
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(Error::OcrUnavailable {
                reason: "the OCR worker has no pipes".to_string(),
                fix: None,
            });
        };
        let (tx, answers) = channel();
        std::thread::Builder::new()
            .name("ocr-answers".to_string())
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| Error::os("spawning the OCR reader thread", e))?;
        Ok(Worker {
            child,
            stdin,
            answers,
        })
    }

    /// Sends one request (and its pixels) and waits for the answer.
    fn exchange(
        &self,
        request: &Request,
        pixels: Option<&[u8]>,
        deadline: Duration,
        operation: &str,
    ) -> Result<Answer, Error> {
        match self.exchange_once(request, pixels, deadline, operation) {
            // A worker that ended while idle (it exits after a while without requests to give
            // its memory back) is simply started again: every request is a read.
            Err(Error::OcrUnavailable { reason, .. }) if reason.contains(IDLE_EXIT) => {
                self.exchange_once(request, pixels, deadline, operation)
            }
            other => other,
        }
    }

    fn exchange_once(
        &self,
        request: &Request,
        pixels: Option<&[u8]>,
        deadline: Duration,
        operation: &str,
    ) -> Result<Answer, Error> {
        let mut slot = self.worker.lock().unwrap_or_else(|e| e.into_inner());
        if slot
            .as_mut()
            .is_some_and(|w| matches!(w.child.try_wait(), Ok(Some(_))))
        {
            *slot = None;
        }
        if slot.is_none() {
            *slot = Some(self.spawn()?);
        }
        let Some(worker) = slot.as_mut() else {
            unreachable!("the worker was just started");
        };
        // Anything left over from an exchange that was given up on is stale.
        while worker.answers.try_recv().is_ok() {}
        let mut line =
            serde_json::to_string(request).map_err(|e| Error::os("encoding an OCR request", e))?;
        line.push('\n');
        let sent = worker
            .stdin
            .write_all(line.as_bytes())
            .and_then(|_| worker.stdin.write_all(pixels.unwrap_or_default()))
            .and_then(|_| worker.stdin.flush());
        let answer = match sent {
            Ok(()) => worker.answers.recv_timeout(deadline),
            Err(_) => Err(RecvTimeoutError::Disconnected),
        };
        match answer {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                *slot = None;
                Error::os("reading the OCR worker's answer", e)
            }),
            Err(RecvTimeoutError::Timeout) => {
                *slot = None;
                Err(Error::Timeout {
                    operation: operation.to_string(),
                    after: deadline,
                })
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = slot.as_mut().and_then(|w| w.child.wait().ok());
                *slot = None;
                Err(Error::OcrUnavailable {
                    reason: match status {
                        Some(s) if s.success() => IDLE_EXIT.to_string(),
                        other => format!(
                            "the OCR worker exited ({}); the next call starts a new one",
                            other.map_or("unknown status".to_string(), |s| s.to_string())
                        ),
                    },
                    fix: None,
                })
            }
        }
    }

    /// Starts the worker and its engines for `languages` ahead of the first read.
    pub fn warm(&self, languages: &[String]) -> Result<(), Error> {
        let request = Request::Warm {
            languages: languages.to_vec(),
        };
        match self.exchange(&request, None, INFO_DEADLINE, "starting the OCR engine")? {
            Answer::Ready => Ok(()),
            other => Err(answer_error(other)),
        }
    }
}

fn answer_error(answer: Answer) -> Error {
    match answer {
        Answer::Unavailable { reason } => Error::OcrUnavailable {
            reason,
            fix: Some(ENGINE_FIX.to_string()),
        },
        Answer::LanguageMissing {
            language,
            installed,
        } => Error::OcrLanguageMissing {
            fix: Some(format!(
                "apt-get install -y {}",
                language_package(&language)
            )),
            language,
            installed,
        },
        Answer::Invalid { reason } => Error::os("the OCR worker refused a request", reason),
        other => Error::os("the OCR worker", format!("answered out of turn: {other:?}")),
    }
}

impl Ocr for TesseractOcr {
    fn info(&self) -> OcrInfo {
        match self.exchange(&Request::Info, None, INFO_DEADLINE, "asking the OCR engine") {
            Ok(Answer::Info {
                version,
                unavailable,
                installed,
                default,
            }) => {
                let missing: Vec<&str> = ["eng", "chi_sim"]
                    .into_iter()
                    .filter(|l| !installed.iter().any(|i| i == l))
                    .collect();
                let fix = match (&unavailable, missing.is_empty()) {
                    (Some(_), _) => Some(ENGINE_FIX.to_string()),
                    (None, false) => Some(format!(
                        "apt-get install -y {}",
                        missing
                            .iter()
                            .map(|l| language_package(l))
                            .collect::<Vec<_>>()
                            .join(" ")
                    )),
                    (None, true) => None,
                };
                OcrInfo {
                    engine: format!(
                        "tesseract {}",
                        version.as_deref().unwrap_or("(not installed)")
                    ),
                    languages: match unavailable {
                        Some(reason) => Err(reason),
                        None if installed.is_empty() => {
                            Err("Tesseract has no language data installed".to_string())
                        }
                        None => Ok(installed),
                    },
                    default_languages: default,
                    fix,
                }
            }
            Ok(other) => OcrInfo {
                engine: "tesseract".to_string(),
                languages: Err(answer_error(other).to_string()),
                default_languages: Vec::new(),
                fix: Some(ENGINE_FIX.to_string()),
            },
            Err(e) => OcrInfo {
                engine: "tesseract".to_string(),
                languages: Err(e.to_string()),
                default_languages: Vec::new(),
                fix: Some(ENGINE_FIX.to_string()),
            },
        }
    }

    fn recognize(&self, image: &GrayImage, request: &OcrRequest) -> Result<OcrPage, Error> {
        let wire = Request::Read {
            languages: request.languages.clone(),
            width: image.width,
            height: image.height,
        };
        match self.exchange(&wire, Some(&image.data), READ_DEADLINE, "OCR")? {
            Answer::Read {
                engine,
                lines,
                languages,
                elapsed_us,
                reused,
                bands,
            } => Ok(OcrPage {
                lines,
                engine,
                languages,
                elapsed: Duration::from_micros(elapsed_us),
                reused: (reused, bands),
            }),
            other => Err(answer_error(other)),
        }
    }
}
