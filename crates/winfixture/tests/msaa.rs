//! The MSAA fallback on a Windows that has UI Automation: `DESKPILOT_WINDOWS_A11Y=msaa` makes
//! the backend skip it, and the tree must still name the fixture's controls, say where it came
//! from and why. (Its own test binary: the variable is process-wide.)
#![cfg(windows)]

mod common;

use deskpilot_windows::WindowsDesktop;

use common::{Fixture, find};

#[test]
fn msaa_names_the_controls_and_says_why_it_answers() {
    // SAFETY: set before any thread of this test binary reads the environment.
    unsafe { std::env::set_var("DESKPILOT_WINDOWS_A11Y", "msaa") };
    let desktop = WindowsDesktop::new().unwrap();
    let fixture = Fixture::start(&desktop, "msaa");
    let tree = fixture.tree(&desktop);
    assert_eq!(tree.source, "msaa");
    assert!(
        tree.notes
            .iter()
            .any(|n| matches!(n, deskpilot_backend::TreeNote::FromMsaa(_))),
        "{:?}",
        tree.notes
    );
    for (role, name) in [
        ("Button", "OK"),
        ("Button", "确定"),
        ("CheckBox", "Enable logging"),
        ("ListItem", "Apple"),
    ] {
        let e = find(&tree, role, name);
        assert!(e.bounds.is_some(), "{e:?}");
    }
}
