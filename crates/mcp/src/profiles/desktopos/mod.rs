//! The `desktopos` profile: DesktopOS as a drop-in — its 33 tools (`shell_*`, `desktop_*`,
//! `desktop_cdp_*`, `memory_*`, `desktop_diagnose`) with DesktopOS's names, parameters, defaults
//! and result fields, over the same engine, session and gates as every other profile.
//!
//! DesktopOS's meaning is kept where it differs from deskpilot's: x/y are screen pixels (its
//! agents compute them from window rects), `verify` answers `diffRatio` and `scope`, scroll
//! `delta` is in wheel units with negative meaning down, windows are `handle`s. What deskpilot
//! adds stays: every click passes the gates, the pointer receipt and the hit test, and says
//! which window it landed on. Descriptions are bilingual (DesktopOS's users read Chinese).

mod cdp;
mod desktop;
mod elements;
mod memory;
mod wording;

use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;

use crate::kit::server::{ProfileSpec, Server, describe, rename_param};
use crate::kit::{self, Wording};

pub(crate) use wording::error;

const INSTRUCTIONS: &str = "DesktopOS tools (served by deskpilot) drive this computer's real desktop and a \
persistent shell. desktop_perceive first: it lists every window with its handle and rect and says which are \
really visible (minimized / offscreen / covered / blank); x/y of desktop_click, desktop_move and desktop_scroll are \
screen pixels (take a window rect's centre). Pass verify (and verifyRegion: the target window's rect) to learn \
whether the action changed anything (diffRatio, scope). Prefer desktop_elements + desktop_click_element for named \
controls, desktop_cdp_* inside Chromium pages. memory_recall resolves \"that window\" / \"刚才那个窗口\". Every error \
carries a diagnosis (category, reason, hint, suggestion, retryable, fix). A human can stop you with Esc \
(STOPPED_BY_HUMAN): stop and wait.";

/// The `desktopos` profile.
#[derive(Debug)]
pub struct DesktopOs;

/// The MCP server for the `desktopos` profile: one per connection, over its own session.
pub type DesktopOsServer = Server<DesktopOs>;

/// DesktopOS's tool groups (its README's table), for `DESKTOPOS_TOOLS` and the other filters.
pub(crate) const GROUPS: &[(&str, &[&str])] = &[
    (
        "shell",
        &[
            "shell_exec",
            "shell_exec_verified",
            "shell_cd",
            "shell_cwd",
            "shell_env_get",
            "shell_env_set",
            "shell_reset",
        ],
    ),
    (
        "desktop",
        &[
            "desktop_list_windows",
            "desktop_perceive",
            "desktop_screenshot",
            "desktop_cursor",
            "desktop_move",
            "desktop_click",
            "desktop_type",
            "desktop_type_secret",
            "desktop_key",
            "desktop_scroll",
            "desktop_focus_window",
        ],
    ),
    ("elements", &["desktop_elements", "desktop_click_element"]),
    (
        "cdp",
        &[
            "desktop_browser_launch",
            "desktop_cdp_targets",
            "desktop_cdp_open",
            "desktop_cdp_elements",
            "desktop_cdp_click",
            "desktop_cdp_type",
            "desktop_cdp_type_secret",
            "desktop_cdp_eval",
            "desktop_cdp_screenshot",
            "desktop_cdp_close",
        ],
    ),
    (
        "memory",
        &[
            "memory_recall",
            "memory_timeline",
            "memory_stats",
            "memory_clear",
        ],
    ),
    ("diagnose", &["desktop_diagnose"]),
];

/// DesktopOS's descriptions of the shell tools and the diagnoser, in both languages.
const SHELL_DESCRIPTIONS: &[(&str, &str)] = &[
    (
        "shell_exec",
        "在持久化会话中执行命令 / Run a command in the persistent shell session (bash on Linux, PowerShell on Windows): cd, variables and venvs stay between calls; exit code, stdout and stderr apart.",
    ),
    (
        "shell_cd",
        "修改工作目录(支持中文路径)/ Change the session's working directory for later shell_exec calls.",
    ),
    ("shell_cwd", "查当前目录 / The session's working directory."),
    (
        "shell_env_get",
        "读取会话中的环境变量 / Read a variable of the session.",
    ),
    (
        "shell_env_set",
        "设置环境变量,跨调用保持 / Set a variable; later shell_exec calls see it.",
    ),
    (
        "shell_exec_verified",
        "执行命令并用文件系统独立验证,失败时按诊断重试或修补 / Run a command, check expect (pathExists, pathNotExists, isDir, isFile, fileContains [path, text], cwd) through the filesystem, retry only when the diagnosis says it can help; autoFix creates a missing parent directory.",
    ),
    (
        "shell_reset",
        "重置会话(重启 shell)/ Restart the session's shell when it misbehaves.",
    ),
    (
        "desktop_diagnose",
        "把报错翻译成「为什么 + 怎么办」/ Explain an error text: category, reason, hint, suggestion, whether retrying helps, a safe fix. Rule-based, milliseconds, no LLM.",
    ),
];

impl ProfileSpec for DesktopOs {
    const NAME: &'static str = "desktopos";
    const INSTRUCTIONS: &'static str = INSTRUCTIONS;
    const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
    const SCREENSHOT_TIMEOUT: Duration = Duration::from_secs(30);
    const GROUPS: &'static [(&'static str, &'static [&'static str])] = GROUPS;

    fn wording() -> &'static dyn Wording {
        &wording::WORDING
    }

    fn router() -> ToolRouter<DesktopOsServer> {
        let mut shell = kit::shell::tools::<Self>("desktop_diagnose");
        for (name, description) in SHELL_DESCRIPTIONS {
            describe(&mut shell, name, description);
        }
        // DesktopOS's spellings (the argument structs take both).
        rename_param(&mut shell, "shell_exec", "timeout_ms", "timeout");
        rename_param(&mut shell, "shell_exec_verified", "timeout_ms", "timeout");
        rename_param(&mut shell, "shell_exec_verified", "auto_fix", "autoFix");
        shell
            + DesktopOsServer::desktop_router()
            + DesktopOsServer::elements_router()
            + DesktopOsServer::memory_router()
            + DesktopOsServer::cdp_router()
    }
}

/// Every tool as the routers declare it, before compacting.
#[cfg(test)]
pub(crate) fn tools_list_raw() -> Vec<rmcp::model::Tool> {
    kit::server::tools_list_raw::<DesktopOs>()
}

/// What `tools/list` answers with every tool exposed.
#[cfg(test)]
pub(crate) fn tools_list() -> Vec<rmcp::model::Tool> {
    kit::server::tools_list::<DesktopOs>()
}
