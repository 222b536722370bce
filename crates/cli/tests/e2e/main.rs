//! End-to-end tests: the real `deskpilot` binary over stdio, driven by rmcp's MCP client,
//! against real X11 apps on a private virtual desktop.
//!
//! One test binary, a module per area. The desktop comes from the same
//! `deskpilot_x11::VirtualDisplay` that `deskpilot serve --virtual-display` uses. Without
//! Xvfb the desktop tests print a visible SKIP line, except under `CI=true`, where a desktop
//! that cannot start fails the run. Every server's stdout is teed and checked to hold
//! nothing but JSON-RPC messages when the test ends.
#![cfg(target_os = "linux")]

mod apps;
mod audit;
mod browser;
mod browser_secrets;
mod cli;
mod clipboard;
mod computer_use;
mod context;
mod covered;
mod desktopos;
mod dsh;
mod elements;
mod faults;
mod fuzz;
mod guard;
mod harness;
mod http;
mod keyboard;
mod manage;
mod mcp_logging;
mod memory;
mod multimonitor;
mod ocr;
mod paint;
mod password_fields;
mod pointer;
mod prompts;
mod protocol;
mod realapps;
mod resources;
mod revisions;
mod safety;
mod screenshot;
mod secrets;
mod shell;
mod skills;
mod tasks;
mod verify;
mod wait;
mod windows;
mod wine;
