//! `deskpilot audit-overlap`: which tools of the MCP servers a user has installed do the same
//! job. Reads the client configurations there are (Claude Desktop, Cursor, DSH, VS Code, or
//! `--config FILE`), starts every stdio server with a deadline, pulls `tools/list`, and ranks
//! cross-server tool pairs by name and description similarity. A candidate list, not a verdict:
//! two `click` tools may act on different things (an OS window, a page's DOM).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

/// `audit-overlap`'s options.
#[derive(Debug, Clone, clap::Args)]
pub struct AuditArgs {
    /// A client configuration to read (repeatable); without it, the ones found at the usual places.
    #[arg(long = "config")]
    pub configs: Vec<PathBuf>,
    /// Seconds each server gets to start and list its tools.
    #[arg(long, default_value_t = 20)]
    pub timeout: u64,
    /// Pairs scoring below this (0-1) are not shown.
    #[arg(long, default_value_t = 0.35)]
    pub min_score: f64,
    /// Show at most this many pairs.
    #[arg(long, default_value_t = 50)]
    pub top: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// One configured server.
#[derive(Debug, Clone)]
struct Configured {
    name: String,
    source: PathBuf,
    command: Option<String>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    cwd: Option<PathBuf>,
    /// A server the audit cannot start (not stdio).
    skip: Option<String>,
}

/// One tool of one server.
#[derive(Debug, Clone)]
struct Tool {
    server: String,
    name: String,
    description: String,
}

/// Where the clients keep their configuration, for this user.
fn default_configs() -> Vec<PathBuf> {
    let env = |k: &str| std::env::var_os(k).map(PathBuf::from);
    let home = env("HOME").or_else(|| env("USERPROFILE"));
    let config = env("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config")));
    let mut out = Vec::new();
    if let Some(a) = env("APPDATA") {
        out.push(a.join("Claude").join("claude_desktop_config.json"));
        out.push(a.join("Code").join("User").join("mcp.json"));
    }
    if let Some(c) = &config {
        out.push(c.join("Claude").join("claude_desktop_config.json"));
        out.push(c.join("Code").join("User").join("mcp.json"));
    }
    if let Some(h) = &home {
        out.push(
            h.join("Library")
                .join("Application Support")
                .join("Claude")
                .join("claude_desktop_config.json"),
        );
        out.push(h.join(".cursor").join("mcp.json"));
        out.push(h.join(".dsh").join("dsh-mcp-manager.json"));
        out.push(h.join(".qwenworkcn").join("mcp.json"));
    }
    out.push(PathBuf::from(".vscode").join("mcp.json"));
    out.into_iter().filter(|p| p.is_file()).collect()
}

/// The servers of one configuration file (`mcpServers`, or VS Code's `servers`).
fn servers_of(path: &Path) -> Result<Vec<Configured>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON ({e})", path.display()))?;
    let table = v
        .get("mcpServers")
        .or_else(|| v.get("servers"))
        .and_then(Value::as_object)
        .ok_or_else(|| {
            format!(
                "{}: no \"mcpServers\" or \"servers\" object",
                path.display()
            )
        })?;
    let mut out = Vec::new();
    for (name, s) in table {
        let strings = |k: &str| -> Vec<String> {
            s.get(k)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        let command = s.get("command").and_then(Value::as_str).map(String::from);
        let kind = s.get("type").and_then(Value::as_str).unwrap_or("stdio");
        let skip = match (&command, kind) {
            (_, "http" | "sse" | "streamable-http" | "streamableHttp") => Some(format!(
                "a {kind} server ({}); only stdio servers are started",
                s.get("url").and_then(Value::as_str).unwrap_or("no url")
            )),
            (None, _) => Some("no command".to_string()),
            _ => None,
        };
        out.push(Configured {
            name: name.clone(),
            source: path.to_path_buf(),
            command,
            args: strings("args"),
            env: s
                .get("env")
                .and_then(Value::as_object)
                .map(|e| {
                    e.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                        .collect()
                })
                .unwrap_or_default(),
            cwd: s.get("cwd").and_then(Value::as_str).map(PathBuf::from),
            skip,
        });
    }
    Ok(out)
}

