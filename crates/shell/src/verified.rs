//! `shell_exec_verified`: run → check the expectations through the filesystem → diagnose →
//! apply the one safe fix (a missing parent directory of something the command creates) →
//! retry with growing pauses while the diagnosis says a retry can help.
//!
//! Checks never ask the shell (a command's own word is not evidence); the fix is additive
//! only and applied at most once.

use std::path::Path;
use std::time::Duration;

use crate::{
    diagnose::{Diagnosis, Fix, diagnose},
    expect::{Check, Expect},
    session::{Output, Session, ShellError},
};

/// One attempt of `shell_exec_verified`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Attempt {
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub checks: Vec<Check>,
    pub diagnosis: Option<Diagnosis>,
    pub fix_applied: Option<String>,
    pub stderr: String,
}

/// Every attempt of a verified run, and how it ended.
#[derive(Debug)]
pub struct VerifiedRun {
    pub attempts: Vec<Attempt>,
    /// Every expectation held after the last attempt.
    pub passed: bool,
    /// The last attempt's output.
    pub last: Option<Output>,
    /// Why it stopped when it did not pass.
    pub stopped: String,
}

/// Runs, checks, diagnoses, fixes (the additive case only, when `auto_fix`), and retries while
/// it makes sense.
pub fn run_verified(
    s: &mut Session,
    command: &str,
    expect: &Expect,
    retries: u32,
    t: Duration,
    auto_fix: bool,
    stop: &dyn Fn() -> bool,
) -> VerifiedRun {
    let mut attempts = Vec::new();
    let mut last = None;
    let mut fixed = false;
    let mut attempt = 0;
    loop {
        let (out, timed_out) = match s.exec_until(command, t, stop) {
            Ok(o) => (o, false),
            Err(ShellError::Timeout { output }) => (*output, true),
            Err(e) => {
                attempts.push(Attempt {
                    exit_code: None,
                    timed_out: false,
                    checks: vec![],
                    diagnosis: None,
                    fix_applied: None,
                    stderr: e.to_string(),
                });
                return VerifiedRun {
                    attempts,
                    passed: false,
                    last,
                    stopped: format!("the shell failed: {e}"),
                };
            }
        };
        let checks = expect.check(Path::new(&out.cwd));
        let passed = checks.iter().all(|c| c.ok);
        let mut a = Attempt {
            exit_code: out.exit_code,
            timed_out,
            checks,
            diagnosis: None,
            fix_applied: None,
            stderr: out.stderr.text.chars().take(2000).collect(),
        };
        if passed {
            attempts.push(a);
            return VerifiedRun {
                attempts,
                passed: true,
                last: Some(out),
                stopped: String::new(),
            };
        }
        let error = if timed_out {
            "timed out".to_string()
        } else if out.stderr.text.trim().is_empty() && out.exit_code == Some(0) {
            // The command claims success but the effect is not there.
            String::new()
        } else {
            out.stderr.text.clone()
        };
        let d = diagnose(
            &error,
            &out.stdout.text,
            command,
            out.exit_code.filter(|c| *c != 0),
            Some(Path::new(&out.cwd)),
        );
        let fix = match &d.fix {
            Some(Fix::CreateDirectory { path }) if !fixed => Some(path.clone()),
            _ => None,
        };
        let refused = fix.as_ref().filter(|_| !auto_fix).map(|dir| {
            format!(
                "the fix (create the missing directory {dir}) is off for this call (autoFix false)"
            )
        });
        let fix = fix.filter(|_| auto_fix);
        let retryable = d.retryable;
        a.diagnosis = Some(d);
        last = Some(out);
        let stop = if let Some(why) = refused {
            Some(why)
        } else if let Some(dir) = fix {
            match std::fs::create_dir_all(&dir) {
                Ok(()) => {
                    fixed = true;
                    a.fix_applied = Some(format!("created the missing directory {dir}"));
                    None
                }
                Err(e) => Some(format!("the fix (create {dir}) failed: {e}")),
            }
        } else if !retryable {
            Some("the diagnosis says retrying as is cannot help".to_string())
        } else if attempt >= retries {
            Some(format!("{} retries used", retries))
        } else if stop() {
            Some("stopped by its caller".to_string())
        } else {
            // Backoff before the next try: 200 ms, 400 ms, 800 ms, …
            std::thread::sleep(Duration::from_millis(200 << attempt.min(5)));
            None
        };
        let fixed_now = a.fix_applied.is_some();
        attempts.push(a);
        if let Some(stopped) = stop {
            return VerifiedRun {
                attempts,
                passed: false,
                last,
                stopped,
            };
        }
        if !fixed_now {
            attempt += 1;
        }
    }
}
