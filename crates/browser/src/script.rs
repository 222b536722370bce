//! The JavaScript deskpilot runs in a page's main world, and the agent's own scripts. Each
//! script is a `.js` file beside this one (`js/`), pulled in with `include_str!`, so it reads
//! (and lints) as JavaScript; an argument is passed as JSON, never spliced into the source
//! (the agent's own expression is the one exception: it is source).

use serde_json::{Value, json};

use crate::cdp::{Connection, thrown};
use crate::{CALL, Error};

/// URL, title, DOM size, text length and the focused control's value, one a line.
const PAGE_STATE: &str = include_str!("js/page_state.js");
/// `true` once the document has loaded.
const LOADED: &str = include_str!("js/loaded.js");
/// `true` once the document has loaded and is not the blank page a browser starts on.
const LOADED_PAST_BLANK: &str = include_str!("js/loaded_past_blank.js");
/// `(value) => value`, a promise replaced by [`PROMISE`].
const UNAWAITED: &str = include_str!("js/unawaited.js");
/// `(text) => bool`: the page's text contains `text`.
const HAS_TEXT: &str = include_str!("js/has_text.js");
/// `(selector) => bool`: a CSS selector matches an element.
const HAS_SELECTOR: &str = include_str!("js/has_selector.js");
/// The viewport and media features the page sees (see [`Media`]).
const MEDIA: &str = include_str!("js/media.js");
/// The page's window geometry and pixel ratio (see [`Metrics`]).
const METRICS: &str = include_str!("js/metrics.js");

/// What a script gave back.
#[derive(Debug, Clone, PartialEq)]
pub enum Evaluated {
    /// Its value as JSON (promises awaited).
    Value(Value),
    /// It threw: the exception's description.
    Threw(String),
}

/// Runs the agent's `expression` in the page, awaiting a promise, and returns its JSON value.
pub fn evaluate(cdp: &Connection, session: &str, expression: &str) -> Result<Evaluated, Error> {
    evaluate_with(cdp, session, expression, true)
}

/// What a promise the page was not asked to await comes back as.
pub const PROMISE: &str = "[object Promise]";

/// Runs the agent's `expression` in the page and returns its JSON value; a promise it returns
/// is awaited when `await_promise`, else it comes back as [`PROMISE`] (by value, a promise
/// would be an empty object).
pub fn evaluate_with(
    cdp: &Connection,
    session: &str,
    expression: &str,
    await_promise: bool,
) -> Result<Evaluated, Error> {
    let expression = if await_promise {
        expression.to_string()
    } else {
        unawaited(expression)
    };
    let r = cdp.call(
        "Runtime.evaluate",
        json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        Some(session),
        CALL,
    )?;
    if let Some(ex) = r.get("exceptionDetails") {
        let message = thrown(ex).unwrap_or("the script threw");
        return Ok(Evaluated::Threw(message.to_string()));
    }
    Ok(Evaluated::Value(r["result"]["value"].clone()))
}

/// The agent's `expression` with a promise it returns replaced by [`PROMISE`]. The expression
/// is the agent's own source, so it is the one text that goes into a script as it is.
fn unawaited(expression: &str) -> String {
    format!("({})(({expression}\n))", UNAWAITED.trim())
}

/// The value of one of deskpilot's own expressions; `None` when it threw or the page is gone.
fn value(cdp: &Connection, session: &str, expression: &str) -> Option<Value> {
    value_within(cdp, session, expression, CALL)
}

fn value_within(
    cdp: &Connection,
    session: &str,
    expression: &str,
    timeout: std::time::Duration,
) -> Option<Value> {
    let mut v = cdp
        .call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true }),
            Some(session),
            timeout,
        )
        .ok()?;
    Some(v["result"]["value"].take())
}

/// `function` (a `.js` file's arrow function) applied to `arg`, as an expression.
fn applied(function: &str, arg: &str) -> String {
    format!(
        "({})({})",
        function.trim(),
        serde_json::to_string(arg).unwrap_or_default()
    )
}

/// The page's state as one string (URL, title, DOM size, text length, focused value): an
/// action changed the page when this moved. `None` when the page has no document to ask (it
/// navigated away).
pub fn page_state(cdp: &Connection, session: &str) -> Option<String> {
    // Briefly: a dialog the action opened holds every script until it is answered.
    value_within(cdp, session, PAGE_STATE, STATE_CALL)?
        .as_str()
        .map(str::to_string)
}

