//! `status`: the backend, monitors, windows, the guard and this session's last screenshot,
//! as one report a profile words.

use deskpilot_backend::BackendInfo;
use deskpilot_types::{Monitor, Rect, WindowInfo};

use crate::guard::{GuardStatus, SafetyConfig};
use crate::registry::ScreenshotRecord;
use crate::{error::Error, session::Session};

/// What `status` reports.
#[derive(Debug, Clone)]
pub struct StatusReport {
    pub backend: BackendInfo,
    pub monitors: Vec<Monitor>,
    pub desktop: Rect,
    pub window_count: usize,
    pub active_window: Option<WindowInfo>,
    pub last_screenshot: Option<ScreenshotRecord>,
    pub mask_regions: usize,
    /// The deployment's gates for mutating actions.
    pub safety: SafetyConfig,
    /// The pointer in physical pixels, when the platform reports it.
    pub cursor: Option<deskpilot_types::Point>,
    /// Kill switch, overlay and the count of mutating actions.
    pub guard: GuardStatus,
}

impl Session {
    /// Backend, monitors, windows and the last screenshot.
    pub fn status(&self) -> Result<StatusReport, Error> {
        let monitors = self.desktop().screens.monitors()?;
        let desktop = self.desktop().screens.desktop_bounds()?;
        let windows = self.desktop().windows.list_windows()?;
        let last_screenshot = self.shots_now().last().cloned();
        Ok(StatusReport {
            backend: self.desktop().info.clone(),
            monitors,
            desktop,
            window_count: windows.len(),
            active_window: windows.iter().find(|w| w.state.active).cloned(),
            last_screenshot,
            mask_regions: self.config.mask_regions.len(),
            safety: self.config.safety.clone(),
            cursor: self.desktop().pointer.position().ok(),
            guard: GuardStatus {
                approver: self.approver().is_some(),
                ..self.guard_status()
            },
        })
    }
}

/// What a readiness probe reports beside "the desktop answers": one word each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Readiness {
    /// `ok` (the active window's tree reads), `empty`, `unavailable`, `error` or `unchecked`
    /// (no active window).
    pub accessibility: &'static str,
    /// `ok` (an OCR engine with languages) or `unavailable`.
    pub ocr: &'static str,
}

impl Session {
    /// The desktop answers (monitors and windows read back), and whether accessibility and
    /// OCR work; an error when the desktop does not answer.
    pub fn readiness(&self) -> Result<Readiness, Error> {
        let status = self.status()?;
        let accessibility = match &status.active_window {
            None => "unchecked",
            Some(w) => {
                let mut request = crate::tree::TreeRequest::new(crate::window::WindowRef::Id(w.id));
                request.include_screenshot = false;
                request.max_elements = 50;
                request.max_chars = 1;
                match self.window_state(&request) {
                    Ok(s) if !s.elements.is_empty() => "ok",
                    Ok(_) => "empty",
                    Err(e) if e.code() == deskpilot_types::ErrorCode::AccessibilityUnavailable => {
                        "unavailable"
                    }
                    Err(_) => "error",
                }
            }
        };
        let ocr = if self.desktop().ocr.info().languages.is_ok() {
            "ok"
        } else {
            "unavailable"
        };
        Ok(Readiness { accessibility, ocr })
    }
}
