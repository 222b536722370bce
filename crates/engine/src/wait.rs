//! `wait_for`: poll the desktop until something holds, with a deadline.
//!
//! - `stable`: the target's pixels stop changing. Each capture is reduced to a signature of
//!   sampled pixels (a 64×64 grid, after the privacy masks); a frame is quiet when fewer than
//!   0.2 % of the samples moved since the previous one, so a blinking caret does not count as
//!   change. Stable means quiet frames for `stable` in a row.
//! - `window`: a window whose title or process contains the text exists.
//! - `element`: an element whose name contains the text is in the window's tree.
//! - `text`: an element whose value or text contains the text is in the window's tree.
//!
//! A timeout is `WAIT_TIMEOUT`, saying what was last seen (the changed share of the last
//! frames, or the windows listed) so the agent can decide whether to wait longer. A wait whose
//! call is cancelled ([`crate::Cancel`]) ends at its next pause with `CANCELLED`.

use std::time::{Duration, Instant};

use deskpilot_types::Rect;

use crate::signature::{Signature, difference};
use crate::tree::TreeRequest;
use crate::{error::Error, session::Session, window::WindowRef};

pub use crate::limits::MAX_WAIT;
/// What to wait for.
#[derive(Debug, Clone, PartialEq)]
pub enum WaitKind {
    /// No change for this long.
    Stable { quiet: Duration },
    /// A window whose title or process name contains this.
    Window(String),
    /// An element whose name contains this, in `window`'s tree.
    Element(String),
    /// An element whose value or text contains this, in `window`'s tree.
    Text(String),
}

/// A wait request.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitRequest {
    pub kind: WaitKind,
    /// OCR languages for `Text` when the tree does not have it (empty: the engine's default).
    pub languages: Vec<String>,
    /// The window to watch (`stable`, `element`, `text`); the whole screen for `stable` when `None`.
    pub window: Option<WindowRef>,
    pub timeout: Duration,
}

/// What a finished wait saw.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitOutcome {
    pub waited: Duration,
    /// Frames captured (`stable`) or polls made (the others).
    pub frames: u32,
    /// Changed share of the last frame (`stable`).
    pub ratio: Option<f64>,
    /// What matched: a window label or an element line.
    pub matched: Option<String>,
    /// Where an `Element` or `Text` wait found it: `accessibility` or `ocr`.
    pub source: Option<&'static str>,
    /// What the caller should know (which window was watched when none was named).
    pub notes: Vec<crate::note::Note>,
}

