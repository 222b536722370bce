//! One page session: turning its events on, navigating it, reading its frames and their
//! accessibility trees, and its pixels as the browser draws them.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::cdp::Connection;
use crate::snapshot::FrameTree;
use crate::{CALL, Error};

/// Turns on the DOM, page, network, runtime and log events of page `session` (navigations,
/// requests, console messages and dialogs are kept by the connection, see
/// [`Connection::activity`] and [`Connection::console`]). Best effort: a page that refuses one
/// still works without it.
pub fn enable(cdp: &Connection, session: &str) {
    for method in [
        "DOM.enable",
        "Page.enable",
        "Network.enable",
        "Runtime.enable",
        "Log.enable",
    ] {
        let _ = cdp.call(method, json!({}), Some(session), CALL);
    }
    // Out-of-process frames (another site's `<iframe>`) as sessions of their own, so the
    // walker reads them and refs inside them act.
    let _ = cdp.call(
        "Target.setAutoAttach",
        json!({ "autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true }),
        Some(session),
        CALL,
    );
}

/// The session to reach `frame` of page `session` through: its own when it is out of
/// process, else the page's.
pub fn session_of(cdp: &Connection, session: &str, frame: &str) -> String {
    cdp.frame_session(session, frame)
        .unwrap_or_else(|| session.to_string())
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

/// Where a step through the page's history leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Back,
    Forward,
}

/// Goes one entry back or forward in the page's history; `Ok(None)` when there is no entry
/// that way, else the URL it goes to.
pub fn history(cdp: &Connection, session: &str, step: Step) -> Result<Option<String>, Error> {
    let h = cdp.call("Page.getNavigationHistory", json!({}), Some(session), CALL)?;
    let at = h["currentIndex"].as_i64().unwrap_or(0);
    let to = match step {
        Step::Back => at - 1,
        Step::Forward => at + 1,
    };
    let Some(entry) = usize::try_from(to)
        .ok()
        .and_then(|i| h["entries"].as_array()?.get(i))
    else {
        return Ok(None);
    };
    cdp.call(
        "Page.navigateToHistoryEntry",
        json!({ "entryId": entry["id"] }),
        Some(session),
        CALL,
    )?;
    Ok(Some(entry["url"].as_str().unwrap_or_default().to_string()))
}

/// Reloads the page.
pub fn reload(cdp: &Connection, session: &str) -> Result<(), Error> {
    cdp.call("Page.reload", json!({}), Some(session), CALL)
        .map(|_| ())
}

/// Answers the JavaScript dialog open on the page: accept (OK, with `prompt` typed into a
/// prompt) or dismiss (Cancel).
pub fn answer_dialog(
    cdp: &Connection,
    session: &str,
    accept: bool,
    prompt: Option<&str>,
) -> Result<(), Error> {
    let mut params = json!({ "accept": accept });
    if let Some(p) = prompt {
        params["promptText"] = json!(p);
    }
    cdp.call("Page.handleJavaScriptDialog", params, Some(session), CALL)
        .map(|_| ())
}

/// How a page is shown: its viewport and the media features it sees.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Emulation {
    /// The viewport in CSS pixels (`None`: the window's own).
    pub viewport: Option<(u32, u32)>,
    /// `prefers-color-scheme`: `light`, `dark` or "" (the system's).
    pub color_scheme: String,
    /// `prefers-reduced-motion`: `reduce`, `no-preference` or "".
    pub reduced_motion: String,
    /// The CSS media type: `screen`, `print` or "".
    pub media: String,
}

/// Shows the page as `e` says (an empty field puts the browser's own back).
pub fn emulate(cdp: &Connection, session: &str, e: &Emulation) -> Result<(), Error> {
    match e.viewport {
        Some((width, height)) => cdp.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 0, "mobile": false }),
            Some(session),
            CALL,
        )?,
        None => cdp.call(
            "Emulation.clearDeviceMetricsOverride",
            json!({}),
            Some(session),
            CALL,
        )?,
    };
    cdp.call(
        "Emulation.setEmulatedMedia",
        json!({
            "media": e.media,
            "features": [
                { "name": "prefers-color-scheme", "value": e.color_scheme },
                { "name": "prefers-reduced-motion", "value": e.reduced_motion },
            ],
        }),
        Some(session),
        CALL,
    )
    .map(|_| ())
}

