//! `deskpilot doctor`: every check, its outcome, and the fix for each miss.
//!
//! Which checks run is the platform's choice (`platform::doctor`: the backend's own checks,
//! then OCR, and on Windows the overlay process and the shell); this module prints them and
//! turns a miss into the exit code.

use std::io::Write as _;
use std::process::ExitCode;

use crate::args::DesktopArgs;

pub fn run(args: &DesktopArgs) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "deskpilot {} on {}",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS
    )?;
    let checks = crate::platform::doctor(args)?;
    let mut failed = 0;
    for c in &checks {
        writeln!(
            out,
            "{:4}  {:18} {}",
            if c.ok { "ok" } else { "FAIL" },
            c.name,
            c.detail
        )?;
        if let Some(fix) = &c.fix {
            writeln!(out, "      {:18} fix: {fix}", "")?;
        }
        if !c.ok {
            failed += 1;
        }
    }
    writeln!(
        out,
        "{}",
        if failed == 0 {
            "everything deskpilot needs is here".to_string()
        } else {
            format!("{failed} problem(s)")
        }
    )?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