impl Session {
    /// Waits until `request` holds or its timeout passes (`WAIT_TIMEOUT`).
    pub fn wait_for(&self, request: &WaitRequest) -> Result<WaitOutcome, Error> {
        if request.timeout > MAX_WAIT {
            return Err(Error::InvalidArgument {
                message: format!(
                    "timeout_ms {} is beyond the {} ms maximum",
                    request.timeout.as_millis(),
                    MAX_WAIT.as_millis()
                ),
            });
        }
        let started = Instant::now();
        let deadline = started + request.timeout;
        match &request.kind {
            WaitKind::Stable { quiet } => {
                let quiet = crate::limits::clamp_duration(crate::limits::STABLE_MS, *quiet);
                self.wait_stable(request, quiet, started, deadline)
            }
            WaitKind::Window(needle) => {
                let needle = needle.to_lowercase();
                let mut polls = 0;
                loop {
                    polls += 1;
                    let windows = self.desktop().windows.list_windows()?;
                    if let Some(w) = windows.iter().find(|w| {
                        w.title.to_lowercase().contains(&needle)
                            || w.process
                                .as_deref()
                                .is_some_and(|p| p.to_lowercase().contains(&needle))
                    }) {
                        return Ok(WaitOutcome {
                            waited: started.elapsed(),
                            frames: polls,
                            ratio: None,
                            matched: Some(w.label()),
                            source: None,
                            notes: Vec::new(),
                        });
                    }
                    if Instant::now() >= deadline {
                        let titles: Vec<String> =
                            windows.iter().take(12).map(|w| w.label()).collect();
                        return Err(Error::WaitTimeout {
                            waited: started.elapsed(),
                            what: format!(
                                "no window's title or process contains \"{needle}\"; windows now: {}",
                                titles.join(", ")
                            ),
                        });
                    }
                    crate::cancel::pause(Duration::from_millis(100), "waiting for a window")?;
                }
            }
            WaitKind::Element(needle) | WaitKind::Text(needle) => {
                let by_name = matches!(request.kind, WaitKind::Element(_));
                let doing = if by_name {
                    "waiting for an element"
                } else {
                    "waiting for a text"
                };
                let mut notes = Vec::new();
                let window = WindowRef::Id(
                    self.resolve_window_noted(
                        request.window.as_ref().unwrap_or(&WindowRef::Current),
                        &mut notes,
                    )?
                    .id,
                );
                let needle = needle.to_lowercase();
                let mut polls = 0;
                // Text the tree does not have is looked for on the pixels too, while OCR works.
                let mut ocr_works = !by_name;
                let mut ocr_lines = 0;
                loop {
                    polls += 1;
                    let remaining = deadline.saturating_duration_since(Instant::now());
                    let snapshot = self.window_state(&TreeRequest {
                        include_screenshot: false,
                        max_elements: 2000,
                        // One poll's read within the default read time; the lower
                        // bound is the tree request's own (`limits::TREE_TIMEOUT_MS`).
                        timeout: remaining.min(crate::tree::TREE_TIMEOUT),
                        ..TreeRequest::new(window.clone())
                    })?;
                    let hit = snapshot.elements.iter().find(|e| {
                        if by_name {
                            e.name.to_lowercase().contains(&needle)
                        } else {
                            e.value
                                .as_deref()
                                .is_some_and(|v| v.to_lowercase().contains(&needle))
                                || (e.role == deskpilot_types::Role::Text
                                    && e.name.to_lowercase().contains(&needle))
                        }
                    });
                    if let Some(e) = hit {
                        return Ok(WaitOutcome {
                            waited: started.elapsed(),
                            frames: polls,
                            ratio: None,
                            matched: Some(format!("{} (token {})", crate::tree::line(e), e.token)),
                            source: Some("accessibility"),
                            notes,
                        });
                    }
                    if ocr_works {
                        crate::cancel::check(doing)?;
                        let WindowRef::Id(id) = window else {
                            unreachable!("the window was resolved to an id above")
                        };
                        let mut ocr =
                            crate::ocr::OcrRequest::new(crate::capture::CaptureTarget::Window(id));
                        ocr.languages = request.languages.clone();
                        // Polls read without registering; only the capture that has the
                        // text becomes a screenshot.
                        let found = self.read_text(&ocr).and_then(|reading| {
                            ocr_lines = reading.lines.len();
                            if reading.contains(&needle) {
                                self.place_reading(reading, &ocr).map(Some)
                            } else {
                                Ok(None)
                            }
                        });
                        match found {
                            Ok(None) => {}
                            Ok(Some(read)) => {
                                if let Some(line) = read.matching(&needle).first() {
                                    let at = line.image_centre.map_or(String::new(), |(x, y)| {
                                        format!(
                                            " at ({x}, {y}) in screenshot {}",
                                            read.screenshot.id
                                        )
                                    });
                                    return Ok(WaitOutcome {
                                        waited: started.elapsed(),
                                        frames: polls,
                                        ratio: None,
                                        matched: Some(format!(
                                            "\"{}\" read off the pixels by OCR{at} (confidence {:.0}; not in the accessibility tree)",
                                            line.line.text, line.line.confidence
                                        )),
                                        source: Some("ocr"),
                                        notes,
                                    });
                                }
                            }
                            Err(e) if e.code() == deskpilot_types::ErrorCode::OcrUnavailable => {
                                notes.push(crate::note::Note::TreeOnly {
                                    error: e.to_string(),
                                });
                                ocr_works = false;
                            }
                            Err(
                                e
                                @ (Error::WindowMinimized { .. } | Error::WindowNotVisible { .. }),
                            ) => {
                                let _ = e;
                            }
                            Err(e) => return Err(e),
                        }
                    }
                    if Instant::now() >= deadline {
                        return Err(Error::WaitTimeout {
                            waited: started.elapsed(),
                            what: format!(
                                "no element {} \"{needle}\" in {} ({} elements read {polls} times{})",
                                if by_name {
                                    "named like"
                                } else {
                                    "with text like"
                                },
                                snapshot.window.label(),
                                snapshot.elements.len(),
                                if ocr_works {
                                    format!("; OCR read {ocr_lines} lines of its pixels without it")
                                } else {
                                    String::new()
                                }
                            ),
                        });
                    }
                    crate::cancel::pause(Duration::from_millis(150), doing)?;
                }
            }
        }
    }

