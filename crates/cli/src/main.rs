//! The `deskpilot` binary: `serve` (MCP over stdio), `call` (one tool from a shell),
//! `doctor` (what this machine lacks) and `desktop` (a headless desktop for a command).
//!
//! stdout belongs to the MCP channel in `serve`; everything else this binary says goes to
//! stderr through `tracing`. Only `call`, `doctor` and `desktop`, which are not MCP channels,
//! write their answers to stdout.

mod args;
mod audit;
mod call;
mod config;
mod desktop;
mod doctor;
mod http;
mod platform;
mod serve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use args::{DesktopArgs, ToolArgs, parse_size};

/// Let an AI agent see and drive this desktop through the Model Context Protocol.
#[derive(Debug, Parser)]
#[command(name = "deskpilot", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP over stdio (or Streamable HTTP with --http).
    Serve {
        #[command(flatten)]
        desktop: DesktopArgs,
        #[command(flatten)]
        tools: ToolArgs,
        #[command(flatten)]
        http: http::HttpArgs,
        /// Check the desktop instead of serving: print the backend, a ping and the targetable
        /// windows (computer-use-mcp's `--check`), exit non-zero when it is not reachable.
        #[arg(long)]
        check: bool,
    },
    /// Run one tool and print its result as JSON.
    Call {
        /// Tool name, e.g. list_windows.
        tool: String,
        /// Arguments as a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
        /// Write the first image of the result to this file.
        #[arg(long)]
        save_image: Option<std::path::PathBuf>,
        #[command(flatten)]
        desktop: DesktopArgs,
        #[command(flatten)]
        tools: ToolArgs,
    },
    /// Find near-duplicate tools across the MCP servers your clients start (Claude Desktop,
    /// Cursor, DSH, VS Code, or --config FILE): a ranked candidate list, not a verdict.
    AuditOverlap(audit::AuditArgs),
    /// Check this machine for everything deskpilot needs and print the fix for each miss.
    Doctor {
        #[command(flatten)]
        desktop: DesktopArgs,
    },
    /// Start a headless desktop and run a command in it (or print its environment and wait).
    Desktop {
        #[arg(long, default_value = "1920x1080", value_parser = parse_size)]
        screen: (u32, u32),
        /// The command and its arguments.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Keeps text (read from stdin) on the X clipboard until something else is copied; what
    /// `call clipboard_write` leaves behind, since an X clipboard lives only in its owner.
    #[command(hide = true, name = "__hold-clipboard")]
    HoldClipboard,
    /// The on-screen indicator and Esc listener the server starts for itself.
    #[command(hide = true, name = "__overlay")]
    Overlay,
    /// The OCR worker the server starts for itself (Tesseract, one warm engine per language set).
    #[command(hide = true, name = "__ocr")]
    Ocr,
}

fn main() -> ExitCode {
    config::stash_env_secrets();
    platform::tune_allocator();
    logging();
    deskpilot_mcp::set_spill_root(std::env::temp_dir());
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Serve {
            desktop,
            tools,
            check: true,
            ..
        } => serve::check(&desktop, &tools),
        Command::Serve {
            desktop,
            tools,
            http,
            ..
        } if http.http.is_some() => http::run(&desktop, &tools, &http),
        Command::Serve { desktop, tools, .. } => serve::run(&desktop, &tools),
        Command::Call {
            tool,
            arguments,
            save_image,
            desktop,
            tools,
        } => call::run(&tool, &arguments, save_image.as_deref(), &desktop, &tools),
        Command::AuditOverlap(args) => audit::run(&args),
        Command::Doctor { desktop } => doctor::run(&desktop),
        Command::Desktop { screen, command } => desktop::run(screen, &command),
        Command::HoldClipboard => platform::hold_clipboard(),
        Command::Overlay => platform::overlay(),
        Command::Ocr => platform::ocr_worker(),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            tracing::error!("{e:#}");
            ExitCode::from(2)
        }
    }
}

/// Logs to stderr at `DESKPILOT_LOG`'s levels, and to each MCP client that asked for log
/// messages at the level it chose (the two filter on their own: a client's `debug` does not
/// make stderr louder).
fn logging() {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(|| ScrubbedStderr)
        .with_ansi(false)
        .with_filter(
            tracing_subscriber::EnvFilter::try_from_env("DESKPILOT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,deskpilot=info")),
        );
    tracing_subscriber::registry()
        .with(stderr)
        .with(deskpilot_mcp::logging_layer())
        .init();
}

/// stderr with every known secret value replaced by `<secret NAME>` (the formatter writes
/// each event whole, so a value is never split between two writes).
struct ScrubbedStderr;

impl std::io::Write for ScrubbedStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(deskpilot_types::redact::scrub(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// A multi-threaded runtime for commands that need one (built after any desktop bring-up,
/// so environment changes happen while the process has a single thread of our own).
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}
