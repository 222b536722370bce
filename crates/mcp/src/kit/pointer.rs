//! The answer of a pointer action, declared once: the profile's opening words, then what every
//! profile says the same way — where the pointer landed (and whether it needed a retry), the
//! window under the point in the profile's words and each hit-test warning.

use deskpilot_engine::{PointerOutcome, Receipt};
use deskpilot_types::WindowInfo;
use serde_json::Value;

use super::report::Body;

/// `landed at (x, y)`, with ` after one retry` when the pointer needed one.
pub(crate) fn landed(r: &Receipt) -> String {
    format!(
        "landed at ({}, {}){}",
        r.x,
        r.y,
        if r.retried { " after one retry" } else { "" }
    )
}

/// The body of a pointer action: `opening` followed by [`landed`], the window under the point
/// as `window` words it, every warning, and `structured` as the profile shapes it.
pub(crate) fn body(
    opening: &str,
    o: &PointerOutcome,
    window: impl Fn(&WindowInfo) -> String,
    structured: Value,
) -> Body {
    let mut text = format!("{opening}{}.", landed(&o.receipt));
    if let Some(w) = &o.window {
        text.push_str(&format!("\nUnder the point: {}.", window(w)));
    }
    warnings(&mut text, &o.warnings);
    Body::new(text, structured)
}

/// One `Warning:` line per warning.
pub(crate) fn warnings(text: &mut String, warnings: &[impl std::fmt::Display]) {
    for w in warnings {
        text.push_str(&format!("\nWarning: {w}"));
    }
}
