//! The table of profiles: one tool surface each over the same engine. `serve --profile NAME`
//! looks the name up here; adding a profile is adding a module (a `ProfileSpec`: name,
//! instructions, timeouts, wording, tools) and a row.
//!
//! The `conformance` row (fixture tools for the MCP conformance suite) exists only with the
//! `conformance` feature, which test builds of the binary turn on.

pub(crate) mod computer_use;
#[cfg(feature = "conformance")]
pub(crate) mod conformance;
pub(crate) mod deskpilot;
pub(crate) mod desktopos;
pub(crate) mod dsh;
pub(crate) mod ui_context;

use std::sync::Arc;

use deskpilot_engine::Engine;
use rmcp::RoleServer;
use rmcp::service::{DynService, ServiceExt};

use crate::kit::ToolFilter;
use crate::kit::filter::Groups;
use crate::kit::server::{ProfileSpec, Server, ServerIdentity};

/// A server for one connection, ready to be served over a transport.
pub struct Surface {
    /// The profile's name.
    pub profile: &'static str,
    /// The tools it exposes after filtering, sorted.
    pub tools: Vec<String>,
    /// The server.
    pub service: Box<dyn DynService<RoleServer>>,
}

impl std::fmt::Debug for Surface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Surface")
            .field("profile", &self.profile)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

/// One row of the table.
#[derive(Debug)]
pub struct Profile {
    pub name: &'static str,
    /// One line for `--help` and error messages.
    pub summary: &'static str,
    /// Builds a server for one new client of `engine`.
    pub build: fn(Arc<Engine>, ServerIdentity, &ToolFilter) -> Surface,
    /// Builds its Streamable HTTP endpoint: a server (and engine session) per MCP session.
    pub http: fn(
        Arc<Engine>,
        ServerIdentity,
        &ToolFilter,
        &crate::http::HttpOptions,
    ) -> crate::http::McpHttp,
    /// Every tool it has, sorted (before any filter).
    pub tools: fn() -> Vec<String>,
    /// The groups a tool filter may name.
    pub groups: Groups,
}

impl Profile {
    /// Checks a tool filter against this profile: every name must be one of its tools or
    /// groups. The error lists them.
    pub fn check_filter(&self, filter: &ToolFilter) -> Result<(), String> {
        filter.check(&(self.tools)(), self.groups)
    }
}

/// Every tool of profile `P`, sorted.
fn names<P: ProfileSpec>() -> Vec<String> {
    let mut n: Vec<String> = P::router()
        .list_all()
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect();
    n.sort();
    n
}

/// Every profile this build has.
pub static PROFILES: &[Profile] = &[
    Profile {
        name: "deskpilot",
        summary: "Codex-style granular tools (the default)",
        build: build::<deskpilot::Deskpilot>,
        http: crate::http::endpoint::<deskpilot::Deskpilot>,
        tools: names::<deskpilot::Deskpilot>,
        groups: deskpilot::GROUPS,
    },
    Profile {
        name: "desktopos",
        summary: "drop-in for DesktopOS: 33 tools (shell_*, desktop_*, desktop_cdp_*, memory_*, desktop_diagnose)",
        build: build::<desktopos::DesktopOs>,
        http: crate::http::endpoint::<desktopos::DesktopOs>,
        tools: names::<desktopos::DesktopOs>,
        groups: desktopos::GROUPS,
    },
    Profile {
        name: "computer-use",
        summary: "drop-in for computer-use-mcp: list_apps, get_window_state, click by element_index, perform_secondary_action, … (13 tools)",
        build: build::<computer_use::ComputerUse>,
        http: crate::http::endpoint::<computer_use::ComputerUse>,
        tools: names::<computer_use::ComputerUse>,
        groups: computer_use::GROUPS,
    },
    Profile {
        name: "dsh",
        summary: "drop-in for dsh-computer-use: computer, app_window, ui_element, clipboard, app_skill",
        build: build::<dsh::Dsh>,
        http: crate::http::endpoint::<dsh::Dsh>,
        tools: names::<dsh::Dsh>,
        groups: &[],
    },
    Profile {
        name: "ui-context",
        summary: "drop-in for the UI Context Protocol (Little Mouse Pointer): ui_context_pick, ui_context_current, ui_context_clear",
        build: build::<ui_context::UiContext>,
        http: crate::http::endpoint::<ui_context::UiContext>,
        tools: names::<ui_context::UiContext>,
        groups: &[],
    },
    #[cfg(feature = "conformance")]
    Profile {
        name: "conformance",
        summary: "fixture tools of the MCP conformance suite (test builds only)",
        build: build::<conformance::Conformance>,
        http: crate::http::endpoint::<conformance::Conformance>,
        tools: names::<conformance::Conformance>,
        groups: &[],
    },
];

