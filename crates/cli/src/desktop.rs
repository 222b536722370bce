//! `deskpilot desktop [-- command …]`: a headless desktop for one command (tests, benchmarks,
//! demos), through the same bring-up code as `serve --virtual-display`.
//!
//! The desktop itself is the platform's (`platform::start_virtual`: Xvfb and friends on
//! Linux, an error elsewhere); this module prints its environment or runs the command in it.

use std::io::Write as _;
use std::process::ExitCode;

pub fn run(screen: (u32, u32), command: &[String]) -> anyhow::Result<ExitCode> {
    let vd = crate::platform::start_virtual(screen)?;
    let runtime = crate::runtime()?;
    let code = runtime.block_on(async {
        if command.is_empty() {
            let mut out = std::io::stdout().lock();
            for (k, v) in vd.env() {
                writeln!(out, "export {k}='{}'", v.replace('\'', r"'\''"))?;
            }
            writeln!(out, "# desktop {} is up; Ctrl-C stops it", vd.display())?;
            drop(out);
            crate::platform::shutdown_signal().await;
            return anyhow::Ok(ExitCode::SUCCESS);
        }
        let mut child = tokio::process::Command::new(&command[0])
            .args(&command[1..])
            .spawn()?;
        tokio::select! {
            status = child.wait() => {
                let status = status?;
                Ok(match status.code() {
                    Some(c) => ExitCode::from(c.clamp(0, 255) as u8),
                    None => ExitCode::from(128),
                })
            }
            signal = crate::platform::shutdown_signal() => {
                tracing::info!(signal, "stopping the command and the desktop");
                crate::platform::stop_child(&mut child);
                let _ = child.wait().await;
                Ok(ExitCode::from(130))
            }
        }
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    // `vd` is dropped on return, after the runtime: the desktop goes last.
    code
}
