//! `deskpilot doctor`: every check, its outcome, and the fix for each miss.

use std::io::Write as _;
use std::process::ExitCode;

use crate::DesktopArgs;

pub fn run(args: &DesktopArgs) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "deskpilot {} on {}",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS
    )?;
    #[cfg(target_os = "linux")]
    {
        let (_desktop, _session) = crate::platform::connect(args)?;
        let checks = deskpilot_x11::doctor::run(None);
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
    #[cfg(not(target_os = "linux"))]
    {
        let (desktop, _session) = crate::platform::connect(args)?;
        let ok = desktop.screens.monitors().is_ok();
        writeln!(
            out,
            "{:4}  {:18} {}",
            if ok { "ok" } else { "FAIL" },
            "desktop",
            desktop.info.display
        )?;
        Ok(if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        })
    }
}
