//! DesktopOS's `memory` group: `memory_recall`, `memory_timeline`, `memory_stats`,
//! `memory_clear`, the kit's memory tools (`kit::memory`) in DesktopOS's words (windows named by
//! `handle`, the way back named `desktop_focus_window`).

use rmcp::handler::server::router::tool::ToolRouter;

use super::{DesktopOs, DesktopOsServer};
use crate::kit::memory::{self, MemoryProfile, MemoryWording};

fn handle(id: deskpilot_types::WindowId) -> String {
    format!("handle={}", id.0)
}

impl MemoryProfile for DesktopOs {
    const MEMORY: MemoryWording = MemoryWording {
        recall: "记忆层:把指代解析成坐标 / Resolve \"刚才那个窗口\", \"钉钉\", \"the last button\" to a window or control with its centre (screen pixels, for desktop_click); a minimized one says so with its handle, a closed one when it was last seen.",
        recall_title: "Recall",
        query: "\"刚才那个窗口\", \"钉钉\", \"the last button\", an app or title word.",
        timeline: "记忆层:最近的操作时间线 / What was perceived and done (perceive, click, type, command), oldest first.",
        timeline_title: "Timeline",
        limit: "Newest entries (default 20, max 500).",
        since: "Only entries at or after this Unix time in ms.",
        stats: "记忆层:索引规模与最后更新时间 / Memory's counts, size on disk, last update and path.",
        clear: "记忆层:清空时间线与窗口索引 / Forget the timeline, the window and control index and the focus history.",
        focus: "desktop_focus_window",
        window: handle,
        window_key: Some("handle"),
    };
}

impl DesktopOsServer {
    /// The `memory` group.
    pub(crate) fn memory_router() -> ToolRouter<Self> {
        memory::tools::<DesktopOs>()
    }
}
