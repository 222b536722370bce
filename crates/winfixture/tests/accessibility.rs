//! The fixture through the Windows backend's accessibility, without MCP in between. On
//! Windows the tree comes from UI Automation (one cache request) and every pattern acts; under
//! Wine UI Automation is not registered, so the same checks run against the MSAA fallback.
//! Run with `cargo test -p deskpilot-winfixture` on Windows (or under Wine with
//! `CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine`).
#![cfg(windows)]

mod common;

use deskpilot_backend::Accessibility;
use deskpilot_windows::WindowsDesktop;

use common::{Fixture, find, poll, under_wine};

#[test]
fn the_tree_names_every_control_and_its_actions_reach_the_app() {
    let desktop = WindowsDesktop::new().unwrap();
    let fixture = Fixture::start(&desktop, "a11y");
    let tree = fixture.tree(&desktop);
    let expected = if under_wine() { "msaa" } else { "uia" };
    assert_eq!(tree.source, expected, "{:?}", tree.notes);
    assert!(tree.complete, "{:?}", tree.notes);
    for (role, name) in [
        ("Button", "OK"),
        ("Button", "确定"),
        ("CheckBox", "Enable logging"),
        ("ListItem", "Banana"),
        ("ListItem", "Green"),
    ] {
        find(&tree, role, name);
    }

    // The button's click action (Invoke under UI Automation, BM_CLICK under MSAA).
    let ok = find(&tree, "Button", "OK");
    let click = if under_wine() { "click" } else { "invoke" };
    assert!(ok.actions.iter().any(|a| a == click), "{:?}", ok.actions);
    desktop.do_action(&ok.handle, click).unwrap();
    fixture.wait_for("click OK");

    // Toggle, seen in the element's live states.
    let check = find(&tree, "CheckBox", "Enable logging");
    let toggle = if under_wine() { "click" } else { "toggle" };
    desktop.do_action(&check.handle, toggle).unwrap();
    fixture.wait_for("check Enable logging on");
    poll("the check box's state", || {
        desktop.states(&check.handle).ok()?.checked.then_some(())
    });

    // Value in, value out.
    let edit = tree
        .elements
        .iter()
        .find(|e| e.role.as_str() == "Edit")
        .expect("the edit");
    desktop.set_value(&edit.handle, "Zoë 字 😀").unwrap();
    fixture.wait_for("edit Zoë 字 😀");
    assert_eq!(desktop.read_text(&edit.handle).unwrap(), "Zoë 字 😀");

    // Selection in the list box.
    let banana = find(&tree, "ListItem", "Banana");
    desktop.select(&banana.handle).unwrap();
    fixture.wait_for("list Banana");
    poll("Banana selected", || {
        desktop.states(&banana.handle).ok()?.selected.then_some(())
    });
}

#[test]
fn an_unchanged_window_keeps_its_handles_and_unknown_ones_are_gone() {
    let desktop = WindowsDesktop::new().unwrap();
    let fixture = Fixture::start(&desktop, "stale");
    let first = fixture.tree(&desktop);
    let second = fixture.tree(&desktop);
    // Handles are positions in the window's read: a re-read of an unchanged window names
    // every element alike, so the engine keeps its snapshot (and its tokens) across reads.
    let old = find(&first, "Button", "OK");
    assert_eq!(old.handle, find(&second, "Button", "OK").handle);
    desktop.read_text(&old.handle).unwrap();
    let unknown = deskpilot_backend::ElementHandle("msaa:ffff.9999".to_string());
    let err = desktop.read_text(&unknown).unwrap_err();
    assert!(
        matches!(err, deskpilot_backend::Error::ElementGone { .. }),
        "a typed ElementGone, not text: {err}"
    );
}