/// A server of profile `P` for one new client of `engine`.
fn build<P: ProfileSpec>(
    engine: Arc<Engine>,
    identity: ServerIdentity,
    filter: &ToolFilter,
) -> Surface {
    let server = Server::<P>::new(engine, identity, filter);
    Surface {
        profile: P::NAME,
        tools: server.tool_names(),
        service: server.into_dyn(),
    }
}

/// The profile called `name`, or an error listing those that exist.
pub fn profile(name: &str) -> Result<&'static Profile, UnknownProfile> {
    PROFILES
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| UnknownProfile {
            name: name.to_string(),
        })
}

/// `--profile` named no profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProfile {
    pub name: String,
}

impl std::fmt::Display for UnknownProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no profile \"{}\"; profiles: ", self.name)?;
        for (i, p) in PROFILES.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{} ({})", p.name, p.summary)?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownProfile {}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use deskpilot_backend::FakeDesktop;
    use deskpilot_engine::{Engine, EngineConfig};

    use super::*;

    fn identity() -> ServerIdentity {
        ServerIdentity {
            name: "deskpilot".into(),
            version: "test".into(),
        }
    }

    /// Each profile's `tools/list` (names, input schemas, annotations) as checked in under
    /// `profiles/<name>/tools.json`; a contract change shows as a diff. `DESKPILOT_BLESS=1`
    /// rewrites the files.
    #[test]
    fn tools_list_matches_the_checked_in_snapshot() {
        for p in PROFILES {
            let engine = Arc::new(Engine::new(
                FakeDesktop::new(10, 10).desktop(),
                EngineConfig::default(),
            ));
            let tools = (p.build)(engine, identity(), &ToolFilter::default()).tools;
            assert!(!tools.is_empty(), "{}", p.name);
            let (listed, raw) = match p.name {
                "computer-use" => (computer_use::tools_list(), computer_use::tools_list_raw()),
                "deskpilot" => (deskpilot::tools_list(), deskpilot::tools_list_raw()),
                "desktopos" => (desktopos::tools_list(), desktopos::tools_list_raw()),
                "dsh" => (dsh::tools_list(), dsh::tools_list_raw()),
                "ui-context" => (ui_context::tools_list(), ui_context::tools_list_raw()),
                #[cfg(feature = "conformance")]
                "conformance" => (conformance::tools_list(), conformance::tools_list_raw()),
                other => panic!("profile {other} has no snapshot test"),
            };
            // Compacting drops noise, never a parameter.
            let names = |t: &rmcp::model::Tool| -> Vec<String> {
                let mut n: Vec<String> = t
                    .input_schema
                    .get("properties")
                    .and_then(|p| p.as_object())
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default();
                n.sort();
                n
            };
            for (compact, full) in listed.iter().zip(&raw) {
                assert_eq!(compact.name, full.name);
                assert_eq!(names(compact), names(full), "{}", full.name);
            }
            let json = serde_json::to_string_pretty(&listed).unwrap() + "\n";
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("src/profiles")
                .join(p.name)
                .join("tools.json");
            if std::env::var_os("DESKPILOT_BLESS").is_some() {
                // A new profile's snapshot folder may not exist yet.
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &json).unwrap();
            }
            let want = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                want == json,
                "{} tools/list differs from {} (run with DESKPILOT_BLESS=1 and review the diff)",
                p.name,
                path.display()
            );
        }
    }

    /// Every tool of a profile with groups is in exactly one group, and every group names only
    /// its tools.
    #[test]
    fn groups_partition_the_tools() {
        for p in PROFILES.iter().filter(|p| !p.groups.is_empty()) {
            let tools = (p.tools)();
            let mut grouped: Vec<&str> = p
                .groups
                .iter()
                .flat_map(|(_, t)| t.iter().copied())
                .collect();
            grouped.sort();
            assert_eq!(grouped, tools, "{}: groups and tools differ", p.name);
        }
        let d = profile("desktopos").unwrap();
        // DesktopOS's 33, and desktop_type_secret / desktop_cdp_type_secret (DesktopOS has no
        // way to type a secret).
        assert_eq!(
            (d.tools)().len(),
            35,
            "DesktopOS has 33 tools, and deskpilot's two secret ones"
        );
    }

    /// What a model reads of the `deskpilot` profile's `tools/list` — each tool's name, title,
    /// description, input schema and annotations, as the one JSON-RPC line — stays within 30 000
    /// bytes: clients put exactly that into the model's context, and those that budget it cut
    /// or refuse longer lists. The output schemas and icons a client keeps for itself (it
    /// validates `structuredContent`, draws the icon) are budgeted on the wire below.
    #[test]
    #[allow(clippy::print_stderr)]
    fn what_a_model_reads_of_the_deskpilot_tools_list_fits_in_30000_bytes() {
        let tools = deskpilot::tools_list()
            .into_iter()
            .map(|mut t| {
                t.output_schema = None;
                t.icons = None;
                t
            })
            .collect();
        let line = crate::kit::schema::wire_line(tools);
        eprintln!(
            "tools/list of deskpilot, as a model reads it: {} bytes",
            line.len()
        );
        assert!(
            line.len() <= 30_000,
            "tools/list of deskpilot is {} bytes as a model reads it; tighten wording or schemas (never drop a parameter)",
            line.len()
        );
    }

    /// The whole `tools/list` line of the `deskpilot` profile, output schemas and icons
    /// included, stays within 64 000 bytes on the wire.
    #[test]
    #[allow(clippy::print_stderr)]
    fn the_deskpilot_tools_list_line_fits_in_64000_bytes() {
        let line = crate::kit::schema::wire_line(deskpilot::tools_list());
        eprintln!("tools/list of deskpilot: {} bytes on the wire", line.len());
        assert!(line.len() <= 64_000, "{} bytes on the wire", line.len());
    }

    /// DesktopOS's 33 bilingual tools stay within the same budgets.
    #[test]
    #[allow(clippy::print_stderr)]
    fn the_desktopos_tools_list_fits_the_same_budgets() {
        let tools = desktopos::tools_list();
        let line = crate::kit::schema::wire_line(tools.clone());
        let read = crate::kit::schema::wire_line(
            tools
                .into_iter()
                .map(|mut t| {
                    t.output_schema = None;
                    t.icons = None;
                    t
                })
                .collect(),
        );
        eprintln!(
            "tools/list of desktopos: {} bytes as a model reads it, {} on the wire",
            read.len(),
            line.len()
        );
        assert!(
            read.len() <= 30_000,
            "{} bytes as a model reads it",
            read.len()
        );
        assert!(line.len() <= 64_000, "{} bytes on the wire", line.len());
    }

    /// A profile is built from the kit alone: no file of one profile names another profile
    /// (what two profiles share belongs in the kit).
    #[test]
    fn no_profile_imports_another() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/profiles");
        // Every profile module, whether a folder (`dsh/`), a file (`ui_context.rs`) or both.
        let mut modules: Vec<String> = Vec::new();
        for entry in std::fs::read_dir(&root).unwrap() {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let is_module = if path.is_dir() {
                std::fs::read_dir(&path)
                    .unwrap()
                    .any(|f| f.unwrap().path().extension().is_some_and(|e| e == "rs"))
            } else {
                path.extension().is_some_and(|e| e == "rs") && stem != "mod"
            };
            if is_module && !modules.contains(&stem) {
                modules.push(stem);
            }
        }
        modules.sort();
        assert_eq!(
            modules,
            [
                "computer_use",
                "conformance",
                "deskpilot",
                "desktopos",
                "dsh",
                "ui_context"
            ],
            "a new profile? extend this list"
        );
        let modules: Vec<&str> = modules.iter().map(String::as_str).collect();
        let mut files = Vec::new();
        for &m in &modules {
            let dir = root.join(m);
            if dir.is_dir() {
                for f in std::fs::read_dir(&dir).unwrap() {
                    let f = f.unwrap().path();
                    if f.extension().is_some_and(|e| e == "rs") {
                        files.push((m, f));
                    }
                }
            }
            let file = root.join(format!("{m}.rs"));
            if file.is_file() {
                files.push((m, file));
            }
        }
        assert!(files.len() > modules.len());
        for (own, file) in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for line in text.lines() {
                let line = line.trim();
                assert!(
                    !line.contains("crate::profiles::"),
                    "{}: {line}",
                    file.display()
                );
                for other in modules.iter().filter(|m| **m != own) {
                    assert!(
                        !line.contains(&format!("super::{other}")),
                        "{} uses profile {other}: {line}",
                        file.display()
                    );
                }
            }
        }
    }

    #[test]
    fn an_unknown_profile_lists_the_ones_that_exist() {
        let err = profile("dhs").unwrap_err().to_string();
        assert!(err.contains("no profile \"dhs\""), "{err}");
        assert!(err.contains("deskpilot"), "{err}");
        // A user knows the systems by name, not by where a specification came from.
        assert!(!err.to_lowercase().contains("seed"), "{err}");
        assert!(err.contains("dsh-computer-use"), "{err}");
        assert!(err.contains("UI Context Protocol"), "{err}");
        assert!(err.contains("DesktopOS"), "{err}");
        assert!(err.contains("computer-use-mcp"), "{err}");
    }
}
