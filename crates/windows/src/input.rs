//! Synthetic pointer input: `SendInput` for moves (absolute virtual-desktop coordinates,
//! see [`crate::absolute`]), buttons and the wheel (vertical and horizontal); `GetCursorPos`
//! for receipts. A move that lands off by a pixel (rounding on odd layouts) is corrected with
//! `SetCursorPos`, so the receipt always shows the pixel asked for.

use deskpilot_backend::{Button, Error, Pointer};
use deskpilot_types::Point;
use windows::Win32::Foundation::POINT;
use windows::Win32::UI::Input::KeyboardAndMouse::{
    INPUT, INPUT_0, INPUT_MOUSE, MOUSE_EVENT_FLAGS, MOUSEEVENTF_ABSOLUTE, MOUSEEVENTF_HWHEEL,
    MOUSEEVENTF_LEFTDOWN, MOUSEEVENTF_LEFTUP, MOUSEEVENTF_MIDDLEDOWN, MOUSEEVENTF_MIDDLEUP,
    MOUSEEVENTF_MOVE, MOUSEEVENTF_RIGHTDOWN, MOUSEEVENTF_RIGHTUP, MOUSEEVENTF_VIRTUALDESK,
    MOUSEEVENTF_WHEEL, MOUSEINPUT, SendInput,
};
use windows::Win32::UI::WindowsAndMessaging::{GetCursorPos, SetCursorPos, WHEEL_DELTA};

use crate::desktop::WindowsDesktop;

fn send(flags: MOUSE_EVENT_FLAGS, data: i32) -> Result<(), Error> {
    send_at(flags, data, (0, 0))
}

fn send_at(flags: MOUSE_EVENT_FLAGS, data: i32, (dx, dy): (i32, i32)) -> Result<(), Error> {
    let input = INPUT {
        r#type: INPUT_MOUSE,
        Anonymous: INPUT_0 {
            mi: MOUSEINPUT {
                dx,
                dy,
                dwFlags: flags,
                mouseData: data as u32,
                ..Default::default()
            },
        },
    };
    // SAFETY: one fully initialised INPUT with its size passed alongside.
    let sent = unsafe { SendInput(&[input], size_of::<INPUT>() as i32) };
    if sent == 1 {
        Ok(())
    } else {
        Err(Error::os("SendInput", std::io::Error::last_os_error()))
    }
}

impl Pointer for WindowsDesktop {
    fn position(&self) -> Result<Point, Error> {
        let mut p = POINT::default();
        // SAFETY: `p` is a valid out pointer.
        unsafe { GetCursorPos(&mut p) }.map_err(|e| Error::os("GetCursorPos", e))?;
        Ok(Point::new(p.x, p.y))
    }

    fn move_to(&self, p: Point) -> Result<(), Error> {
        let desk = crate::monitors::virtual_screen();
        send_at(
            MOUSEEVENTF_MOVE | MOUSEEVENTF_ABSOLUTE | MOUSEEVENTF_VIRTUALDESK,
            0,
            crate::absolute::normalized(p, desk),
        )?;
        if self.position()? != p {
            // SAFETY: no pointer arguments.
            unsafe { SetCursorPos(p.x, p.y) }.map_err(|e| Error::os("SetCursorPos", e))?;
        }
        Ok(())
    }

    fn button(&self, button: Button, down: bool) -> Result<(), Error> {
        let flags = match (button, down) {
            (Button::Left, true) => MOUSEEVENTF_LEFTDOWN,
            (Button::Left, false) => MOUSEEVENTF_LEFTUP,
            (Button::Middle, true) => MOUSEEVENTF_MIDDLEDOWN,
            (Button::Middle, false) => MOUSEEVENTF_MIDDLEUP,
            (Button::Right, true) => MOUSEEVENTF_RIGHTDOWN,
            (Button::Right, false) => MOUSEEVENTF_RIGHTUP,
        };
        send(flags, 0)
    }

    fn wheel(&self, dx: i32, dy: i32) -> Result<(), Error> {
        // Windows: positive wheel data scrolls up, so a downward notch is negative.
        if dy != 0 {
            send(MOUSEEVENTF_WHEEL, -dy * WHEEL_DELTA as i32)?;
        }
        if dx != 0 {
            send(MOUSEEVENTF_HWHEEL, dx * WHEEL_DELTA as i32)?;
        }
        Ok(())
    }
}
