//! `PrintWindow` of a covered window: on Windows the fixture draws itself even under another
//! window; under Wine cross-process `PrintWindow` draws nothing, which must read as blank (so
//! the engine falls back to a screen grab) rather than as a black image.
#![cfg(windows)]

mod common;

use deskpilot_backend::{Capture, WindowCapture, WindowControl, WindowOp};
use deskpilot_types::Rect;
use deskpilot_windows::WindowsDesktop;

use common::{Fixture, under_wine};

#[test]
fn a_covered_window_is_captured_alone_or_reported_blank() {
    let desktop = WindowsDesktop::new().unwrap();
    let below = Fixture::start(&desktop, "below");
    let above = Fixture::start(&desktop, "above");
    let frame = below.window.frame;
    desktop
        .window_op(
            above.window.id,
            WindowOp::SetFrame(Rect::new(frame.x + 40, frame.y + 40, 300, 200)),
        )
        .unwrap();
    desktop
        .window_op(above.window.id, WindowOp::Activate)
        .unwrap();
    match desktop.capture_window(&below.window, frame).unwrap() {
        WindowCapture::Captured(f) => {
            assert!(!under_wine(), "Wine's PrintWindow drew something after all");
            assert_eq!(f.rect, frame);
            assert!(!deskpilot_windows::blank::is_blank(&f.data));
        }
        WindowCapture::Blank => assert!(under_wine(), "PrintWindow drew nothing on Windows"),
        WindowCapture::Unsupported => panic!("the whole window is inside its own rectangle"),
    }
}