/// The body of request `id` as the browser kept it (text, or base64 for binary bodies) and
/// whether it is base64.
pub fn response_body(cdp: &Connection, session: &str, id: &str) -> Result<(String, bool), Error> {
    let r = cdp.call(
        "Network.getResponseBody",
        json!({ "requestId": id }),
        Some(session),
        CALL,
    )?;
    Ok((
        r["body"].as_str().unwrap_or_default().to_string(),
        r["base64Encoded"].as_bool().unwrap_or(false),
    ))
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

/// The in-page walker: `(options) => {nodes, remote, epoch, ms}`, the page's accessibility
/// tree in `Accessibility.getFullAXTree`'s node shape, computed over the DOM (see
/// `js/snapshot_walker.md`).
const WALKER: &str = include_str!("js/snapshot_walker.js");

/// The isolated world deskpilot's walker runs in: the page's scripts cannot see or change it,
/// and asking again while the document lives gives the same world (and the walker's ids).
const WORLD: &str = "deskpilot";

/// The walker's result for one frame.
struct Walked {
    nodes: Vec<Value>,
    /// `<iframe>`s whose document it could not read (another origin): their walker ids.
    remote: Vec<i64>,
    /// Names this document's numbering (ids restart with a new document).
    epoch: String,
}

/// The execution context of deskpilot's isolated world in `frame`.
fn world(cdp: &Connection, session: &str, frame: &str) -> Result<i64, Error> {
    let r = cdp.call(
        "Page.createIsolatedWorld",
        json!({ "frameId": frame, "worldName": WORLD }),
        Some(session),
        CALL,
    )?;
    r["executionContextId"]
        .as_i64()
        .ok_or_else(|| Error::Protocol {
            method: "Page.createIsolatedWorld".into(),
            message: "no execution context in the answer".into(),
        })
}

/// Runs the walker in `frame`'s isolated world.
fn walk(cdp: &Connection, session: &str, frame: &str) -> Result<Walked, Error> {
    let context = world(cdp, session, frame)?;
    let r = cdp.call(
        "Runtime.evaluate",
        json!({
            "expression": format!("({WALKER})({{\"json\":true}})"),
            "contextId": context,
            "returnByValue": true,
        }),
        Some(session),
        CALL,
    )?;
    if let Some(ex) = r.get("exceptionDetails") {
        let what = crate::cdp::thrown(ex).unwrap_or("it threw");
        return Err(walker_error(format!("it threw: {what}")));
    }
    let text = r["result"]["value"]
        .as_str()
        .ok_or_else(|| walker_error("it returned no text".into()))?;
    let mut v: Value = serde_json::from_str(text)
        .map_err(|e| walker_error(format!("its result is not JSON: {e}")))?;
    let nodes = match v["nodes"].take() {
        Value::Array(a) => a,
        _ => Vec::new(),
    };
    let remote = v["remote"]
        .as_array()
        .map(|a| a.iter().filter_map(|r| r["id"].as_i64()).collect())
        .unwrap_or_default();
    Ok(Walked {
        nodes,
        remote,
        epoch: v["epoch"].as_str().unwrap_or_default().to_string(),
    })
}

fn walker_error(message: String) -> Error {
    Error::Protocol {
        method: "the snapshot walker".into(),
        message,
    }
}

/// The browser's backend node id of the element the walker numbered `id` in `frame`'s
/// isolated world; `None` when that element is gone (removed, or another document).
pub fn walker_backend(
    cdp: &Connection,
    session: &str,
    frame: &str,
    id: i64,
) -> Result<Option<i64>, Error> {
    let context = world(cdp, session, frame)?;
    let r = cdp.call(
        "Runtime.evaluate",
        json!({
            "expression": format!("(window[Symbol.for('deskpilot.node')] || (() => null))({id})"),
            "contextId": context,
        }),
        Some(session),
        CALL,
    )?;
    let Some(object) = r["result"]["objectId"].as_str() else {
        return Ok(None);
    };
    let described = cdp.call(
        "DOM.describeNode",
        json!({ "objectId": object }),
        Some(session),
        CALL,
    );
    let _ = cdp.call(
        "Runtime.releaseObject",
        json!({ "objectId": object }),
        Some(session),
        CALL,
    );
    Ok(described?["node"]["backendNodeId"].as_i64())
}

/// The frame a walker tree's key names (`<frame id>#<epoch>`).
pub fn walker_frame(key: &str) -> &str {
    key.split_once('#').map_or(key, |(frame, _)| frame)
}

/// Every frame's accessibility tree with the node that holds it, ready for
/// [`snapshot::render`](crate::snapshot::render): the in-page walker's for the top frame and
/// the same-origin frames it reads, the browser's (`Accessibility.getFullAXTree`) for frames
/// of another origin and whenever the walker fails.
pub fn frame_trees(cdp: &Connection, session: &str) -> Result<Vec<FrameTree>, Error> {
    let frames = frames(cdp, session)?;
    let Some(top) = frames.first() else {
        return Ok(Vec::new());
    };
    match walk(cdp, session, top) {
        Ok(walked) if !walked.nodes.is_empty() => {
            let key = format!("{top}#{}", walked.epoch);
            let mut trees = vec![FrameTree {
                frame: key,
                owner: None,
                nodes: walked.nodes,
                walker: true,
            }];
            if !walked.remote.is_empty() {
                // Which child frames the walker could not read: theirs are the browser's trees,
                // hung under the walker's `<iframe>` node.
                let mut remote = Vec::new();
                for id in walked.remote {
                    if let Ok(Some(backend)) = walker_backend(cdp, session, top, id) {
                        remote.push((backend, id));
                    }
                }
                // The page's frame tree leaves out-of-process frames out: they are targets of
                // their own, attached to the page's session.
                let mut others = frames[1..].to_vec();
                for (frame, _) in cdp.frame_sessions(session) {
                    if !others.contains(&frame) {
                        others.push(frame);
                    }
                }
                for frame in &others {
                    let Some(owner) = frame_owner(cdp, session, frame) else {
                        continue;
                    };
                    let Some(&(_, id)) = remote.iter().find(|(b, _)| *b == owner) else {
                        continue;
                    };
                    // Out of process: the walker in the frame's own session.
                    if let Some(child) = cdp.frame_session(session, frame) {
                        for method in ["DOM.enable", "Page.enable", "Runtime.enable"] {
                            let _ = cdp.call(method, json!({}), Some(&child), CALL);
                        }
                        if let Ok(walked) = walk(cdp, &child, frame)
                            && !walked.nodes.is_empty()
                        {
                            trees.push(FrameTree {
                                frame: format!("{frame}#{}", walked.epoch),
                                owner: Some(id),
                                nodes: walked.nodes,
                                walker: true,
                            });
                            continue;
                        }
                    }
                    let reader = session_of(cdp, session, frame);
                    if let Ok(nodes) = ax_nodes(cdp, &reader, frame) {
                        trees.push(FrameTree {
                            frame: frame.clone(),
                            owner: Some(id),
                            nodes,
                            walker: false,
                        });
                    }
                }
            }
            return Ok(trees);
        }
        Ok(_) => tracing::debug!("the snapshot walker found no nodes; reading the browser's tree"),
        Err(e) => {
            tracing::warn!(error = %e, "the snapshot walker failed; reading the browser's tree")
        }
    }
    browser_trees(cdp, session, &frames)
}

/// Every frame's tree as the browser's accessibility engine gives it
/// (`Accessibility.getFullAXTree`), whatever the walker could do.
pub fn browser_frame_trees(cdp: &Connection, session: &str) -> Result<Vec<FrameTree>, Error> {
    browser_trees(cdp, session, &frames(cdp, session)?)
}

fn browser_trees(
    cdp: &Connection,
    session: &str,
    frames: &[String],
) -> Result<Vec<FrameTree>, Error> {
    let mut trees = Vec::with_capacity(frames.len());
    for (i, frame) in frames.iter().enumerate() {
        let nodes = ax_nodes(cdp, session, frame)?;
        let owner = if i == 0 {
            None
        } else {
            frame_owner(cdp, session, frame)
        };
        trees.push(FrameTree {
            frame: frame.clone(),
            owner,
            nodes,
            walker: false,
        });
    }
    Ok(trees)
}

/// `() => {boxes, opaque}`: where the password fields of a frame show (see the file).
const PASSWORDS: &str = include_str!("js/passwords.js");

/// A box in viewport CSS pixels: left, top, right, bottom.
pub type Box = [f64; 4];

/// Where the page's password fields show, and how to ask its top frame again.
#[derive(Debug, Clone)]
pub struct Passwords {
    /// Each visible field's box (a field broken over lines: each part), in the top viewport.
    pub boxes: Vec<Box>,
    /// Frames of another origin looked into through their own frame.
    pub frames: usize,
    /// The top frame's isolated world, for [`Passwords::again`].
    context: i64,
}

impl Passwords {
    /// The top frame's password fields now (one call: the frames of another origin are not
    /// looked into again). A capture reads them before and after it and masks both, so a field
    /// that moved in between is covered where it was and where it is.
    pub fn again(
        &self,
        cdp: &Connection,
        session: &str,
        timeout: Duration,
    ) -> Result<Vec<Box>, Error> {
        Ok(boxes_in(cdp, session, self.context, timeout)?.0)
    }
}

/// The password fields of the frame whose isolated world is `context`, in its viewport's CSS
/// pixels, and how many frames of another origin it could not look into.
fn boxes_in(
    cdp: &Connection,
    session: &str,
    context: i64,
    timeout: Duration,
) -> Result<(Vec<Box>, u64), Error> {
    let r = cdp.call(
        "Runtime.evaluate",
        json!({
            "expression": format!("({})()", PASSWORDS.trim()),
            "contextId": context,
            "returnByValue": true,
        }),
        Some(session),
        timeout,
    )?;
    if let Some(ex) = r.get("exceptionDetails") {
        return Err(Error::Protocol {
            method: "the password field finder".into(),
            message: crate::cdp::thrown(ex).unwrap_or("it threw").to_string(),
        });
    }
    let v = &r["result"]["value"];
    let boxes = v["boxes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|b| {
                    let n: Vec<f64> = b.as_array()?.iter().filter_map(Value::as_f64).collect();
                    <[f64; 4]>::try_from(n.as_slice()).ok()
                })
                .collect()
        })
        .unwrap_or_default();
    Ok((boxes, v["opaque"].as_u64().unwrap_or(0)))
}

