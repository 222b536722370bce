//! One page session: turning its events on, navigating it, reading its frames and their
//! accessibility trees, and its pixels as the browser draws them.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::cdp::Connection;
use crate::snapshot::FrameTree;
use crate::{CALL, Error};

/// Turns on the DOM, page and network events of page `session` (navigations and requests are
/// counted by the connection, see [`Connection::activity`]). Best effort: a page that refuses
/// one still works without it.
pub fn enable(cdp: &Connection, session: &str) {
    for method in ["DOM.enable", "Page.enable", "Network.enable"] {
        let _ = cdp.call(method, json!({}), Some(session), CALL);
    }
}

/// Starts loading `url` in the page; `Ok(Some(text))` is the browser's reason it could not
/// (`net::ERR_NAME_NOT_RESOLVED`, …).
pub fn navigate(cdp: &Connection, session: &str, url: &str) -> Result<Option<String>, Error> {
    let r = cdp.call("Page.navigate", json!({ "url": url }), Some(session), CALL)?;
    Ok(r["errorText"]
        .as_str()
        .filter(|e| !e.is_empty())
        .map(str::to_string))
}

/// The ids of the page's frames, the top frame first, then each child before its siblings.
pub fn frames(cdp: &Connection, session: &str) -> Result<Vec<String>, Error> {
    let tree = cdp.call("Page.getFrameTree", json!({}), Some(session), CALL)?;
    let mut out = Vec::new();
    collect_frames(&tree["frameTree"], &mut out);
    Ok(out)
}

fn collect_frames(tree: &Value, out: &mut Vec<String>) {
    if let Some(id) = tree["frame"]["id"].as_str() {
        out.push(id.to_string());
    }
    if let Some(children) = tree["childFrames"].as_array() {
        for c in children {
            collect_frames(c, out);
        }
    }
}

/// The raw accessibility nodes of one frame (`Accessibility.getFullAXTree`).
pub fn ax_nodes(cdp: &Connection, session: &str, frame: &str) -> Result<Vec<Value>, Error> {
    let nodes = cdp.call(
        "Accessibility.getFullAXTree",
        json!({ "frameId": frame }),
        Some(session),
        CALL,
    )?;
    // Taken, not copied: a large page's tree is megabytes of JSON.
    Ok(match nodes {
        Value::Object(mut o) => match o.remove("nodes") {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    })
}

/// The node of the element (an `<iframe>`) that holds frame `frame`, when there is one.
pub fn frame_owner(cdp: &Connection, session: &str, frame: &str) -> Option<i64> {
    cdp.call(
        "DOM.getFrameOwner",
        json!({ "frameId": frame }),
        Some(session),
        CALL,
    )
    .ok()
    .and_then(|o| o["backendNodeId"].as_i64())
}

/// Every frame's accessibility tree with the node that holds it, ready for
/// [`snapshot::render`](crate::snapshot::render).
pub fn frame_trees(cdp: &Connection, session: &str) -> Result<Vec<FrameTree>, Error> {
    let frames = frames(cdp, session)?;
    let mut trees = Vec::with_capacity(frames.len());
    for (i, frame) in frames.into_iter().enumerate() {
        let nodes = ax_nodes(cdp, session, &frame)?;
        let owner = if i == 0 {
            None
        } else {
            frame_owner(cdp, session, &frame)
        };
        trees.push(FrameTree {
            frame,
            owner,
            nodes,
        });
    }
    Ok(trees)
}

/// The page's viewport as a PNG, drawn within `timeout` (a page in a background tab or a
/// minimized window never draws); `Ok(None)` when the browser sent no image.
pub fn capture_png(
    cdp: &Connection,
    session: &str,
    timeout: Duration,
) -> Result<Option<Vec<u8>>, Error> {
    let png = cdp.call(
        "Page.captureScreenshot",
        json!({ "format": "png" }),
        Some(session),
        timeout,
    )?;
    Ok(png["data"]
        .as_str()
        .and_then(|d| base64::engine::general_purpose::STANDARD.decode(d).ok()))
}