/// How long reading the page's state may take.
const STATE_CALL: std::time::Duration = std::time::Duration::from_secs(3);

/// The document has finished loading.
pub fn loaded(cdp: &Connection, session: &str) -> bool {
    value(cdp, session, LOADED).and_then(|v| v.as_bool()) == Some(true)
}

/// The document has finished loading and is not `about:blank`: a page given a URL shows the
/// blank page, loaded, before it starts on the URL.
pub fn loaded_past_blank(cdp: &Connection, session: &str) -> bool {
    value(cdp, session, LOADED_PAST_BLANK).and_then(|v| v.as_bool()) == Some(true)
}

/// The page's text (`innerText`) contains `text`.
pub fn has_text(cdp: &Connection, session: &str, text: &str) -> bool {
    value(cdp, session, &applied(HAS_TEXT, text)).and_then(|v| v.as_bool()) == Some(true)
}

/// An element matches CSS `selector` (an invalid selector matches nothing).
pub fn has_selector(cdp: &Connection, session: &str, selector: &str) -> bool {
    value(cdp, session, &applied(HAS_SELECTOR, selector)).and_then(|v| v.as_bool()) == Some(true)
}

/// How the page sees itself shown: viewport (CSS pixels) and media features.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Media {
    pub width: u32,
    pub height: u32,
    /// `light` or `dark`.
    pub color_scheme: String,
    pub reduced_motion: bool,
    pub print: bool,
}

/// The page's viewport and media features, as its scripts and styles see them.
pub fn media(cdp: &Connection, session: &str) -> Option<Media> {
    let v = value(cdp, session, MEDIA)?;
    let dim = |k: &str| v[k].as_u64().and_then(|n| u32::try_from(n).ok());
    Some(Media {
        width: dim("width")?,
        height: dim("height")?,
        color_scheme: if v["dark"].as_bool()? {
            "dark"
        } else {
            "light"
        }
        .to_string(),
        reduced_motion: v["reduced"].as_bool()?,
        print: v["print"].as_bool()?,
    })
}

/// The page's window as the page sees it (CSS pixels) and its pixel ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metrics {
    /// `screenX`, `screenY`: the window's top-left corner on the screen.
    pub screen_x: f64,
    pub screen_y: f64,
    /// `outerWidth`, `outerHeight`: the whole window.
    pub outer_w: f64,
    pub outer_h: f64,
    /// `innerWidth`, `innerHeight`: the viewport.
    pub inner_w: f64,
    pub inner_h: f64,
    /// `devicePixelRatio` (1 when the page reports none).
    pub ratio: f64,
    /// The tab is in front (`document.visibilityState == "visible"`).
    pub visible: bool,
}

impl Metrics {
    fn read(v: &Value) -> Option<Metrics> {
        let n = |k: &str| v[k].as_f64();
        Some(Metrics {
            screen_x: n("sx")?,
            screen_y: n("sy")?,
            outer_w: n("ow")?,
            outer_h: n("oh")?,
            inner_w: n("iw")?,
            inner_h: n("ih")?,
            ratio: n("dpr").filter(|r| *r > 0.0).unwrap_or(1.0),
            visible: v["vis"] == "visible",
        })
    }
}

/// The page's window metrics, when the page answers.
pub fn metrics(cdp: &Connection, session: &str) -> Option<Metrics> {
    Metrics::read(&value(cdp, session, METRICS)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_argument_is_passed_as_json() {
        assert_eq!(
            applied("(t) => t.length\n", "a\"b"),
            r#"((t) => t.length)("a\"b")"#
        );
    }

    #[test]
    fn an_unawaited_expression_is_applied_whole() {
        assert_eq!(
            unawaited("fetch(u) // the page's"),
            format!("({})((fetch(u) // the page's\n))", UNAWAITED.trim())
        );
        assert!(UNAWAITED.contains(PROMISE));
    }

    #[test]
    fn reads_metrics() {
        let v = json!({"sx": 1, "sy": 2, "ow": 3, "oh": 4, "iw": 5, "ih": 6, "dpr": 0, "vis": "visible"});
        let m = Metrics::read(&v).unwrap();
        assert_eq!(
            (m.screen_x, m.inner_h, m.ratio, m.visible),
            (1.0, 6.0, 1.0, true)
        );
        assert_eq!(Metrics::read(&json!({"sx": 1})), None);
    }
}
