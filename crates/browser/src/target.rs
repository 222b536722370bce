//! The browser's targets: its pages, attaching to one (a flattened session whose messages
//! share the browser's socket), and closing the browser.

use std::time::Duration;

use serde_json::{Value, json};

use crate::cdp::Connection;
use crate::{CALL, Error};

/// One page of the browser, as the browser lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageTarget {
    /// The target id (stable for the page's life, across navigations).
    pub id: String,
    pub title: String,
    pub url: String,
}

/// The browser's pages (service workers, iframes and the like left out).
pub fn pages(cdp: &Connection) -> Result<Vec<PageTarget>, Error> {
    let t = cdp.call("Target.getTargets", json!({}), None, CALL)?;
    let text = |t: &Value, k: &str| t[k].as_str().unwrap_or_default().to_string();
    Ok(t["targetInfos"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|t| t["type"] == "page")
                .map(|t| PageTarget {
                    id: text(t, "targetId"),
                    title: text(t, "title"),
                    url: text(t, "url"),
                })
                .collect()
        })
        .unwrap_or_default())
}

/// Attaches to page `target` (flattened) and returns its session id.
pub fn attach(cdp: &Connection, target: &str) -> Result<String, Error> {
    let attached = cdp.call(
        "Target.attachToTarget",
        json!({ "targetId": target, "flatten": true }),
        None,
        CALL,
    )?;
    Ok(attached["sessionId"]
        .as_str()
        .unwrap_or_default()
        .to_string())
}

/// Opens a new tab on `url` and returns its target id.
pub fn new_page(cdp: &Connection, url: &str) -> Result<String, Error> {
    let r = cdp.call("Target.createTarget", json!({ "url": url }), None, CALL)?;
    Ok(r["targetId"].as_str().unwrap_or_default().to_string())
}

/// Brings page `target` to the front of its window.
pub fn activate(cdp: &Connection, target: &str) -> Result<(), Error> {
    cdp.call(
        "Target.activateTarget",
        json!({ "targetId": target }),
        None,
        CALL,
    )
    .map(|_| ())
}

/// Closes page `target` (its tab), as its close button would without `beforeunload`.
pub fn close_page(cdp: &Connection, target: &str) -> Result<(), Error> {
    cdp.call(
        "Target.closeTarget",
        json!({ "targetId": target }),
        None,
        CALL,
    )
    .map(|_| ())
}

/// Asks the browser to close itself (all its windows), waiting up to `timeout`.
pub fn close_browser(cdp: &Connection, timeout: Duration) -> Result<(), Error> {
    cdp.call("Browser.close", json!({}), None, timeout)
        .map(|_| ())
}
