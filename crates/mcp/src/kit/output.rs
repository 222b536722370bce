//! What each tool's `structuredContent` holds, declared once per profile as the tool's
//! `outputSchema`, and the icon a client may show beside a tool.
//!
//! A tool's answer is an object whose top-level keys this module lists with the JSON types each
//! may hold ([`Ty`]); the pieces the kit adds the same way to many tools — the route and effect
//! of an action and its screen verdict ([`ACTION`]), a pointer or element action, a screenshot in
//! each profile's words — are written once and combined per tool. [`declare`] turns a tool's
//! shape into an open JSON Schema (2020-12): `type: object` and the listed keys' types, no
//! `required` and no `additionalProperties: false`, because
//! - an error answer (`isError: true`, [`FAILURE`]) and a dry run ([`DRY_RUN`]) carry other keys
//!   than the tool's answer, and the MCP revisions ask that *every* structured result conform;
//! - a key the answer adds in a case nobody listed must not make a validating client (the
//!   TypeScript SDK's, for one) throw away a good answer;
//! - nested objects are said to be objects, not spelled out: the bytes of `tools/list` are
//!   budgeted, and docs/structured-output.md describes them.
//!
//! The contract test (tests/output_schemas.rs) calls every tool of every profile on a fake
//! desktop and validates each answer against the declared schema with a JSON Schema validator,
//! and checks the other direction too: every top-level key an answer has is listed here (or is
//! one of [`FAILURE`] / [`DRY_RUN`]). So a renderer that adds, renames or retypes a key fails
//! the test until this table says so.
//!
//! Icons: one small SVG per [`Group`] — what the tool works on: the screen, input, elements,
//! windows, a browser, a shell, memory, the clipboard, skills, picked UI context; each table row
//! names its tool's group — as a base64 `data:` URI, on every tool listed here. A tool this module does not know keeps what it had
//! (the `conformance` profile's fixtures declare their own).

use std::sync::Arc;

use rmcp::model::{Icon, Tool};
use serde_json::{Map, Value};

use Group::{Browser, Clipboard, Context, Elements, Input, Memory, Screen, Shell, Skill, Windows};

/// The JSON types a value may have: a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ty(u8);

impl Ty {
    /// This type or that one.
    pub(crate) const fn or(self, other: Ty) -> Ty {
        Ty(self.0 | other.0)
    }

    /// The JSON Schema `type` value: one name, or a list of names; `None` for any value.
    fn schema(self) -> Option<Value> {
        if self == ANY {
            return None;
        }
        // `integer` is part of `number`: say `number` alone when both are allowed.
        let bits = if self.0 & NUM.0 != 0 {
            self.0 & !INT.0
        } else {
            self.0
        };
        let names: Vec<Value> = NAMES
            .iter()
            .filter(|(t, _)| bits & t.0 != 0)
            .map(|(_, n)| Value::from(*n))
            .collect();
        Some(match <[Value; 1]>::try_from(names) {
            Ok([one]) => one,
            Err(many) => Value::Array(many),
        })
    }
}

/// A string.
pub(crate) const STR: Ty = Ty(1);
/// An integer.
pub(crate) const INT: Ty = Ty(2);
/// Any number, integers included.
pub(crate) const NUM: Ty = Ty(4);
/// `true` or `false`.
pub(crate) const BOOL: Ty = Ty(8);
/// An object (what it holds is not spelled out).
pub(crate) const OBJ: Ty = Ty(16);
/// An array.
pub(crate) const ARR: Ty = Ty(32);
/// `null`: absent or unknown.
pub(crate) const NULL: Ty = Ty(64);
/// Any JSON value (a page's `eval` result).
pub(crate) const ANY: Ty = Ty(127);

const NAMES: [(Ty, &str); 7] = [
    (STR, "string"),
    (INT, "integer"),
    (NUM, "number"),
    (BOOL, "boolean"),
    (OBJ, "object"),
    (ARR, "array"),
    (NULL, "null"),
];

/// `t` or `null`.
const fn opt(t: Ty) -> Ty {
    t.or(NULL)
}

