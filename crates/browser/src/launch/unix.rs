//! The Unix side of launching a browser: installed browsers are found on `PATH`; a launched
//! browser runs in a process group of its own (killed whole with `killpg`) and, on Linux, gets
//! `PR_SET_PDEATHSIG` so it dies with deskpilot even on SIGKILL. What is known of other
//! processes is read from `/proc` (Linux; elsewhere nothing is known and nothing is removed).

use std::path::PathBuf;
use std::process::{Child, Command};

/// Where to find a browser when none is installed.
pub(super) const NO_BROWSER: &str =
    "install Debian's chromium (`apt-get install -y chromium`), or set DESKPILOT_BROWSER";

/// The installed browsers' paths, in the order they are tried: each name in each `PATH` entry.
pub(super) fn installed() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
        "microsoft-edge",
    ] {
        if let Some(path) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&path) {
                out.push(dir.join(name));
            }
        }
    }
    out
}

/// Prepares `cmd` to be spawned tied to deskpilot: its own process group, so the whole browser
/// can be killed at once, and on Linux a death signal when the spawning thread ends.
pub(super) fn own(cmd: &mut Command) {
    use std::os::unix::process::CommandExt as _;
    cmd.process_group(0);
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Adds `--no-sandbox` when deskpilot runs as root: Chromium refuses to run its sandbox as
/// root (CI runs as root).
pub(super) fn sandbox(cmd: &mut Command) {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        cmd.arg("--no-sandbox");
    }
}

/// What ends a launched browser whole: its process group, whose id is its pid.
#[derive(Debug)]
pub(super) struct Hold;

/// Nothing to take hold of: the process group was made at spawn ([`own`]).
pub(super) fn hold(_child: &Child) -> Hold {
    Hold
}

impl Hold {
    /// Kills `child`'s whole process group.
    pub(super) fn kill(&self, child: &Child) {
        // SAFETY: killpg only sends a signal; the group id is the browser's own pid
        // (process_group(0) at spawn).
        unsafe {
            libc::killpg(child.id() as libc::pid_t, libc::SIGKILL);
        }
    }
}

/// Whether a live (not zombie) process is left in process group `pgid`. Zombies count as gone:
/// where pid 1 does not reap (containers), the browser's orphans stay zombies forever.
pub(super) fn group_alive(pgid: u32) -> bool {
    if !cfg!(target_os = "linux") {
        return false;
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| {
            // After the command name: state, ppid, pgrp, …
            let mut rest = s.rsplit_once(')').map_or("", |(_, r)| r).split_whitespace();
            let state = rest.next();
            let pgrp = rest.nth(1).and_then(|g| g.parse::<u32>().ok());
            pgrp == Some(pgid) && !matches!(state, Some("Z" | "X"))
        })
    })
}

/// Whether process `pid` is known to have ended, so that its profile directories may go
/// (Linux; elsewhere nothing is known to have ended).
pub(super) fn ended(pid: u32) -> bool {
    cfg!(target_os = "linux") && !running(pid)
}

/// Whether process `pid` runs (a zombie does not: it is dead, only not yet reaped).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

/// The `--remote-debugging-port` on a process's command line, when it has one (Linux).
pub fn debug_port_of(pid: u32) -> Option<u16> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    // Chromium rewrites its command line into one space-separated string.
    let args: Vec<&str> = cmdline
        .split(|b| *b == 0)
        .filter_map(|a| std::str::from_utf8(a).ok())
        .flat_map(|a| a.split(' '))
        .collect();
    let flag = |name: &str| args.iter().find_map(|a| a.strip_prefix(name));
    let port = flag("--remote-debugging-port=")?;
    match port.parse::<u16>().ok().filter(|p| *p != 0) {
        Some(p) => Some(p),
        // Port 0: the browser picked one and wrote it into its profile directory.
        None => std::fs::read_to_string(
            std::path::Path::new(flag("--user-data-dir=")?).join("DevToolsActivePort"),
        )
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok(),
    }
}
