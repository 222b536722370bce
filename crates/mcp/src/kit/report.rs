//! Rendering an engine [`ActionReport`]: the tool's own text and structured content, then
//! what every mutating action says the same way — `route`, `effect` and its line, the screen
//! verdict of `verify` / `observe` and the observation image. The effect is the engine's
//! decision; nothing here reads text to decide it.

use std::time::Duration;

use deskpilot_engine::{
    ActionReport, Check, Effect, Error, Evidence, Outcome, Route, Session, VerifyTarget,
};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use super::{Wording, render};

/// A tool's own rendering of an outcome: its text (without the effect line) and its
/// structured fields.
#[derive(Debug)]
pub(crate) struct Body {
    pub text: String,
    pub structured: Value,
}

impl Body {
    pub(crate) fn new(text: String, structured: Value) -> Self {
        Body { text, structured }
    }
}

/// How one mutating call runs: its name (for timeouts), its deadline, what to check and
/// which target the check samples.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Step {
    pub what: &'static str,
    pub timeout: Duration,
    pub check: Check,
    pub target: VerifyTarget,
}

/// Runs a mutating operation through the engine's pipeline on the blocking pool with a
/// deadline, and renders its report with `body`.
pub(crate) async fn act<T, F>(
    session: std::sync::Arc<Session>,
    wording: &dyn Wording,
    step: Step,
    f: F,
    body: impl FnOnce(&T) -> Body,
) -> CallToolResult
where
    T: Outcome + Send + 'static,
    F: FnOnce(&Session) -> Result<T, Error> + Send + 'static,
{
    let Step {
        what,
        timeout,
        check,
        target,
    } = step;
    let run = render::blocking(timeout, what, move || session.act(check, target, f)).await;
    match run {
        Ok(report) => {
            let b = body(&report.outcome);
            render(report, b, wording, target)
        }
        Err(e) => render::error(&e, wording),
    }
}

/// The result of a mutating action that succeeded; `target` is what its check sampled.
pub(crate) fn render<T>(
    report: ActionReport<T>,
    body: Body,
    wording: &dyn Wording,
    target: VerifyTarget,
) -> CallToolResult {
    let Body {
        mut text,
        mut structured,
    } = body;
    if !structured.is_object() {
        structured = json!({});
    }
    structured["route"] = json!(report.route.as_str());
    structured["effect"] = json!(report.effect.as_str());
    text.push('\n');
    text.push_str(&effect_line(
        report.effect,
        report.evidence,
        report.route,
        wording,
    ));
    let mut images = Vec::new();
    if let Some(v) = report.verdict {
        let pct = v.ratio * 100.0;
        let waited = v.waited.as_millis();
        text.push('\n');
        text.push_str(&if v.changed {
            format!(
                "Screen verdict: changed — {pct:.1} % of sampled pixels of the {} differ from just before the action (seen {waited} ms after it).",
                v.what
            )
        } else {
            format!(
                "Screen verdict: NO visible change in the {} ({pct:.1} % of sampled pixels differ; watched for {waited} ms). The action probably did nothing — look again before repeating it.",
                v.what
            )
        });
        structured["verify"] = json!({
            "changed": v.changed,
            "ratio": v.ratio,
            "waited_ms": waited,
            "target": v.what,
        });
        if let (Value::Object(s), Value::Object(more)) =
            (&mut structured, wording.verdict_fields(&v, target))
        {
            s.extend(more);
        }
        if let Some(shot) = &v.screenshot {
            let image = wording.image("Observation", shot, &v.what);
            structured["observation"] = image.structured_content.unwrap_or_default();
            images.extend(image.content);
        }
    }
    if let Some(e) = report.verdict_error {
        structured["verify"] =
            json!({ "error": { "code": e.code().as_str(), "message": e.to_string() } });
        text.push_str(&format!("\nScreen verdict unavailable: {e}"));
    }
    let mut content = vec![ContentBlock::text(text)];
    content.extend(images);
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(structured);
    result
}

/// "Effect: …" as the profile words it.
fn effect_line(effect: Effect, evidence: Evidence, route: Route, wording: &dyn Wording) -> String {
    match (effect, evidence) {
        (Effect::Confirmed, Evidence::Screen) => {
            "Effect: confirmed (the screen changed).".to_string()
        }
        (Effect::SuspectedNoop, Evidence::Screen) => {
            "Effect: suspected_noop (the screen did not change).".to_string()
        }
        (Effect::Confirmed, Evidence::Outcome(by)) => format!("Effect: confirmed by {by}."),
        (Effect::SuspectedNoop, Evidence::Outcome(by)) => format!(
            "Effect: suspected_noop — nothing changed that {by} show; look again before repeating it."
        ),
        (Effect::Unverifiable, _) => {
            format!("Effect: unverifiable ({}).", wording.unverifiable(route))
        }
        (effect, _) => format!("Effect: {}.", effect.as_str()),
    }
}

/// `Typed secret MAIL_PASS into Edit "Password" (s3:7) in "Sign in" (zenity, pid 42).`
pub(crate) fn secret_body(o: &deskpilot_engine::SecretTyped) -> Body {
    let target = match &o.element {
        Some((token, role, name)) => format!("{role} \"{name}\" ({token}) in {}", o.window.label()),
        None => format!("the field clicked in {}", o.window.label()),
    };
    let mut text = format!("Typed secret {} into {target}.", o.name);
    if !o.password_field {
        text.push_str(" It is not a password field (the secret's scope allows any field).");
    }
    Body::new(
        text,
        json!({
            "action": "type_secret",
            "secret": o.name,
            "source": o.source.as_str(),
            "window": o.window,
            "element": o.element.as_ref().map(|(token, role, name)| json!({ "token": token, "role": role, "name": name })),
            "password_field": o.password_field,
            "field": o.effect.as_str(),
            "approval": o.approval,
        }),
    )
}
