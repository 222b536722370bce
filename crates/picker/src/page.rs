//! The control page: a live view of the desktop where the person hovers (the control under the
//! pointer is outlined with its role and name), picks a control, a window or a dragged region,
//! previews exactly what the agent will receive, and approves or cancels.

use crate::http::Response;

const PAGE: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>deskpilot — point at something for the agent</title>
<style>
body{font:14px system-ui,sans-serif;margin:0;background:#f4f4f6;color:#222}
header{padding:8px 12px;background:#243b53;color:#fff;display:flex;gap:16px;align-items:center;flex-wrap:wrap}
header b{font-size:15px}
#status{font-weight:600}
#modes label{margin-right:10px}
main{display:flex;gap:12px;padding:10px}
#view{position:relative;flex:1 1 auto;min-width:300px;user-select:none}
#screen{width:100%;display:block;border:1px solid #999;cursor:crosshair;background:#000}
#outline{position:absolute;border:2px solid #e0218a;pointer-events:none;display:none;box-shadow:0 0 0 9999px rgba(0,0,0,.08)}
#label{position:absolute;background:#e0218a;color:#fff;padding:1px 5px;font-size:12px;pointer-events:none;display:none;white-space:nowrap}
#drag{position:absolute;border:2px dashed #1f7aec;background:rgba(31,122,236,.15);pointer-events:none;display:none}
#preview{flex:0 0 380px;background:#fff;border:1px solid #ccc;padding:10px;max-height:calc(100vh - 80px);overflow:auto}
#preview h2{font-size:15px;margin:0 0 8px}
#crop{max-width:100%;border:1px solid #ccc;display:block;margin-bottom:8px}
pre{white-space:pre-wrap;font-size:12px;background:#f7f7f9;padding:6px;border:1px solid #e3e3e8}
button{font-size:14px;padding:6px 14px;margin-right:8px}
#approve{background:#1f7a3d;color:#fff;border:0}
.hidden{display:none !important}
</style></head>
<body>
<header><b>deskpilot</b><span id="status">Connecting…</span>
<span id="modes">Pick:
<label><input type="radio" name="mode" value="control" checked> a control</label>
<label><input type="radio" name="mode" value="window"> a window</label>
<label><input type="radio" name="mode" value="region"> a region (drag)</label></span>
<button id="onscreen" title="This window steps aside: point at the real screen, click a control or window, or drag a region; right click cancels">Pick on screen</button>
<button id="refresh" title="Take a new picture of the desktop (this window steps aside for a moment)">Refresh view</button>
</header>
<main>
<div id="view"><img id="screen" alt="Live view of the desktop" draggable="false">
<div id="outline"></div><div id="label"></div><div id="drag"></div></div>
<section id="preview" class="hidden">
<h2>What the agent will receive</h2>
<img id="crop" alt="The picked area">
<pre id="md"></pre>
<details><summary>JSON</summary><pre id="json"></pre></details>
<p><button id="approve">Approve and send</button><button id="cancel">Cancel</button></p>
<p>Nothing reaches the agent before you approve.</p>
</section>
</main>
<script>
"use strict";
const TOKEN = "__TOKEN__";
const H = { "X-Pick-Token": TOKEN };
const $ = (id) => document.getElementById(id);
// The shown image's origin, scale and width in image pixels; replaced only once a new image has decoded,
// so the mapping never sees a half-loaded image.
let view = { ox: 0, oy: 0, scale: 1, width: 0 };
let waiting = false, previewing = false, hoverBusy = false, lastHover = null, dragFrom = null;
// What became of the last pick ("Sent to the agent …", "Cancelled …"): it stays on show until the agent asks again.
let outcome = null;

function mode() { return document.querySelector('input[name="mode"]:checked').value; }
function status(text) { $("status").textContent = text; }

async function api(path, body) {
  const init = body === undefined ? { headers: H } :
    { method: "POST", headers: { ...H, "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const r = await fetch(path, init);
  if (!r.ok) throw new Error((await r.text()).trim() || r.status);
  return r;
}

// Image pixels (as shown) to physical desktop pixels and back.
function toPhysical(ev) {
  const img = $("screen"), k = view.width / img.clientWidth;
  return { x: Math.round(view.ox + ev.offsetX * k / view.scale), y: Math.round(view.oy + ev.offsetY * k / view.scale) };
}
function place(el, b) {
  const img = $("screen"), k = img.clientWidth / view.width;
  el.style.left = ((b.x - view.ox) * view.scale * k) + "px";
  el.style.top = ((b.y - view.oy) * view.scale * k) + "px";
  el.style.width = (b.width * view.scale * k) + "px";
  el.style.height = (b.height * view.scale * k) + "px";
  el.style.display = "block";
}

async function refreshScreen(fresh) {
  try {
    const r = await api(fresh ? "/api/screen?refresh=1" : "/api/screen");
    const next = { ox: +r.headers.get("X-Origin-X"), oy: +r.headers.get("X-Origin-Y"), scale: +r.headers.get("X-Scale") };
    const url = URL.createObjectURL(await r.blob());
    const probe = new Image();
    probe.src = url;
    await probe.decode();
    next.width = probe.naturalWidth;
    const img = $("screen"), old = img.src;
    img.src = url;
    view = next;
    if (old.startsWith("blob:")) URL.revokeObjectURL(old);
  } catch (e) { status("Cannot show the screen: " + e.message); }
}

async function refreshState() {
  try {
    const s = await (await api("/api/state")).json();
    // A new request: show the desktop as it was when the agent asked.
    if (s.waiting && !waiting) { outcome = null; refreshScreen(false); }
    waiting = s.waiting;
    if (!previewing && !outcome) status(waiting ? "The agent is waiting: point at something and click (or drag a region)." : "No agent is asking right now.");
  } catch (e) { status("Disconnected: " + e.message); }
}

$("screen").addEventListener("mousemove", async (ev) => {
  if (previewing || !view.width) return;
  if (dragFrom) {
    const p = toPhysical(ev);
    place($("drag"), { x: Math.min(p.x, dragFrom.x), y: Math.min(p.y, dragFrom.y), width: Math.abs(p.x - dragFrom.x), height: Math.abs(p.y - dragFrom.y) });
    return;
  }
  if (mode() === "region" || hoverBusy) return;
  hoverBusy = true;
  const p = toPhysical(ev);
  try {
    const h = await (await api(`/api/hover?x=${p.x}&y=${p.y}`)).json();
    lastHover = h;
    if (h.bounds) {
      const b = mode() === "window" && h.window ? h.window : h.bounds;
      place($("outline"), b);
      const l = $("label");
      l.textContent = h.label + " · " + h.source;
      l.style.left = $("outline").style.left;
      l.style.top = Math.max(0, parseFloat($("outline").style.top) - 18) + "px";
      l.style.display = "block";
    } else { $("outline").style.display = "none"; $("label").style.display = "none"; }
  } catch (e) { /* the next move asks again */ }
  hoverBusy = false;
});

$("screen").addEventListener("mousedown", (ev) => {
  if (previewing || !view.width || mode() !== "region") return;
  dragFrom = toPhysical(ev);
});

$("screen").addEventListener("mouseup", async (ev) => {
  if (previewing || !view.width) return;
  const p = toPhysical(ev);
  let pick;
  if (mode() === "region") {
    if (!dragFrom) return;
    pick = { kind: "region", x: Math.min(p.x, dragFrom.x), y: Math.min(p.y, dragFrom.y), width: Math.abs(p.x - dragFrom.x), height: Math.abs(p.y - dragFrom.y) };
    dragFrom = null;
    $("drag").style.display = "none";
  } else {
    pick = { kind: mode(), x: p.x, y: p.y };
  }
  await takePick(pick);
});

async function takePick(pick, path) {
  status("Reading what you picked…");
  try {
    const r = await (await api(path || "/api/pick", pick)).json();
    const crop = await (await api("/api/crop")).blob();
    $("crop").src = URL.createObjectURL(crop);
    $("md").textContent = r.markdown;
    $("json").textContent = JSON.stringify(r.json, null, 2);
    $("preview").classList.remove("hidden");
    previewing = true;
    status("Check the preview, then approve or cancel.");
  } catch (e) { status("That pick failed: " + e.message); }
}

$("approve").addEventListener("click", async () => {
  try {
    const r = await (await api("/api/approve", {})).json();
    outcome = "Sent to the agent (" + r.dir + "). You can close this window.";
  } catch (e) { outcome = "Not sent: " + e.message; }
  status(outcome);
  previewing = false;
  $("preview").classList.add("hidden");
});

$("cancel").addEventListener("click", async () => {
  try { await api("/api/cancel", {}); outcome = "Cancelled: the agent got nothing."; }
  catch (e) { outcome = e.message; }
  status(outcome);
  previewing = false;
  $("preview").classList.add("hidden");
});

$("refresh").addEventListener("click", () => refreshScreen(true));
$("onscreen").addEventListener("click", async () => {
  if (previewing) return;
  status("Point at the real screen: click a control or window, or drag a region (right click cancels).");
  await takePick({ kind: mode() }, "/api/pick-on-screen");
});
// Closing this window ends a waiting pick at once.
window.addEventListener("pagehide", () => navigator.sendBeacon("/api/closed?t=" + TOKEN, "{}"));
refreshState(); refreshScreen(false);
setInterval(refreshState, 1000);
</script>
</body></html>
"##;

/// The page, its token written in (it reaches only the person's browser).
pub fn html(token: &str) -> Response {
    Response::new(
        200,
        "text/html; charset=utf-8",
        PAGE.replace("__TOKEN__", token),
    )
    .with(
        "Content-Security-Policy",
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'".into(),
    )
}