/// The content box of the `<iframe>` that holds `frame` (in the viewport of the page
/// `session` names), when it has one.
fn owner_content_box(cdp: &Connection, session: &str, frame: &str) -> Option<Box> {
    let owner = frame_owner(cdp, session, frame)?;
    let m = cdp
        .call(
            "DOM.getBoxModel",
            json!({ "backendNodeId": owner }),
            Some(session),
            CALL,
        )
        .ok()?;
    let q: Vec<f64> = m["model"]["content"]
        .as_array()?
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    let (xs, ys): (Vec<f64>, Vec<f64>) = q.chunks_exact(2).map(|p| (p[0], p[1])).unzip();
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (xs.len() == 4).then(|| [min(&xs), min(&ys), max(&xs), max(&ys)])
}

/// Where the password fields of the page show in its viewport: the top frame's (its shadow
/// roots and same-origin frames included) read in deskpilot's isolated world, where the
/// page's scripts cannot hide them; and, when it holds frames of another origin, each of
/// those frames' own, placed at its `<iframe>`'s content box and clipped to it (one level of
/// such frames: a frame of a third origin inside one of them is read at the page's offsets).
/// Each call may take `timeout`; a page that does not answer is an error, so a caller can
/// refuse to show what it could not mask.
pub fn password_boxes(
    cdp: &Connection,
    session: &str,
    timeout: Duration,
) -> Result<Passwords, Error> {
    let tree = cdp.call("Page.getFrameTree", json!({}), Some(session), timeout)?;
    let mut frames = Vec::new();
    collect_origins(&tree["frameTree"], &mut frames);
    let Some((top, top_origin)) = frames.first().cloned() else {
        return Err(Error::Protocol {
            method: "Page.getFrameTree".into(),
            message: "the page has no frame".into(),
        });
    };
    let context = world(cdp, session, &top)?;
    let (mut boxes, opaque) = boxes_in(cdp, session, context, timeout)?;
    let mut looked = 0;
    if opaque > 0 {
        // The frames the top frame's script could not read: another origin, in this process or
        // out of it (those are sessions of their own, missing from the page's frame tree).
        let mut others: Vec<String> = frames[1..]
            .iter()
            .filter(|(_, origin)| *origin != top_origin)
            .map(|(id, _)| id.clone())
            .collect();
        for (frame, _) in cdp.frame_sessions(session) {
            if !others.contains(&frame) {
                others.push(frame);
            }
        }
        for frame in others {
            let Some(at) = owner_content_box(cdp, session, &frame) else {
                continue;
            };
            let reader = session_of(cdp, session, &frame);
            if reader != session {
                for method in ["DOM.enable", "Page.enable", "Runtime.enable"] {
                    let _ = cdp.call(method, json!({}), Some(&reader), timeout);
                }
            }
            let inner = world(cdp, &reader, &frame)?;
            let (found, _) = boxes_in(cdp, &reader, inner, timeout)?;
            looked += 1;
            for b in found {
                let placed = [
                    (b[0] + at[0]).max(at[0]),
                    (b[1] + at[1]).max(at[1]),
                    (b[2] + at[0]).min(at[2]),
                    (b[3] + at[1]).min(at[3]),
                ];
                if placed[2] > placed[0] && placed[3] > placed[1] {
                    boxes.push(placed);
                }
            }
        }
    }
    Ok(Passwords {
        boxes,
        frames: looked,
        context,
    })
}

/// Each frame's id and security origin, the top frame first.
fn collect_origins(tree: &Value, out: &mut Vec<(String, String)>) {
    if let Some(id) = tree["frame"]["id"].as_str() {
        let origin = tree["frame"]["securityOrigin"].as_str().unwrap_or_default();
        out.push((id.to_string(), origin.to_string()));
    }
    if let Some(children) = tree["childFrames"].as_array() {
        for c in children {
            collect_origins(c, out);
        }
    }
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
