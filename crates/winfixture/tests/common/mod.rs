//! What the Windows-side tests share: starting the fixture with its event log, finding its
//! window, telling Wine from Windows. Each test binary uses a part of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use deskpilot_backend::{Accessibility, RawElement, RawTree, TreeLimits, Windows};
use deskpilot_types::WindowInfo;
use deskpilot_windows::WindowsDesktop;

/// Whether this runs under Wine (its ntdll exports `wine_get_version`).
pub fn under_wine() -> bool {
    use windows::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
    use windows::core::{s, w};
    // SAFETY: looks up an export of an always-loaded module.
    unsafe {
        GetModuleHandleW(w!("ntdll.dll"))
            .ok()
            .and_then(|m| GetProcAddress(m, s!("wine_get_version")))
            .is_some()
    }
}

/// A running fixture and its event log; killed when dropped.
pub struct Fixture {
    child: Child,
    pub log: PathBuf,
    pub window: WindowInfo,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

impl Fixture {
    pub fn start(desktop: &WindowsDesktop, name: &str) -> Fixture {
        let log = std::env::temp_dir().join(format!(
            "deskpilot-fixture-{}-{name}.log",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&log);
        let child = {
            // Wine fails process creation from two threads at once ("Internal error").
            static SPAWN: Mutex<()> = Mutex::new(());
            let _one = SPAWN.lock().unwrap_or_else(|e| e.into_inner());
            Command::new(env!("CARGO_BIN_EXE_winfixture"))
                .arg(&log)
                .spawn()
                .expect("start the fixture")
        };
        let pid = child.id();
        let window = poll("the fixture's window", || {
            desktop
                .list_windows()
                .ok()?
                .into_iter()
                .find(|w| w.pid == Some(pid) && w.title == "deskpilot Win32 fixture")
        });
        let f = Fixture { child, log, window };
        f.wait_for("ready");
        f
    }

    pub fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    pub fn wait_for(&self, line: &str) {
        poll(line, || {
            self.lines().iter().any(|l| l == line).then_some(())
        });
    }

    pub fn tree(&self, desktop: &WindowsDesktop) -> RawTree {
        desktop
            .tree(
                &self.window,
                &TreeLimits {
                    max_elements: 500,
                    max_depth: 20,
                    timeout: Duration::from_secs(5),
                    fresh: true,
                },
            )
            .expect("the fixture's tree")
    }
}

/// Polls `probe` every 50 ms for up to 10 s.
pub fn poll<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn find<'a>(tree: &'a RawTree, role: &str, name: &str) -> &'a RawElement {
    tree.elements
        .iter()
        .find(|e| e.role.as_str() == role && e.name == name)
        .unwrap_or_else(|| panic!("no {role} \"{name}\" in {:#?}", tree.elements))
}