/// A top-level key of an answer and the types it may hold.
pub(crate) type Field = (&'static str, Ty);
/// Some keys of an answer; a tool's answer is the union of a few of these.
pub(crate) type Shape = &'static [Field];
/// A profile's tools, each with the shapes its answer is made of.
type Table = &'static [(&'static str, Group, &'static [Shape])];

// ---- what the kit adds the same way to every profile's answers -------------------------------

/// A failed call (`kit::render::error`): `error {code, message, hint}`, the engine's
/// `diagnosis`, and `effect: refused` when nothing reached the desktop. Any tool may answer
/// this; it is not repeated in each tool's schema (the schema is open).
pub(crate) const FAILURE: Shape = &[("error", OBJ), ("diagnosis", OBJ), ("effect", STR)];

/// A call the dry run stopped before the desktop (`kit::render::error` on `DryRun`).
pub(crate) const DRY_RUN: Shape = &[("dry_run", BOOL), ("would", STR), ("effect", STR)];

/// What every mutating action adds (`kit::report::render`): the `route` it took and its
/// `effect`.
pub(crate) const ACTION: Shape = &[("route", STR), ("effect", STR)];

/// `type_secret` in every profile (`report::secret_body`): which secret went where, never its
/// value or length.
const SECRET: Shape = &[
    ("action", STR),
    ("secret", STR),
    ("source", STR),
    ("window", OBJ),
    ("element", opt(OBJ)),
    ("password_field", BOOL),
    ("field", STR),
    ("approval", STR),
];

/// What an action that takes `verify` / `observe` adds when asked: the screen verdict (or why
/// there is none) and the image seen after it.
pub(crate) const VERDICT: Shape = &[("verify", OBJ), ("observation", OBJ)];

/// `app_skill` (`kit::skills`): the catalog, one skill, or what a write did.
const SKILL: Shape = &[
    // list
    ("enabled", BOOL),
    ("count", INT),
    ("skills", ARR),
    ("user_dir", opt(STR)),
    // get
    ("found", BOOL),
    ("app", STR),
    ("id", STR),
    ("match", ARR),
    ("summary", STR),
    ("chars", INT),
    ("source", STR),
    ("path", opt(STR)),
    ("content", STR),
    ("truncated", BOOL),
    // save, append, remove
    ("action", STR),
];

/// `clipboard_read` and dsh-computer-use's `clipboard get` (`kit::clipboard`).
const CLIPBOARD_READ: Shape = &[("length", INT), ("clipboard", opt(STR)), ("text", STR)];
/// A clipboard write (`kit::clipboard`).
const CLIPBOARD_WRITE: Shape = &[("action", STR), ("length", INT)];

/// The UI Context Protocol's answers (`kit::context`): the approved context, or none.
const CONTEXT: Shape = &[
    ("kind", STR),
    ("json", opt(OBJ)),
    ("markdown", opt(STR)),
    ("directory", opt(STR)),
    ("files", ARR),
    ("empty", BOOL),
    ("controlWindow", STR),
];
const CONTEXT_CLEAR: Shape = &[("cleared", BOOL)];

/// A shell command's run (`kit::shell`); a timeout's error carries the same keys.
const SHELL_RUN: Shape = &[
    ("session", STR),
    ("exit_code", opt(INT)),
    ("cwd", opt(STR)),
    ("duration_ms", INT),
    ("stdout", OBJ),
    ("stderr", OBJ),
    ("restart_note", opt(STR)),
    ("diagnosis", OBJ),
];
/// `shell_exec_verified`: the last run, whether every expectation held, and each attempt.
const SHELL_VERIFIED: Shape = &[("verified", BOOL), ("attempts", ARR)];
/// A shell session's directory (`shell_cd`, `shell_reset`).
const SHELL_PLACE: Shape = &[("session", STR), ("cwd", opt(STR))];
/// `shell_cwd`: also every session, and whether this one has started.
const SHELL_CWD: Shape = &[("sessions", ARR), ("started", BOOL)];
/// `shell_env_get`.
const SHELL_ENV: Shape = &[
    ("session", STR),
    ("name", STR),
    ("value", opt(STR)),
    ("set", BOOL),
];
/// `shell_env_set`.
const SHELL_ENV_SET: Shape = &[("session", STR), ("name", STR)];
/// What the failure table says of an error text (`diagnose`, `desktop_diagnose`).
const DIAGNOSIS: Shape = &[
    ("category", STR),
    ("reason", STR),
    ("hint", STR),
    ("suggestion", STR),
    ("retryable", BOOL),
    ("fix", opt(OBJ)),
    ("matched", opt(STR)),
];

/// `memory_recall` (`kit::memory`).
const MEMORY_RECALL: Shape = &[("query", STR), ("matched", BOOL), ("candidates", ARR)];
/// `memory_timeline`.
const MEMORY_TIMELINE: Shape = &[("entries", ARR), ("skipped_lines", INT)];
/// `memory_stats`.
const MEMORY_STATS: Shape = &[
    ("dir", STR),
    ("windows", INT),
    ("windows_gone", INT),
    ("elements", INT),
    ("focus_entries", INT),
    ("state_bytes", INT),
    ("timeline_bytes", INT),
    ("last_update", opt(INT)),
    ("save_error", opt(STR)),
    ("load_warning", opt(STR)),
    ("bounds", OBJ),
];
/// `memory_clear`.
const MEMORY_CLEAR: Shape = &[("forgot", OBJ), ("dir", STR)];

/// The desktop's windows judged against their pixels (`kit::perceive`).
const PERCEIVE: Shape = &[
    ("total", INT),
    ("consistent", INT),
    ("inconsistent", INT),
    ("counts", OBJ),
    ("windows", ARR),
    ("monitors", ARR),
    ("screenshot_id", opt(INT)),
    ("timings_ms", OBJ),
    ("screenshot", OBJ),
];

/// `list_apps` (`kit::apps`): running apps (each profile shapes one) and installed ones.
const APPS: Shape = &[
    ("running", ARR),
    ("installed", ARR),
    ("catalog_error", opt(STR)),
];

// ---- the deskpilot profile --------------------------------------------------------------------

/// A screenshot as the deskpilot profile answers it (`profiles::deskpilot::wording`).
const D_IMAGE: Shape = &[
    ("screenshot_id", INT),
    ("view", OBJ),
    ("format", STR),
    ("bytes", INT),
    ("window", opt(OBJ)),
    ("masked_regions", INT),
    ("notes", ARR),
    ("timings_ms", OBJ),
];
/// What `screenshot` adds: the outline, the app skill's hint, the comparison.
const D_SCREENSHOT: Shape = &[("outline", OBJ), ("skill_hint", OBJ), ("change", opt(OBJ))];
/// A pointer action at a point.
const D_POINTER: Shape = &[
    ("action", STR),
    ("point", OBJ),
    ("receipt", opt(OBJ)),
    ("window", opt(OBJ)),
    ("warnings", ARR),
];
/// An action on an element (by token).
const D_ELEMENT: Shape = &[
    ("action", STR),
    ("element", OBJ),
    ("window", OBJ),
    ("detail", STR),
    ("receipt", opt(OBJ)),
    ("notes", ARR),
];
/// `set_value`: the value read back.
const D_VALUE: Shape = &[("value", opt(STR))];
/// A keyboard action: the window that had the focus and what the input layer warned of.
const D_KEYBOARD: Shape = &[("action", STR), ("window", opt(OBJ)), ("warnings", ARR)];
/// `press_key`.
const D_KEYS: Shape = &[("keys", ARR)];
/// `type_text`.
const D_TEXT: Shape = &[("characters", INT), ("max_characters", INT)];
/// A window operation, or a launch.
const D_WINDOW: Shape = &[
    ("action", STR),
    ("window", opt(OBJ)),
    ("before", OBJ),
    ("closed", BOOL),
    ("notes", ARR),
    // launch
    ("command", STR),
    ("pid", opt(INT)),
    ("windows", ARR),
    ("other_windows", ARR),
    ("exited", BOOL),
    ("exit_code", opt(INT)),
    ("waited_ms", INT),
];
/// A window's indexed tree (`get_window_state`).
const D_TREE: Shape = &[
    ("snapshot_id", INT),
    ("window", OBJ),
    ("source", STR),
    ("complete", BOOL),
    ("count", INT),
    ("shown", INT),
    ("elements", ARR),
    ("notes", ARR),
    ("tree_ms", NUM),
    ("screenshot", opt(OBJ)),
];
/// `find_elements`.
const D_FIND: Shape = &[
    ("snapshot_id", INT),
    ("window", OBJ),
    ("found", INT),
    ("annotated", BOOL),
    ("candidates", ARR),
    ("notes", ARR),
    ("screenshot", opt(OBJ)),
];
/// `ocr`.
const D_OCR: Shape = &[
    ("source", STR),
    ("engine", STR),
    ("languages", ARR),
    ("elapsed_ms", NUM),
    ("screenshot_id", INT),
    ("view", OBJ),
    ("window", opt(OBJ)),
    ("lines", ARR),
    ("dropped_words", INT),
    ("parts", OBJ),
    ("masked_regions", INT),
    ("notes", ARR),
];
/// `wait_for`.
const D_WAIT_FOR: Shape = &[
    ("kind", STR),
    ("waited_ms", INT),
    ("frames", INT),
    ("ratio", opt(NUM)),
    ("matched", opt(STR)),
    ("source", opt(STR)),
    ("notes", ARR),
];
/// `status`.
const D_STATUS: Shape = &[
    ("server", OBJ),
    ("platform", STR),
    ("display", STR),
    ("capture_method", STR),
    ("window_manager", opt(STR)),
    ("desktop", OBJ),
    ("monitors", ARR),
    ("window_count", INT),
    ("active_window", opt(OBJ)),
    ("last_screenshot", opt(OBJ)),
    ("mask_regions", INT),
    ("dry_run", BOOL),
    ("blocklist_entries", INT),
    ("allow_launch", BOOL),
    ("allow_close_window", BOOL),
    ("host", STR),
    ("overlay", OBJ),
    ("kill_switch", OBJ),
    ("require_approval", BOOL),
    ("mutating_actions", INT),
    ("coordinate_space", STR),
    ("shell", OBJ),
    ("cursor", opt(OBJ)),
    ("cursor_in_last_screenshot", opt(OBJ)),
    ("tools", ARR),
];
/// `resume`.
const D_RESUME: Shape = &[("resumed", BOOL), ("was_stopped", BOOL), ("reason", STR)];
/// A browser deskpilot launched or attached to.
const D_BROWSER: Shape = &[("browser", OBJ)];
/// What a page action did (`outcome_body`): the page, the detail, whether it changed, a value
/// (`browser_eval`: any JSON), and the snapshot asked for.
const D_PAGE_ACTION: Shape = &[
    ("page", OBJ),
    ("detail", STR),
    ("changed", opt(BOOL)),
    ("value", ANY),
    ("snapshot", opt(OBJ)),
];
/// `browser_snapshot`.
const D_PAGE_SNAPSHOT: Shape = &[
    ("page", OBJ),
    ("snapshot", INT),
    ("refs", INT),
    ("lines", INT),
    ("omitted", INT),
    ("text", STR),
    ("next_cursor", opt(STR)),
    ("since", opt(INT)),
    ("gone", INT),
    ("whole_because", opt(STR)),
    ("shortened", INT),
];
/// `browser_screenshot` of a page not on screen (else [`D_IMAGE`]).
const D_PAGE_IMAGE: Shape = &[
    ("page", OBJ),
    ("screenshot_id", opt(INT)),
    ("width", INT),
    ("height", INT),
    ("notes", ARR),
];
/// `browser_tabs`: the list; opening, selecting or closing a tab answers as a page action.
const D_TABS: Shape = &[("pages", ARR)];
/// `browser_log`: console messages, requests, or one request in full.
const D_LOG: Shape = &[
    ("page", OBJ),
    ("mark", INT),
    ("messages", ARR),
    ("requests", ARR),
    ("seq", INT),
    ("method", STR),
    ("url", STR),
    ("type", STR),
    ("status", opt(INT)),
    ("mime", STR),
    ("size", opt(NUM)),
    ("failed", opt(STR)),
    ("finished", BOOL),
    ("request_headers", ANY),
    ("response_headers", ANY),
    ("post_data", opt(STR)),
    ("body", opt(STR)),
    ("base64", BOOL),
    ("body_len", INT),
];
/// `browser_wait_for`: `url` is where a navigation it waited for ended.
const D_PAGE_WAIT: Shape = &[("page", OBJ), ("waited_ms", INT), ("url", opt(STR))];
/// `browser_close`.
const D_CLOSE: Shape = &[("closed", ARR), ("detached", ARR)];

/// The deskpilot profile: every tool and the shapes its answer is made of.
const DESKPILOT: Table = &[
    ("app_skill", Skill, &[SKILL, ACTION]),
    ("browser_attach", Browser, &[D_BROWSER]),
    ("browser_click", Browser, &[D_PAGE_ACTION, ACTION]),
    ("browser_close", Browser, &[D_CLOSE]),
    ("browser_dialog", Browser, &[D_PAGE_ACTION, ACTION]),
    ("browser_emulate", Browser, &[D_PAGE_ACTION, ACTION]),
    ("browser_eval", Browser, &[D_PAGE_ACTION, ACTION]),
    ("browser_fill", Browser, &[D_PAGE_ACTION, ACTION]),
    ("browser_launch", Browser, &[D_BROWSER, ACTION]),
    ("browser_log", Browser, &[D_LOG]),
    ("browser_navigate", Browser, &[D_PAGE_ACTION, ACTION]),
    ("browser_press_key", Browser, &[D_PAGE_ACTION, ACTION]),
    ("browser_screenshot", Browser, &[D_IMAGE, D_PAGE_IMAGE]),
    ("browser_snapshot", Browser, &[D_PAGE_SNAPSHOT]),
    ("browser_tabs", Browser, &[D_TABS, D_PAGE_ACTION, ACTION]),
    ("browser_type", Browser, &[D_PAGE_ACTION, ACTION]),
    ("browser_wait_for", Browser, &[D_PAGE_WAIT]),
    ("click", Input, &[D_POINTER, D_ELEMENT, ACTION, VERDICT]),
    ("clipboard_read", Clipboard, &[CLIPBOARD_READ]),
    ("clipboard_write", Clipboard, &[CLIPBOARD_WRITE, ACTION]),
    ("diagnose", Shell, &[DIAGNOSIS]),
    ("double_click", Input, &[D_POINTER, ACTION, VERDICT]),
    ("drag", Input, &[D_POINTER, ACTION, VERDICT]),
    ("find_elements", Elements, &[D_FIND]),
    (
        "get_element_text",
        Elements,
        &[&[("element", OBJ), ("text", STR)]],
    ),
    ("get_window_state", Elements, &[D_TREE]),
    ("list_apps", Windows, &[APPS]),
    (
        "list_windows",
        Windows,
        &[&[("count", INT), ("windows", ARR)]],
    ),
    ("memory_clear", Memory, &[MEMORY_CLEAR, ACTION]),
    ("memory_recall", Memory, &[MEMORY_RECALL]),
    ("memory_stats", Memory, &[MEMORY_STATS]),
    ("memory_timeline", Memory, &[MEMORY_TIMELINE]),
    ("move_cursor", Input, &[D_POINTER, ACTION, VERDICT]),
    ("ocr", Screen, &[D_OCR]),
    ("perceive", Screen, &[PERCEIVE]),
    ("perform_action", Elements, &[D_ELEMENT, ACTION, VERDICT]),
    ("press_key", Input, &[D_KEYBOARD, D_KEYS, ACTION, VERDICT]),
    ("resume", Windows, &[D_RESUME]),
    ("right_click", Input, &[D_POINTER, ACTION, VERDICT]),
    ("screenshot", Screen, &[D_IMAGE, D_SCREENSHOT]),
    ("scroll", Input, &[D_POINTER, ACTION, VERDICT]),
    (
        "set_value",
        Elements,
        &[D_ELEMENT, D_VALUE, ACTION, VERDICT],
    ),
    ("shell_cd", Shell, &[SHELL_PLACE, ACTION]),
    ("shell_cwd", Shell, &[SHELL_PLACE, SHELL_CWD]),
    ("shell_env_get", Shell, &[SHELL_ENV]),
    ("shell_env_set", Shell, &[SHELL_ENV_SET, ACTION]),
    ("shell_exec", Shell, &[SHELL_RUN, ACTION]),
    (
        "shell_exec_verified",
        Shell,
        &[SHELL_RUN, SHELL_VERIFIED, ACTION],
    ),
    ("shell_reset", Shell, &[SHELL_PLACE, ACTION]),
    ("status", Windows, &[D_STATUS]),
    ("type_secret", Input, &[SECRET, ACTION, VERDICT]),
    ("type_text", Input, &[D_KEYBOARD, D_TEXT, ACTION, VERDICT]),
    ("ui_context_clear", Context, &[CONTEXT_CLEAR]),
    ("ui_context_current", Context, &[CONTEXT]),
    ("ui_context_pick", Context, &[CONTEXT]),
    ("wait", Windows, &[&[("waited_ms", NUM)]]),
    ("wait_for", Windows, &[D_WAIT_FOR]),
    ("window", Windows, &[D_WINDOW, ACTION, VERDICT]),
    ("zoom", Screen, &[D_IMAGE]),
];

// ---- the dsh profile (dsh-computer-use) -------------------------------------------------------

/// A screenshot in dsh-computer-use's words (`profiles::dsh::envelope`), with what
/// `computer screenshot` adds (cursor, comparison, outline, skill hint, fallback, foreground).
const H_IMAGE: Shape = &[
    ("screenshotId", INT),
    ("image", opt(OBJ)),
    ("savedPath", opt(STR)),
    ("view", OBJ),
    ("window", opt(OBJ)),
    ("masked", INT),
    ("notes", ARR),
];
const H_SCREENSHOT: Shape = &[
    ("cursor", OBJ),
    ("change", opt(OBJ)),
    ("ui", opt(OBJ)),
    ("skillHint", opt(OBJ)),
    ("fallback", opt(STR)),
    ("foreground", opt(OBJ)),
];
/// Every action of `computer`: pointer, keys, status, cursor, wait, OCR, wait_for, resume.
const H_COMPUTER: Shape = &[
    // pointer actions
    ("x", INT),
    ("y", INT),
    ("receipt", OBJ),
    ("warnings", ARR),
    ("to", OBJ),
    ("button", STR),
    ("count", INT),
    ("dx", INT),
    ("dy", INT),
    // type, key
    ("chars", INT),
    ("keys", ARR),
    // cursor (`image`: where it is in the last screenshot)
    ("cursor", OBJ),
    ("image", opt(OBJ)),
    // status
    ("host", STR),
    ("platform", STR),
    ("overlay", STR),
    ("overlayError", opt(STR)),
    ("escArmed", BOOL),
    ("stopped", opt(STR)),
    ("dryRun", BOOL),
    ("mutations", INT),
    ("coordinates", STR),
    ("lastScreenshot", opt(INT)),
    ("screens", ARR),
    // wait
    ("waited", NUM),
    // ocr
    ("source", STR),
    ("lines", ARR),
    ("total", INT),
    ("lang", STR),
    ("engine", STR),
    ("elapsedMs", INT),
    // wait_for
    ("wait", OBJ),
    // resume
    ("resumed", BOOL),
    ("was", STR),
];
/// `app_window`: the list, a window operation, a launch.
const H_WINDOW: Shape = &[
    ("count", INT),
    ("windows", ARR),
    ("action", STR),
    ("hwnd", opt(INT)),
    ("window", opt(OBJ)),
    ("result", OBJ),
    ("notes", ARR),
    ("command", STR),
    ("pid", opt(INT)),
    ("process", opt(STR)),
    ("noWindow", BOOL),
    ("exited", BOOL),
    ("exitCode", opt(INT)),
];
/// `ui_element`: the tree, the candidates, an element action.
const H_ELEMENT: Shape = &[
    ("hwnd", INT),
    ("window", OBJ),
    ("source", STR),
    ("nodes", INT),
    ("total", INT),
    ("truncated", BOOL),
    ("found", INT),
    ("candidates", ARR),
    ("screenshot", OBJ),
    ("path", STR),
    ("role", STR),
    ("name", STR),
    ("result", OBJ),
    ("value", opt(STR)),
];

const DSH: Table = &[
    ("app_skill", Skill, &[SKILL, ACTION]),
    ("app_window", Windows, &[H_WINDOW, ACTION, VERDICT]),
    (
        "clipboard",
        Clipboard,
        &[CLIPBOARD_READ, CLIPBOARD_WRITE, ACTION],
    ),
    (
        "computer",
        Screen,
        &[H_COMPUTER, H_IMAGE, H_SCREENSHOT, ACTION, VERDICT],
    ),
    (
        "ui_element",
        Elements,
        &[H_ELEMENT, ACTION, VERDICT, SECRET],
    ),
];

// ---- the desktopos profile (DesktopOS) --------------------------------------------------------

/// A screenshot in DesktopOS's words (`profiles::desktopos::wording::image_json`).
const O_IMAGE: Shape = &[
    ("width", INT),
    ("height", INT),
    ("format", STR),
    ("bytes", INT),
    ("screenArea", OBJ),
    ("scale", NUM),
    ("screenshotId", INT),
];
/// What DesktopOS says beside a screen verdict (`verdict_fields`).
const O_VERDICT: Shape = &[
    ("verify", OBJ),
    ("diffRatio", NUM),
    ("changed", BOOL),
    ("scope", STR),
];
/// An input action: the window that had the focus or was under the point, and what the input
/// layer warned of.
const O_INPUT: Shape = &[("window", opt(OBJ)), ("warnings", ARR)];
/// A pointer action: where, and where the pointer landed.
const O_POINTER: Shape = &[("x", INT), ("y", INT), ("receipt", opt(OBJ))];
const O_WINDOWS: Shape = &[("count", INT), ("windows", ARR)];
const O_FOCUS: Shape = &[("window", OBJ), ("restored", BOOL), ("notes", ARR)];
const O_ELEMENTS: Shape = &[
    ("handle", INT),
    ("count", INT),
    ("source", STR),
    ("complete", BOOL),
    ("elements", ARR),
];
const O_CLICK_ELEMENT: Shape = &[
    ("name", STR),
    ("controlType", STR),
    ("rect", opt(OBJ)),
    ("handle", INT),
    ("invoked", BOOL),
    ("receipt", opt(OBJ)),
];
/// `desktop_perceive` with `includePng` adds the screenshot.
const O_PERCEIVE: Shape = &[("screenshot", OBJ)];
/// `desktop_browser_launch`.
const O_BROWSER: Shape = &[
    ("port", opt(INT)),
    ("pid", opt(INT)),
    ("browser", INT),
    ("pages", ARR),
    ("window", opt(INT)),
];
/// A CDP session and its page (`title`, `url`).
const O_CDP: Shape = &[("session", STR), ("page", OBJ)];
/// `desktop_cdp_targets`: the pages of every DevTools port found.
const O_CDP_TARGETS: Shape = &[("pages", ARR), ("ports", ARR)];
/// `desktop_cdp_elements`.
const O_CDP_ELEMENTS: Shape = &[("count", INT), ("elements", ARR)];
/// `desktop_cdp_click`, `desktop_cdp_type`: what the page did.
const O_CDP_ACTION: Shape = &[("detail", STR), ("changed", opt(BOOL)), ("value", ANY)];
/// `desktop_cdp_screenshot`.
const O_CDP_IMAGE: Shape = &[("width", INT), ("height", INT), ("format", STR)];

const DESKTOPOS: Table = &[
    ("desktop_browser_launch", Browser, &[O_BROWSER, ACTION]),
    ("desktop_cdp_click", Browser, &[O_CDP, O_CDP_ACTION, ACTION]),
    (
        "desktop_cdp_close",
        Browser,
        &[&[("session", STR), ("browsersEnded", ARR)], ACTION],
    ),
    ("desktop_cdp_elements", Browser, &[O_CDP, O_CDP_ELEMENTS]),
    (
        "desktop_cdp_eval",
        Browser,
        &[O_CDP, &[("result", ANY)], ACTION],
    ),
    (
        "desktop_cdp_open",
        Browser,
        &[O_CDP, &[("browser", INT)], ACTION],
    ),
    ("desktop_cdp_screenshot", Browser, &[O_CDP, O_CDP_IMAGE]),
    ("desktop_cdp_targets", Browser, &[O_CDP_TARGETS]),
    ("desktop_cdp_type", Browser, &[O_CDP, O_CDP_ACTION, ACTION]),
    (
        "desktop_cdp_type_secret",
        Browser,
        &[O_CDP, O_CDP_ACTION, ACTION],
    ),
    (
        "desktop_click",
        Input,
        &[O_INPUT, O_POINTER, O_VERDICT, ACTION],
    ),
    (
        "desktop_click_element",
        Elements,
        &[O_CLICK_ELEMENT, O_VERDICT, ACTION],
    ),
    ("desktop_cursor", Input, &[&[("x", INT), ("y", INT)]]),
    ("desktop_diagnose", Shell, &[DIAGNOSIS]),
    ("desktop_elements", Elements, &[O_ELEMENTS]),
    (
        "desktop_focus_window",
        Windows,
        &[O_FOCUS, O_VERDICT, ACTION],
    ),
    (
        "desktop_key",
        Input,
        &[O_INPUT, &[("combo", STR)], O_VERDICT, ACTION],
    ),
    ("desktop_list_windows", Windows, &[O_WINDOWS]),
    (
        "desktop_move",
        Input,
        &[O_INPUT, O_POINTER, O_VERDICT, ACTION],
    ),
    ("desktop_perceive", Screen, &[PERCEIVE, O_PERCEIVE]),
    ("desktop_screenshot", Screen, &[O_IMAGE]),
    (
        "desktop_scroll",
        Input,
        &[O_INPUT, O_POINTER, &[("delta", INT)], O_VERDICT, ACTION],
    ),
    (
        "desktop_type",
        Input,
        &[O_INPUT, &[("characters", INT)], O_VERDICT, ACTION],
    ),
    ("desktop_type_secret", Input, &[SECRET, O_VERDICT, ACTION]),
    ("memory_clear", Memory, &[MEMORY_CLEAR, ACTION]),
    ("memory_recall", Memory, &[MEMORY_RECALL]),
    ("memory_stats", Memory, &[MEMORY_STATS]),
    ("memory_timeline", Memory, &[MEMORY_TIMELINE]),
    ("shell_cd", Shell, &[SHELL_PLACE, ACTION]),
    ("shell_cwd", Shell, &[SHELL_PLACE, SHELL_CWD]),
    ("shell_env_get", Shell, &[SHELL_ENV]),
    ("shell_env_set", Shell, &[SHELL_ENV_SET, ACTION]),
    ("shell_exec", Shell, &[SHELL_RUN, ACTION]),
    (
        "shell_exec_verified",
        Shell,
        &[SHELL_RUN, SHELL_VERIFIED, ACTION],
    ),
    ("shell_reset", Shell, &[SHELL_PLACE, ACTION]),
];

// ---- the computer-use profile (computer-use-mcp) ----------------------------------------------

/// A window in computer-use-mcp's words.
const U_WINDOW: Shape = &[("window", opt(OBJ))];
/// `get_window_state`.
const U_STATE: Shape = &[
    ("elements", ARR),
    ("source", STR),
    ("complete", BOOL),
    ("notes", ARR),
    ("screenshot", OBJ),
    ("screenshot_error", OBJ),
];
/// A pointer action: the physical point and where the pointer landed.
const U_POINTER: Shape = &[("point", OBJ), ("receipt", opt(OBJ))];
/// An action on an element by index.
const U_ELEMENT: Shape = &[
    ("element_index", INT),
    ("control_type", STR),
    ("name", STR),
    ("detail", STR),
    ("receipt", opt(OBJ)),
    ("value", opt(STR)),
    ("notes", ARR),
];
/// `type_text`, `press_key`.
const U_KEYS: Shape = &[("count", INT)];
/// `launch_app`.
const U_LAUNCH: Shape = &[
    ("app", opt(OBJ)),
    ("found_by", opt(STR)),
    ("command", STR),
    ("pid", opt(INT)),
    ("windows", ARR),
    ("window_id", opt(INT)),
    ("exited", opt(INT)),
];

const COMPUTER_USE: Table = &[
    ("activate_window", Windows, &[U_WINDOW, ACTION]),
    (
        "click",
        Input,
        &[
            U_WINDOW,
            U_POINTER,
            &[("x", NUM), ("y", NUM)],
            U_ELEMENT,
            ACTION,
        ],
    ),
    ("drag", Input, &[U_WINDOW, U_POINTER, ACTION]),
    ("get_window", Windows, &[U_WINDOW]),
    ("get_window_state", Elements, &[U_WINDOW, U_STATE]),
    ("launch_app", Windows, &[U_LAUNCH, ACTION]),
    ("list_apps", Windows, &[APPS]),
    ("list_windows", Windows, &[&[("windows", ARR)]]),
    (
        "perform_secondary_action",
        Elements,
        &[U_WINDOW, U_ELEMENT, ACTION],
    ),
    ("press_key", Input, &[U_WINDOW, U_KEYS, ACTION]),
    (
        "scroll",
        Input,
        &[U_WINDOW, U_POINTER, &[("dx", INT), ("dy", INT)], ACTION],
    ),
    ("set_value", Elements, &[U_WINDOW, U_ELEMENT, ACTION]),
    ("type_secret", Input, &[SECRET, ACTION]),
    ("type_text", Input, &[U_WINDOW, U_KEYS, ACTION]),
];

// ---- the ui-context profile (UI Context Protocol) ---------------------------------------------

const UI_CONTEXT: Table = &[
    ("ui_context_clear", Context, &[CONTEXT_CLEAR]),
    ("ui_context_current", Context, &[CONTEXT]),
    ("ui_context_pick", Context, &[CONTEXT]),
];

/// Every profile this module declares outputs for, by its `serve --profile` name.
const PROFILES: &[(&str, Table)] = &[
    ("deskpilot", DESKPILOT),
    ("dsh", DSH),
    ("desktopos", DESKTOPOS),
    ("computer-use", COMPUTER_USE),
    ("ui-context", UI_CONTEXT),
];

/// The top-level keys of `tool`'s answers in `profile` and the types each may hold (a key in
/// several shapes may hold any of their types, and a key [`FAILURE`] or [`DRY_RUN`] share
/// their type too); `None` for a tool this module does not know.
pub(crate) fn fields(profile: &str, tool: &str) -> Option<Vec<Field>> {
    let (_, tools) = PROFILES.iter().find(|(p, _)| *p == profile)?;
    let (_, _, shapes) = tools.iter().find(|(t, ..)| *t == tool)?;
    let mut out: Vec<Field> = Vec::new();
    for (key, ty) in shapes.iter().flat_map(|s| s.iter()) {
        match out.iter_mut().find(|(k, _)| k == key) {
            Some((_, t)) => *t = t.or(*ty),
            None => out.push((key, *ty)),
        }
    }
    // A key the tool names that a failure or a dry run also carries holds either's type.
    for (key, ty) in FAILURE.iter().chain(DRY_RUN) {
        if let Some((_, t)) = out.iter_mut().find(|(k, _)| k == key) {
            *t = t.or(*ty);
        }
    }
    Some(out)
}

/// The `outputSchema` of an answer with `fields`: an open object schema (see the module docs).
pub(crate) fn schema(fields: &[Field]) -> Map<String, Value> {
    let mut properties = Map::new();
    for (key, ty) in fields {
        let mut p = Map::new();
        if let Some(t) = ty.schema() {
            p.insert("type".into(), t);
        }
        properties.insert((*key).to_string(), Value::Object(p));
    }
    let mut s = Map::new();
    s.insert("type".into(), Value::from("object"));
    s.insert("properties".into(), Value::Object(properties));
    s
}

/// `tool` of `profile` with its `outputSchema` and icon, when this module knows the tool and
/// the tool declares none itself.
pub(crate) fn declare(profile: &str, mut tool: Tool) -> Tool {
    let (Some(f), Some(g)) = (fields(profile, &tool.name), group(profile, &tool.name)) else {
        return tool;
    };
    if tool.output_schema.is_none() {
        tool.output_schema = Some(Arc::new(schema(&f)));
    }
    if tool.icons.is_none() {
        tool.icons = Some(vec![icon(g)]);
    }
    tool
}

// ---- icons ------------------------------------------------------------------------------------

/// What a tool works on, which its icon shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Group {
    /// Looking at the screen: screenshots, zoom, OCR, perception.
    Screen,
    /// Pointer and keyboard input.
    Input,
    /// Accessibility elements: trees, finding, setting values, element actions.
    Elements,
    /// Windows and apps: listing, launching, focusing, waiting, the server's state.
    Windows,
    /// A browser over CDP.
    Browser,
    /// A persistent shell.
    Shell,
    /// The memory of windows, elements and actions.
    Memory,
    /// The clipboard.
    Clipboard,
    /// App skills.
    Skill,
    /// UI context a person picked.
    Context,
}