    fn wait_stable(
        &self,
        request: &WaitRequest,
        quiet: Duration,
        started: Instant,
        deadline: Instant,
    ) -> Result<WaitOutcome, Error> {
        let rect = |engine: &Session| -> Result<Rect, Error> {
            match &request.window {
                Some(w) => Ok(engine.resolve_window(w)?.frame),
                None => Ok(engine.desktop().screens.desktop_bounds()?),
            }
        };
        // One frame buffer for the whole wait: a full screen is megabytes per capture.
        let mut buffer = Vec::new();
        let mut capture = |engine: &Session, r: Rect| -> Result<Signature, Error> {
            engine.sample(r, &mut buffer)
        };
        let mut previous = capture(self, rect(self)?)?;
        let mut frames = 1;
        let mut quiet_since = Instant::now();
        let mut ratios: Vec<f64> = Vec::new();
        loop {
            crate::cancel::pause(
                Duration::from_millis(50),
                "waiting for the pixels to settle",
            )?;
            let r = rect(self)?;
            let now_sig = capture(self, r)?;
            frames += 1;
            let d = difference(&previous, &now_sig, &self.overlay_regions());
            let ratio = d.ratio;
            previous = now_sig;
            ratios.push(ratio);
            if d.changed {
                quiet_since = Instant::now();
            }
            if quiet_since.elapsed() >= quiet {
                return Ok(WaitOutcome {
                    waited: started.elapsed(),
                    frames,
                    ratio: Some(ratio),
                    matched: None,
                    source: None,
                    notes: Vec::new(),
                });
            }
            if Instant::now() >= deadline {
                let recent: Vec<String> = ratios
                    .iter()
                    .rev()
                    .take(5)
                    .map(|r| format!("{:.1} %", r * 100.0))
                    .collect();
                return Err(Error::WaitTimeout {
                    waited: started.elapsed(),
                    what: format!(
                        "the {} kept changing: the last frames differed in {} of their 16-pixel cells (quiet is at most a caret-sized patch)",
                        if request.window.is_some() {
                            "window"
                        } else {
                            "screen"
                        },
                        recent.join(", "),
                    ),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::FakeWindow;
    use deskpilot_types::ErrorCode;

    use super::*;
    use crate::config::EngineConfig;

    #[test]
    fn a_still_screen_is_stable_and_missing_windows_time_out_saying_what_exists() {
        let fake = FakeDesktop::new(200, 100);
        fake.add_window(FakeWindow::new("Editor", Rect::new(0, 0, 100, 100)));
        let e = Session::standalone(fake.desktop(), EngineConfig::default());
        let o = e
            .wait_for(&WaitRequest {
                kind: WaitKind::Stable {
                    quiet: Duration::from_millis(100),
                },
                window: None,
                languages: Vec::new(),
                timeout: Duration::from_secs(2),
            })
            .unwrap();
        assert!(o.frames >= 3 && o.ratio == Some(0.0), "{o:?}");
        let o = e
            .wait_for(&WaitRequest {
                kind: WaitKind::Window("edit".into()),
                window: None,
                languages: Vec::new(),
                timeout: Duration::from_secs(1),
            })
            .unwrap();
        assert_eq!(o.frames, 1);
        let err = e
            .wait_for(&WaitRequest {
                kind: WaitKind::Window("Calculator".into()),
                window: None,
                languages: Vec::new(),
                timeout: Duration::from_millis(250),
            })
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::WaitTimeout);
        assert!(err.to_string().contains("\"Editor\""), "{err}");
    }
}
