//! `verify` / `observe` on mutating tools: sample the target before the action, judge the
//! screen after it, and fold the verdict into the tool's result (`effect`, text, image).

use std::time::Duration;

use deskpilot_engine::{Engine, Error, Verdict, VerifyTarget};
use rmcp::model::CallToolResult;
use serde_json::json;

use super::DeskpilotServer;
use crate::render;

/// What the caller asked to be checked.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Check {
    pub verify: bool,
    pub observe: bool,
}

impl Check {
    pub(crate) fn new(verify: bool, observe: bool) -> Self {
        Check { verify, observe }
    }

    fn on(self) -> bool {
        self.verify || self.observe
    }
}

impl DeskpilotServer {
    /// Runs `f` on the blocking pool; with a check, samples `target` before and judges after.
    pub(crate) async fn checked<T, F>(
        &self,
        what: &'static str,
        timeout: Duration,
        check: Check,
        target: VerifyTarget,
        f: F,
    ) -> (Result<T, Error>, Option<Result<Verdict, Error>>)
    where
        T: Send + 'static,
        F: FnOnce(&Engine) -> Result<T, Error> + Send + 'static,
    {
        let engine = self.engine();
        let run = render::blocking(timeout, what, move || {
            let before = check.on().then(|| engine.verify_before(target));
            let result = f(&engine);
            let verdict = match (&result, before) {
                (Ok(_), Some(Ok(b))) => Some(engine.verify_after(&b, check.observe)),
                (Ok(_), Some(Err(e))) => Some(Err(e)),
                _ => None,
            };
            Ok((result, verdict))
        })
        .await;
        match run {
            Ok(pair) => pair,
            Err(e) => (Err(e), None),
        }
    }
}

/// Folds a verdict into a rendered success: a "Screen verdict" line, `verify` (and with
/// observe, `observation` + the image) in the structured content, and `effect` decided by the
/// screen when the action itself could not tell.
pub(crate) fn attach(result: &mut CallToolResult, verdict: Option<Result<Verdict, Error>>) {
    let Some(verdict) = verdict else { return };
    if result.is_error == Some(true) {
        return;
    }
    let structured = result.structured_content.get_or_insert_with(|| json!({}));
    let line = match verdict {
        Ok(v) => {
            let pct = v.ratio * 100.0;
            let waited = v.waited.as_millis();
            let line = if v.changed {
                format!(
                    "Screen verdict: changed — {pct:.1} % of sampled pixels of the {} differ from just before the action (seen {waited} ms after it).",
                    v.what
                )
            } else {
                format!(
                    "Screen verdict: NO visible change in the {} ({pct:.1} % of sampled pixels differ; watched for {waited} ms). The action probably did nothing — look again before repeating it.",
                    v.what
                )
            };
            structured["verify"] = json!({
                "changed": v.changed,
                "ratio": v.ratio,
                "waited_ms": waited,
                "target": v.what,
            });
            let undecided = match structured.get("effect") {
                None => true,
                Some(e) => e == "unverifiable",
            };
            if undecided {
                structured["effect"] = json!(if v.changed {
                    "confirmed"
                } else {
                    "suspected_noop"
                });
                replace_effect_line(render::text_mut(result), v.changed);
            }
            if let Some(shot) = v.screenshot {
                let image = super::screenshot::image_result("Observation", &shot, &v.what);
                let structured = result.structured_content.get_or_insert_with(|| json!({}));
                structured["observation"] = image.structured_content.unwrap_or_default();
                result.content.extend(image.content);
            }
            line
        }
        Err(e) => {
            structured["verify"] =
                json!({ "error": { "code": e.code().as_str(), "message": e.to_string() } });
            format!("Screen verdict unavailable: {e}")
        }
    };
    if let Some(text) = render::text_mut(result) {
        text.push('\n');
        text.push_str(&line);
    }
}

fn replace_effect_line(text: Option<&mut String>, changed: bool) {
    let Some(text) = text else { return };
    let effect = if changed {
        "Effect: confirmed (the screen changed)."
    } else {
        "Effect: suspected_noop (the screen did not change)."
    };
    match text.find("Effect: unverifiable") {
        Some(start) => {
            let end = text[start..].find('\n').map_or(text.len(), |e| start + e);
            text.replace_range(start..end, effect);
        }
        None => {
            text.push('\n');
            text.push_str(effect);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_effect_line_is_replaced_in_place() {
        let mut t = "Clicked.\nEffect: unverifiable (take a screenshot).\nWarning: x".to_string();
        replace_effect_line(Some(&mut t), true);
        assert_eq!(
            t,
            "Clicked.\nEffect: confirmed (the screen changed).\nWarning: x"
        );
        let mut t = "Typed.".to_string();
        replace_effect_line(Some(&mut t), false);
        assert_eq!(
            t,
            "Typed.\nEffect: suspected_noop (the screen did not change)."
        );
    }
}