/// Starts `s`, lists its tools, stops it.
async fn tools_of(s: &Configured, timeout: Duration) -> Result<Vec<Tool>, String> {
    let command = s.command.clone().unwrap_or_default();
    let cmd = tokio::process::Command::new(&command).configure(|c| {
        c.args(&s.args).stderr(Stdio::null());
        for (k, v) in &s.env {
            c.env(k, v);
        }
        if let Some(d) = &s.cwd {
            c.current_dir(d);
        }
    });
    let run = async {
        let transport =
            TokioChildProcess::new(cmd).map_err(|e| format!("cannot start {command}: {e}"))?;
        let client = ().serve(transport).await.map_err(|e| format!("no MCP handshake: {e}"))?;
        let listed = client
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list failed: {e}"));
        let _ = client.cancel().await;
        listed
    };
    let listed = tokio::time::timeout(timeout, run)
        .await
        .map_err(|_| format!("no answer within {} s", timeout.as_secs()))??;
    Ok(listed
        .into_iter()
        .map(|t| Tool {
            server: s.name.clone(),
            name: t.name.into_owned(),
            description: t.description.map(|d| d.into_owned()).unwrap_or_default(),
        })
        .collect())
}

/// A tool name's words: snake_case, kebab-case, dotted and camelCase split, lowercased.
fn name_tokens(name: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' || c == '-' || c == '.' || c == ' ' || c == '/' {
            if !word.is_empty() {
                out.insert(std::mem::take(&mut word));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            out.insert(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        out.insert(word);
    }
    out
}

fn cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xac00..=0xd7af | 0xf900..=0xfaff)
}

/// Words too common in tool descriptions to say anything.
const STOP: &[&str] = &[
    "the", "and", "for", "with", "this", "that", "from", "into", "are", "its", "when", "not",
    "you", "your", "can", "use", "one", "all", "any", "get", "default", "returns", "return",
];

/// A description's features: English words (3+ letters, stop words out) and CJK character
/// bigrams, so Chinese, English and mixed descriptions compare.
fn description_tokens(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut word = String::new();
    let mut run: Vec<char> = Vec::new();
    let flush_run = |run: &mut Vec<char>, out: &mut BTreeSet<String>| {
        if run.len() == 1 {
            out.insert(run[0].to_string());
        }
        for pair in run.windows(2) {
            out.insert(pair.iter().collect());
        }
        run.clear();
    };
    for c in text.chars().chain(std::iter::once(' ')) {
        if cjk(c) {
            run.push(c);
        } else {
            flush_run(&mut run, &mut out);
        }
        if c.is_alphanumeric() && !cjk(c) {
            word.extend(c.to_lowercase());
        } else {
            if word.chars().count() >= 3 && !STOP.contains(&word.as_str()) {
                out.insert(std::mem::take(&mut word));
            }
            word.clear();
        }
    }
    out
}

/// Shared features over the geometric mean of the two sets' sizes (cosine of set vectors).
fn overlap(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    a.intersection(b).count() as f64 / (a.len() as f64 * b.len() as f64).sqrt()
}

/// A ranked pair.
#[derive(Debug, Clone)]
struct Pair {
    a: Tool,
    b: Tool,
    score: f64,
    name: f64,
    description: f64,
}

fn pairs(tools: &[Tool]) -> Vec<Pair> {
    let names: Vec<BTreeSet<String>> = tools.iter().map(|t| name_tokens(&t.name)).collect();
    let descs: Vec<BTreeSet<String>> = tools
        .iter()
        .map(|t| description_tokens(&t.description))
        .collect();
    let mut out = Vec::new();
    for i in 0..tools.len() {
        for j in i + 1..tools.len() {
            if tools[i].server == tools[j].server {
                continue;
            }
            let name = if tools[i].name.eq_ignore_ascii_case(&tools[j].name) {
                1.0
            } else {
                set_similarity(&names[i], &names[j])
            };
            let description = overlap(&descs[i], &descs[j]);
            let score = 0.6 * name + 0.4 * description;
            out.push(Pair {
                a: tools[i].clone(),
                b: tools[j].clone(),
                score,
                name,
                description,
            });
        }
    }
    out.sort_by(|x, y| y.score.total_cmp(&x.score));
    out
}

