//! An indicator that runs as a process of its own (`deskpilot __overlay`), so that its death
//! can be seen: the engine-side half, the same on every platform.
//!
//! [`ProcessOverlay`] starts the child on the first `show` and talks to it one line at a time
//! over its stdin / stdout. Child protocol, stdin: `show <opacity> <esc 0|1> <agent|halo|off> <message>`,
//! `hide`; end of input ends the child. Stdout: `shown <x,y,w,h>;… [mark <side>]` (the painted
//! rectangles, and the pointer mark's square when one follows the pointer),
//! `hidden`, `esc`, `host-lost <why>`, `error <why>`. An end of the pipe that was not asked for
//! is `guard-exited`; a `host-lost` line (the child lost its display connection) is
//! `host-exited`. Each platform's backend provides the child (X11: a SHAPE'd override-redirect
//! window and XInput2 raw keys; Windows: a layered topmost window and `GetAsyncKeyState`).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use deskpilot_types::Rect;

use crate::{
    error::Error,
    overlay::{Escapes, GuardEvent, GuardListener, Overlay, OverlayStyle},
};

/// How long the parent waits for the child to acknowledge a command.
const ACK_TIMEOUT: Duration = Duration::from_secs(3);
/// How long an Esc that deskpilot itself sends is expected.
const OWN_ESCAPE_WINDOW: Duration = Duration::from_millis(1500);

/// The indicator as the engine sees it: starts `program __overlay` on the first `show`.
pub struct ProcessOverlay {
    program: PathBuf,
    listener: Arc<Mutex<Option<GuardListener>>>,
    shared: Arc<Shared>,
    child: Mutex<Option<Running>>,
}

/// What the reader thread and the engine-facing side both see.
#[derive(Default)]
struct Shared {
    visible: AtomicBool,
    regions: Mutex<Vec<Rect>>,
    /// The pointer mark's side, 0 for none.
    mark: std::sync::atomic::AtomicU32,
    own_escapes: Mutex<VecDeque<Instant>>,
    heard: Mutex<Escapes>,
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    acks: mpsc::Receiver<String>,
    /// Set before the parent ends the child on purpose, so its end is not a death.
    expected_exit: Arc<AtomicBool>,
}

impl std::fmt::Debug for ProcessOverlay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessOverlay")
            .field("program", &self.program)
            .field("visible", &self.visible())
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ProcessOverlay {
    /// An indicator run by `program __overlay` (normally deskpilot's own executable).
    pub fn new(program: PathBuf) -> Self {
        ProcessOverlay {
            program,
            listener: Default::default(),
            shared: Default::default(),
            child: Mutex::new(None),
        }
    }

    fn spawn(&self) -> Result<Running, Error> {
        let mut child = Command::new(&self.program)
            .arg("__overlay")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| Error::os("start the overlay", e))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(Error::os("start the overlay", "no pipes to the overlay"));
        };
        let pid = child.id();
        let (tx, acks) = mpsc::channel();
        let expected_exit = Arc::new(AtomicBool::new(false));
        let expected = expected_exit.clone();
        let shared = self.shared.clone();
        let listener = self.listener.clone();
        std::thread::Builder::new()
            .name("overlay-reader".into())
            .spawn(move || read_child(BufReader::new(stdout), pid, tx, expected, shared, listener))
            .map_err(|e| Error::os("start the overlay reader", e))?;
        tracing::debug!(pid, "overlay started");
        Ok(Running {
            child,
            stdin,
            acks,
            expected_exit,
        })
    }

    /// Sends one command and waits for its acknowledgement.
    fn command(&self, running: &mut Running, line: &str, ack: &str) -> Result<String, Error> {
        while running.acks.try_recv().is_ok() {}
        writeln!(running.stdin, "{line}")
            .and_then(|()| running.stdin.flush())
            .map_err(|e| Error::os("talk to the overlay", e))?;
        let deadline = Instant::now() + ACK_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match running.acks.recv_timeout(left) {
                Ok(reply) if reply.starts_with(ack) => return Ok(reply),
                Ok(reply) if reply.starts_with("error") => {
                    return Err(Error::os("overlay", reply));
                }
                Ok(_) => continue,
                Err(_) => {
                    return Err(Error::os(
                        "overlay",
                        format!("no answer to {ack:?} within {} ms", ACK_TIMEOUT.as_millis()),
                    ));
                }
            }
        }
    }
}

fn read_child(
    stdout: BufReader<std::process::ChildStdout>,
    pid: u32,
    acks: mpsc::Sender<String>,
    expected_exit: Arc<AtomicBool>,
    shared: Arc<Shared>,
    listener: Arc<Mutex<Option<GuardListener>>>,
) {
    let emit = |event: GuardEvent| {
        let l = lock(&listener).clone();
        if let Some(l) = l {
            l(event);
        }
    };
    let mut host_lost = false;
    for line in stdout.lines() {
        let Ok(line) = line else { break };
        if line == "esc" {
            let own = {
                let mut own = lock(&shared.own_escapes);
                while own.front().is_some_and(|t| t.elapsed() > OWN_ESCAPE_WINDOW) {
                    own.pop_front();
                }
                own.pop_front().is_some()
            };
            if own {
                tracing::debug!("Esc sent by deskpilot itself: not a stop");
                lock(&shared.heard).own += 1;
            } else if shared.visible.load(Ordering::SeqCst) {
                lock(&shared.heard).human += 1;
                emit(GuardEvent::Escape);
            }
        } else if let Some(why) = line.strip_prefix("host-lost") {
            host_lost = true;
            shared.visible.store(false, Ordering::SeqCst);
            emit(GuardEvent::HostExited(format!(
                "the X server closed the connection:{why}"
            )));
        } else {
            let _ = acks.send(line);
        }
    }
    shared.visible.store(false, Ordering::SeqCst);
    if !expected_exit.load(Ordering::SeqCst) && !host_lost {
        emit(GuardEvent::GuardExited(format!(
            "the overlay process (pid {pid}) ended"
        )));
    }
}

