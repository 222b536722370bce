//! How this profile's arguments name a window: `window_id`, else `title_match`, else the
//! window the client last looked at (the engine's `WindowRef::Current`).

use deskpilot_engine::WindowRef;
use deskpilot_types::WindowId;

/// The window `window_id` (0: none) or `title_match` (empty: none) name.
pub(crate) fn window_ref(window_id: u64, title_match: &str) -> WindowRef {
    match (window_id, title_match.trim().is_empty()) {
        (0, true) => WindowRef::Current,
        (0, false) => WindowRef::TitleMatch(title_match.to_string()),
        (id, _) => WindowRef::Id(WindowId(id)),
    }
}