/// Shared tokens over all tokens of the two names.
fn set_similarity(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let both = a.intersection(b).count() as f64;
    let union = a.union(b).count() as f64;
    both / union
}

const NOTE: &str = "A candidate list, not a verdict: tools with similar names can act on different things \
(an OS window's click and a web page's browser_click), mixed Chinese and English descriptions compare less well, \
and a client's own built-in tools are not seen. Decide per pair, then trim with a server's tool filter \
(deskpilot: --tools / --exclude-tools, groups included).";

pub fn run(args: &AuditArgs) -> anyhow::Result<ExitCode> {
    let files = if args.configs.is_empty() {
        default_configs()
    } else {
        args.configs.clone()
    };
    anyhow::ensure!(
        !files.is_empty(),
        "no MCP client configuration found (Claude Desktop, Cursor, DSH, VS Code); pass --config FILE"
    );
    let mut servers = Vec::new();
    let mut problems = Vec::new();
    for f in &files {
        match servers_of(f) {
            Ok(s) => servers.extend(s),
            Err(e) => problems.push(e),
        }
    }
    let timeout = Duration::from_secs(args.timeout.max(1));
    let runtime = crate::runtime()?;
    let mut reports = Vec::new();
    let mut tools = Vec::new();
    for s in &servers {
        let result = match &s.skip {
            Some(why) => Err(format!("skipped: {why}")),
            None => runtime.block_on(tools_of(s, timeout)),
        };
        match result {
            Ok(t) => {
                reports.push(json!({
                    "name": s.name, "source": s.source, "command": s.command, "args": s.args,
                    "tools": t.len(), "error": null,
                }));
                tools.extend(t);
            }
            Err(e) => reports.push(json!({
                "name": s.name, "source": s.source, "command": s.command, "args": s.args,
                "tools": 0, "error": e,
            })),
        }
    }
    let ranked: Vec<Pair> = pairs(&tools)
        .into_iter()
        .filter(|p| p.score >= args.min_score)
        .take(args.top)
        .collect();
    // The report is this command's output (not an MCP server: stdout is free).
    let mut out_text = String::new();
    macro_rules! say {
        ($out:ident, $($arg:tt)*) => {{
            $out.push_str(&format!($($arg)*));
            $out.push('\n');
        }};
    }
    if args.json {
        let out = json!({
            "note": NOTE,
            "configs": files,
            "problems": problems,
            "servers": reports,
            "pairs": ranked.iter().map(|p| json!({
                "a": { "server": p.a.server, "tool": p.a.name },
                "b": { "server": p.b.server, "tool": p.b.name },
                "score": (p.score * 1000.0).round() / 1000.0,
                "name": (p.name * 1000.0).round() / 1000.0,
                "description": (p.description * 1000.0).round() / 1000.0,
            })).collect::<Vec<_>>(),
        });
        out_text.push_str(&serde_json::to_string_pretty(&out)?);
        out_text.push('\n');
    } else {
        say!(
            out_text,
            "Overlap audit of {} server(s), {} tool(s), from {}.",
            servers.len(),
            tools.len(),
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        say!(out_text, "{NOTE}");
        for p in &problems {
            say!(out_text, "config problem: {p}");
        }
        for r in &reports {
            match r["error"].as_str() {
                Some(e) => say!(
                    out_text,
                    "  server {}: NOT AUDITED — {e}",
                    r["name"].as_str().unwrap_or("?")
                ),
                None => say!(
                    out_text,
                    "  server {}: {} tools",
                    r["name"].as_str().unwrap_or("?"),
                    r["tools"]
                ),
            }
        }
        say!(
            out_text,
            "Near-duplicate pairs, most similar first (score = 0.6 name + 0.4 description):"
        );
        if ranked.is_empty() {
            say!(out_text, "  none at or above {:.2}", args.min_score);
        }
        for p in &ranked {
            say!(
                out_text,
                "  {:.2}  {}/{}  <->  {}/{}   name {:.2}, description {:.2}",
                p.score,
                p.a.server,
                p.a.name,
                p.b.server,
                p.b.name,
                p.name,
                p.description
            );
        }
    }
    use std::io::Write as _;
    std::io::stdout().lock().write_all(out_text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(server: &str, name: &str, description: &str) -> Tool {
        Tool {
            server: server.into(),
            name: name.into(),
            description: description.into(),
        }
    }

    #[test]
    fn names_split_on_every_case_and_separator() {
        let t = |n: &str| name_tokens(n).into_iter().collect::<Vec<_>>();
        assert_eq!(t("desktop_click"), ["click", "desktop"]);
        assert_eq!(t("browserClick"), ["browser", "click"]);
        assert_eq!(t("shell-exec.verified"), ["exec", "shell", "verified"]);
        assert_eq!(t("Click"), ["click"]);
    }

    #[test]
    fn chinese_and_mixed_descriptions_compare_by_bigrams() {
        let a = description_tokens("在指定坐标点击鼠标");
        let b = description_tokens("点击鼠标 at a point");
        assert!(a.contains("点击") && b.contains("点击") && b.contains("point"));
        assert!(overlap(&a, &b) > 0.3, "{a:?} {b:?}");
    }

    #[test]
    fn cross_server_pairs_rank_same_names_first_and_skip_a_servers_own() {
        let tools = [
            tool(
                "deskpilot",
                "browser_click",
                "Click an element of the page by ref.",
            ),
            tool(
                "playwright",
                "browser_click",
                "Perform click on a web page element.",
            ),
            tool(
                "desktopos",
                "desktop_click",
                "在指定坐标点击鼠标 / Click at screen x/y.",
            ),
            tool("deskpilot", "click", "Click at x/y read off a screenshot."),
            tool("deskpilot", "screenshot", "Capture the screen."),
        ];
        let p = pairs(&tools);
        assert_eq!(
            (p[0].a.name.as_str(), p[0].b.name.as_str()),
            ("browser_click", "browser_click")
        );
        assert!(p.iter().all(|x| x.a.server != x.b.server));
        let dc = p
            .iter()
            .find(|x| {
                [x.a.name.as_str(), x.b.name.as_str()] == ["desktop_click", "click"]
                    || [x.a.name.as_str(), x.b.name.as_str()] == ["click", "desktop_click"]
            })
            .unwrap();
        assert!(dc.score >= 0.35, "{dc:?}");
    }

    #[test]
    fn config_files_of_every_client_shape_are_read() {
        let dir = std::env::temp_dir().join(format!("deskpilot-audit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let claude = dir.join("claude.json");
        std::fs::write(
            &claude,
            r#"{"mcpServers": {"desktopos": {"type": "stdio", "command": "node", "args": ["index.js"], "cwd": "C:/x", "env": {"A": "1"}},
                "remote": {"type": "http", "url": "http://127.0.0.1:8765/mcp"}}}"#,
        )
        .unwrap();
        let vscode = dir.join("mcp.json");
        std::fs::write(
            &vscode,
            r#"{"servers": {"pw": {"command": "npx", "args": ["@playwright/mcp"]}}}"#,
        )
        .unwrap();
        let s = servers_of(&claude).unwrap();
        let d = s.iter().find(|s| s.name == "desktopos").unwrap();
        assert_eq!(
            (d.command.as_deref(), d.args.len(), d.env.len()),
            (Some("node"), 1, 1)
        );
        assert!(
            s.iter()
                .find(|s| s.name == "remote")
                .unwrap()
                .skip
                .is_some()
        );
        assert_eq!(servers_of(&vscode).unwrap()[0].name, "pw");
        std::fs::write(&vscode, "{}").unwrap();
        assert!(
            servers_of(&vscode)
                .unwrap_err()
                .contains("no \"mcpServers\"")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