impl Overlay for ProcessOverlay {
    fn set_listener(&self, listener: GuardListener) {
        *lock(&self.listener) = Some(listener);
    }

    fn show(&self, style: &OverlayStyle) -> Result<(), Error> {
        let mut child = lock(&self.child);
        let alive = match child.as_mut() {
            Some(r) => matches!(r.child.try_wait(), Ok(None)),
            None => false,
        };
        if !alive {
            *child = Some(self.spawn()?);
        }
        let Some(running) = child.as_mut() else {
            return Err(Error::os("overlay", "not running"));
        };
        let message: String = style
            .message
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let line = format!(
            "show {:.2} {} {} {}",
            style.opacity.clamp(0.05, 1.0),
            u8::from(style.esc_stop),
            style.cursor.as_str(),
            message
        );
        let reply = match self.command(running, &line, "shown") {
            Ok(r) => r,
            Err(e) => {
                // A child that cannot show itself is of no use: end it (quietly).
                running.expected_exit.store(true, Ordering::SeqCst);
                let _ = running.child.kill();
                let _ = running.child.wait();
                *child = None;
                return Err(e);
            }
        };
        let (regions, mark) = parse_shown(&reply["shown".len()..]);
        *lock(&self.shared.regions) = regions;
        self.shared.mark.store(mark.unwrap_or(0), Ordering::SeqCst);
        self.shared.visible.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn hide(&self) -> Result<(), Error> {
        let mut child = lock(&self.child);
        self.shared.visible.store(false, Ordering::SeqCst);
        lock(&self.shared.regions).clear();
        match child.as_mut() {
            Some(running) => self.command(running, "hide", "hidden").map(drop),
            None => Ok(()),
        }
    }

    fn visible(&self) -> bool {
        self.shared.visible.load(Ordering::SeqCst)
    }

    fn regions(&self) -> Vec<Rect> {
        if self.visible() {
            lock(&self.shared.regions).clone()
        } else {
            Vec::new()
        }
    }

    fn pointer_mark(&self) -> Option<u32> {
        let mark = self.shared.mark.load(Ordering::SeqCst);
        (self.visible() && mark > 0).then_some(mark)
    }

    fn expect_own_escape(&self) {
        if self.visible() {
            lock(&self.shared.own_escapes).push_back(Instant::now());
        }
    }

    fn escapes(&self) -> Escapes {
        *lock(&self.shared.heard)
    }

    fn pid(&self) -> Option<u32> {
        lock(&self.child).as_ref().map(|r| r.child.id())
    }

    fn shutdown(&self) {
        self.shared.visible.store(false, Ordering::SeqCst);
        self.stop_child();
    }
}

impl Drop for ProcessOverlay {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl ProcessOverlay {
    fn stop_child(&self) {
        if let Some(mut running) = lock(&self.child).take() {
            running.expected_exit.store(true, Ordering::SeqCst);
            drop(running.stdin);
            let deadline = Instant::now() + Duration::from_millis(500);
            while Instant::now() < deadline {
                if !matches!(running.child.try_wait(), Ok(None)) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = running.child.kill();
            let _ = running.child.wait();
        }
    }
}

/// `" 0,0,1920,5;… mark 48"` → the rectangles and the pointer mark's side.
fn parse_shown(text: &str) -> (Vec<Rect>, Option<u32>) {
    match text.split_once(" mark ") {
        Some((regions, mark)) => (parse_regions(regions), mark.trim().parse().ok()),
        None => (parse_regions(text), None),
    }
}

/// `" 0,0,1920,5;…"` → rectangles.
fn parse_regions(text: &str) -> Vec<Rect> {
    text.split(';')
        .filter_map(|r| {
            let v: Vec<i64> = r.trim().split(',').filter_map(|n| n.parse().ok()).collect();
            match v[..] {
                [x, y, w, h] if w > 0 && h > 0 => {
                    Some(Rect::new(x as i32, y as i32, w as u32, h as u32))
                }
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_parse() {
        assert_eq!(
            parse_regions(" 0,0,100,5;0,95,100,5;bad;1,2,0,3"),
            [Rect::new(0, 0, 100, 5), Rect::new(0, 95, 100, 5)]
        );
        assert_eq!(
            parse_shown(" 0,0,100,5 mark 48"),
            (vec![Rect::new(0, 0, 100, 5)], Some(48))
        );
        assert_eq!(
            parse_shown(" 0,0,100,5"),
            (vec![Rect::new(0, 0, 100, 5)], None)
        );
    }
}
