//! The gates every mutating action passes before anything reaches the operating system.
//!
//! Seed 004's order is kill switch → blocklist → approval → dry run → overlay. This module holds
//! the deployment's policy switches (`allowLaunch`, `allowCloseWindow`), the blocklist and dry
//! run; the kill switch, approval and overlay join the same function as they are built.
//!
//! Each engine operation calls [`Engine::gate`] once its targets are resolved — the window
//! under the point, the element and its window, the focused window for keys — with a label that
//! names them the way a person would read it: `click at (512, 300) on "Invoice.pdf — Evince"
//! (evince, pid 4242)`. The blocklist matches that label case-insensitively, so an entry such as
//! "1Password" stops every action whose target is named so. Dry run stops the action at the same
//! point and reports what would have happened.

use deskpilot_types::WindowInfo;

use crate::{Engine, Error};

/// ` on "title" (process, pid N)` for a label, or nothing when no window is known.
pub(crate) fn on(window: Option<&WindowInfo>) -> String {
    window
        .map(|w| format!(" on {}", w.label()))
        .unwrap_or_default()
}

/// A text for a label: quoted, cut at 60 characters.
pub(crate) fn quoted(text: &str) -> String {
    let mut s: String = text.chars().take(60).collect();
    if text.chars().count() > 60 {
        s.push('…');
    }
    format!("\"{}\"", s.replace('\n', "\\n"))
}

/// The deployment's safety settings (seed 004's `dryRun`, `blocklist`, `allowLaunch`,
/// `allowCloseWindow`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SafetyConfig {
    pub dry_run: bool,
    /// Case-insensitive substrings of action labels that are refused.
    pub blocklist: Vec<String>,
    pub allow_launch: bool,
    pub allow_close_window: bool,
}

impl Default for SafetyConfig {
    fn default() -> Self {
        SafetyConfig {
            dry_run: false,
            blocklist: Vec::new(),
            allow_launch: true,
            allow_close_window: true,
        }
    }
}

/// What kind of mutation is asked for, where a policy switch governs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    Launch,
    CloseWindow,
    Other,
}

impl Engine {
    /// Lets a mutating action through, or refuses it: `ActionDisabled`, `BlockedTarget`, or
    /// `DryRun` (which surfaces render as "[dry run] Would …", not as a failure).
    pub(crate) fn gate(&self, kind: Mutation, label: &str) -> Result<(), Error> {
        let safety = &self.config().safety;
        let disabled = match kind {
            Mutation::Launch if !safety.allow_launch => Some(("launching programs", "allowLaunch")),
            Mutation::CloseWindow if !safety.allow_close_window => {
                Some(("closing windows", "allowCloseWindow"))
            }
            _ => None,
        };
        if let Some((what, key)) = disabled {
            return Err(Error::ActionDisabled {
                what,
                key,
                label: label.to_string(),
            });
        }
        let lower = label.to_lowercase();
        if let Some(entry) = safety
            .blocklist
            .iter()
            .find(|b| !b.trim().is_empty() && lower.contains(&b.trim().to_lowercase()))
        {
            return Err(Error::BlockedTarget {
                label: label.to_string(),
                entry: entry.clone(),
            });
        }
        if safety.dry_run {
            return Err(Error::DryRun {
                would: label.to_string(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_types::ErrorCode;

    use super::*;
    use crate::EngineConfig;

    fn engine(safety: SafetyConfig) -> Engine {
        Engine::new(
            FakeDesktop::new(100, 100).desktop(),
            EngineConfig {
                safety,
                ..EngineConfig::default()
            },
        )
    }

    #[test]
    fn gates_in_order_policy_then_blocklist_then_dry_run() {
        let label = "window close \"Vault — 1Password\" (1password, pid 7)";
        let e = engine(SafetyConfig::default());
        assert!(e.gate(Mutation::CloseWindow, label).is_ok());

        let e = engine(SafetyConfig {
            allow_close_window: false,
            blocklist: vec!["1password".into()],
            dry_run: true,
            ..SafetyConfig::default()
        });
        let err = e.gate(Mutation::CloseWindow, label).unwrap_err();
        assert_eq!(err.code(), ErrorCode::ActionDisabled);
        assert!(err.to_string().contains("allowCloseWindow"), "{err}");
        let err = e.gate(Mutation::Other, label).unwrap_err();
        assert_eq!(err.code(), ErrorCode::BlockedTarget);
        assert!(err.to_string().contains("1password"), "{err}");
        let err = e.gate(Mutation::Other, "click at (1, 2)").unwrap_err();
        assert!(matches!(err, Error::DryRun { ref would } if would == "click at (1, 2)"));
        // Blank entries never match everything.
        let e = engine(SafetyConfig {
            blocklist: vec!["  ".into()],
            ..SafetyConfig::default()
        });
        assert!(e.gate(Mutation::Other, "anything").is_ok());
    }
}