/// The group of `tool` in `profile`, as its table row says.
pub(crate) fn group(profile: &str, tool: &str) -> Option<Group> {
    let (_, tools) = PROFILES.iter().find(|(p, _)| *p == profile)?;
    tools.iter().find(|(t, ..)| *t == tool).map(|(_, g, _)| *g)
}

/// The group's icon: a 16×16 line drawing in grey (readable on light and dark backgrounds), as
/// the `data:` URI with base64 data that MCP's `Icon.src` asks for.
pub(crate) fn icon(group: Group) -> Icon {
    use base64::Engine as _;
    let drawing = match group {
        Screen => r#"<rect x="1.5" y="2.5" width="13" height="9" rx="1"/><path d="M5 14h6"/>"#,
        Input => r#"<path d="M3 2l10 6-4.5 1L6 13z"/>"#,
        Elements => r#"<path d="M2 4h2M6 4h8M4 8h2M8 8h6M4 12h2M8 12h6"/>"#,
        Windows => {
            r#"<rect x="1.5" y="2.5" width="13" height="11" rx="1"/><path d="M1.5 5.5h13"/>"#
        }
        Browser => {
            r#"<circle cx="8" cy="8" r="6.5"/><path d="M1.5 8h13M8 1.5c-3 3.5-3 9.5 0 13M8 1.5c3 3.5 3 9.5 0 13"/>"#
        }
        Shell => r#"<path d="M2 4l4 4-4 4M8 12h6"/>"#,
        Memory => r#"<circle cx="8" cy="8" r="6.5"/><path d="M8 4v4l3 2"/>"#,
        Clipboard => {
            r#"<rect x="3" y="2.5" width="10" height="12" rx="1"/><path d="M6 1.5h4v2H6z"/>"#
        }
        Skill => r#"<path d="M1.5 3h5L8 4l1.5-1h5v10h-5L8 14l-1.5-1h-5zM8 4v10"/>"#,
        Context => r#"<circle cx="8" cy="8" r="5"/><path d="M8 1v4M8 11v4M1 8h4M11 8h4"/>"#,
    };
    let svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" fill="none" stroke="gray">{drawing}</svg>"#
    );
    let data = base64::engine::general_purpose::STANDARD.encode(svg);
    // The URI names its type and an SVG fits any size: no `mimeType`, no `sizes`.
    Icon::new(format!("data:image/svg+xml;base64,{data}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_key_in_two_shapes_may_hold_either_type_and_number_covers_integer() {
        assert_eq!(INT.or(NUM).schema(), Some(json!("number")));
        assert_eq!(opt(OBJ).schema(), Some(json!(["object", "null"])));
        assert_eq!(ANY.schema(), None);
        let f = fields("deskpilot", "click").unwrap();
        let window = f.iter().find(|(k, _)| *k == "window").unwrap().1;
        assert_eq!(window, opt(OBJ));
        assert_eq!(
            Value::Object(schema(&[("a", STR), ("v", ANY)])),
            json!({ "type": "object", "properties": { "a": { "type": "string" }, "v": {} } })
        );
    }

    #[test]
    fn every_group_has_its_own_small_svg_icon() {
        use base64::Engine as _;
        let groups = [
            Screen, Input, Elements, Windows, Browser, Shell, Memory, Clipboard, Skill, Context,
        ];
        let mut seen = Vec::new();
        for g in groups {
            let src = icon(g).src;
            let data = src
                .strip_prefix("data:image/svg+xml;base64,")
                .unwrap_or_else(|| panic!("{g:?}: {src}"));
            let svg = base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap();
            let svg = String::from_utf8(svg).unwrap();
            assert!(
                svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
                "{svg}"
            );
            assert!(svg.ends_with("</svg>"), "{svg}");
            assert!(src.len() <= 320, "{g:?}: {} bytes", src.len());
            assert!(!seen.contains(&src), "{g:?} looks like another group");
            seen.push(src);
        }
        assert_eq!(group("deskpilot", "browser_click"), Some(Browser));
        assert_eq!(group("desktopos", "desktop_cdp_eval"), Some(Browser));
        assert_eq!(group("dsh", "clipboard"), Some(Clipboard));
        assert_eq!(group("computer-use", "click"), Some(Input));
        assert_eq!(group("conformance", "click"), None);
    }

    #[test]
    fn a_known_tool_gets_a_schema_and_an_icon_and_an_unknown_one_keeps_what_it_had() {
        let tool = |name: &str| Tool::new(name.to_string(), "d", Arc::new(Map::new()));
        let t = declare("deskpilot", tool("zoom"));
        assert!(t.output_schema.is_some() && t.icons.is_some());
        let t = declare("conformance", tool("zoom"));
        assert!(t.output_schema.is_none() && t.icons.is_none());
        let mut own = Map::new();
        own.insert("type".into(), Value::from("object"));
        let t = declare(
            "deskpilot",
            tool("zoom").with_raw_output_schema(Arc::new(own.clone())),
        );
        assert_eq!(t.output_schema.as_deref(), Some(&own));
    }

    #[test]
    fn no_tool_is_listed_twice_and_no_key_twice_in_a_shape() {
        for (profile, tools) in PROFILES {
            let mut names: Vec<&str> = tools.iter().map(|(t, ..)| *t).collect();
            names.sort();
            let n = names.len();
            names.dedup();
            assert_eq!(names.len(), n, "{profile}: a tool listed twice");
            for (tool, _, shapes) in *tools {
                for s in *shapes {
                    let mut keys: Vec<&str> = s.iter().map(|(k, _)| *k).collect();
                    keys.sort();
                    let n = keys.len();
                    keys.dedup();
                    assert_eq!(keys.len(), n, "{profile} {tool}: a key twice in one shape");
                }
            }
        }
    }
}
