//! Why did it fail, and does retrying make sense? A rule table over error text (bash,
//! coreutils and PowerShell messages, English and their Chinese localisations, and deskpilot's
//! own error codes), answered in microseconds and testable, never a model call.
//!
//! Each answer has a category, a reason in words, a hint, a concrete next step, `retryable`
//! (whether running the same thing again can succeed) and, for the one additive case, a fix:
//! a command that creates something whose parent directory is missing gets the directory
//! created — only when the parent truly does not exist, and never for a command that reads.
//! Anything no rule knows is said to be unclassified, with the original text kept.

use std::path::{Path, PathBuf};

/// A diagnosis.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diagnosis {
    /// `access-denied`, `cmd-not-found`, `missing-parent`, … or `unknown`.
    pub category: &'static str,
    pub reason: String,
    pub hint: String,
    /// A concrete next step (a command or a tool call).
    pub suggestion: String,
    /// Whether the same call, unchanged, can succeed later.
    pub retryable: bool,
    /// An automatic repair, when one is safe.
    pub fix: Option<Fix>,
    /// The text that decided the category.
    pub matched: Option<String>,
}

/// An automatic repair.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fix {
    /// Create this directory (and its parents): the command creates something inside it.
    CreateDirectory { path: String },
}

struct Rule {
    category: &'static str,
    /// Lower-case substrings; any one matches.
    patterns: &'static [&'static str],
    reason: &'static str,
    hint: &'static str,
    suggestion: &'static str,
    retryable: bool,
}

/// The table, most specific first.
const RULES: &[Rule] = &[
    Rule {
        category: "encoding",
        patterns: &[
            "invalid multibyte",
            "illegal byte sequence",
            "unicodedecodeerror",
            "unicodeencodeerror",
            "codec can't",
            "invalid utf-8",
            "stream did not contain valid utf-8",
            "锟斤拷",
            "�",
            "编码错误",
        ],
        reason: "text was decoded with the wrong character encoding (mojibake, replacement characters or an encoder error)",
        hint: "the bytes are fine, their interpretation is not; retrying the same way prints the same garbage",
        suggestion: "force UTF-8: LC_ALL=C.UTF-8 / PYTHONIOENCODING=utf-8 (bash), [Console]::OutputEncoding = [Text.Encoding]::UTF8 or -Encoding utf8 (PowerShell); for typing, use clipboard_write + ctrl+v",
        retryable: false,
    },
    Rule {
        category: "file-busy",
        patterns: &[
            "text file busy",
            "device or resource busy",
            "being used by another process",
            "resource temporarily unavailable",
            "sharing violation",
            "the process cannot access the file",
            "文本文件忙",
            "设备或资源忙",
            "正由另一进程使用",
            "另一个程序正在使用此文件",
            "进程无法访问此文件",
        ],
        reason: "another process holds the file or resource",
        hint: "this usually clears once the other process lets go",
        suggestion: "wait a moment and retry, or find the holder (fuser / lsof; Get-Process on Windows) and close it",
        retryable: true,
    },
    Rule {
        category: "access-denied",
        patterns: &[
            "permission denied",
            "access is denied",
            "access denied",
            "access to the path",
            "unauthorizedaccessexception",
            "operation not permitted",
            "eacces",
            "eperm",
            "read-only file system",
            "拒绝访问",
            "权限不够",
            "权限不足",
            "没有权限",
            "访问被拒绝",
            "只读文件系统",
        ],
        reason: "the account deskpilot runs as may not do this (permissions, a read-only file system, or a protected location)",
        hint: "retrying as the same user fails the same way",
        suggestion: "pick a location you own (e.g. under $HOME or the temp directory), fix the permissions (chmod / icacls), or ask the human to do this step",
        retryable: false,
    },
    Rule {
        category: "cmd-not-found",
        patterns: &[
            "command not found",
            "is not recognized as the name of a cmdlet",
            "is not recognized as an internal or external command",
            "commandnotfoundexception",
            "no such command",
            "未找到命令",
            "识别为 cmdlet",
            "不是内部或外部命令",
        ],
        reason: "no program, function or cmdlet by that name exists in this shell",
        hint: "the name is misspelt, the program is not installed, or it is not on PATH (or the venv is not activated)",
        suggestion: "check with `command -v NAME` (bash) or `Get-Command NAME` (PowerShell); install it or call it by its full path",
        retryable: false,
    },
    Rule {
        category: "bad-args",
        patterns: &[
            "invalid option",
            "unrecognized option",
            "unrecognised option",
            "illegal option",
            "unknown option",
            "missing operand",
            "missing argument",
            "too many arguments",
            "usage:",
            "a parameter cannot be found that matches",
            "parameterbindingexception",
            "cannot bind parameter",
            "positional parameter cannot be found",
            "无效的选项",
            "无效选项",
            "缺少操作数",
            "找不到与参数名称",
            "参数过多",
        ],
        reason: "the command was called with options or arguments it does not accept",
        hint: "the same arguments fail the same way every time",
        suggestion: "read the usage (`NAME --help`, `Get-Help NAME -Full`) and fix the call",
        retryable: false,
    },
    Rule {
        category: "type-conversion",
        patterns: &[
            "cannot convert",
            "invalid cast",
            "invalidcastexception",
            "integer expression expected",
            "invalid number",
            "invalid literal for int",
            "could not convert",
            "无法将值",
            "转换为类型",
            "需要整数表达式",
        ],
        reason: "a value has the wrong type or format for what it was given to",
        hint: "the value, not the timing, is wrong",
        suggestion: "pass the value in the expected form (a number without units, a quoted string, an explicit cast)",
        retryable: false,
    },
    Rule {
        category: "syntax",
        patterns: &[
            "syntax error",
            "unexpected token",
            "unexpected end of file",
            "unexpected eof",
            "parsererror",
            "missing terminator",
            "missing closing",
            "unterminated",
            "the string is missing the terminator",
            "语法错误",
            "意外的标记",
            "缺少终止符",
        ],
        reason: "the command is not valid in this shell's language (quoting, brackets, or another shell's syntax)",
        hint: "bash and PowerShell quote differently; the same text fails the same way",
        suggestion: "fix the quoting (single quotes for literal text), close every bracket, and use this shell's syntax",
        retryable: false,
    },
    Rule {
        category: "timeout",
        patterns: &[
            "timed out",
            "timeout",
            "time-out",
            "deadline exceeded",
            "wait_timeout",
            "超时",
        ],
        reason: "it did not finish in the time it was given",
        hint: "it may be slow rather than broken, or waiting for input that never comes",
        suggestion: "retry with a longer timeout; make interactive programs non-interactive (-y, --no-pager, < /dev/null); check the network",
        retryable: true,
    },
    Rule {
        category: "already-exists",
        patterns: &[
            "file exists",
            "already exists",
            "resourceexists",
            "skill_exists",
            "文件已存在",
            "已存在",
        ],
        reason: "the target already exists, so it cannot be created again",
        hint: "running it again meets the same file",
        suggestion: "use it as it is, choose another name, or pass the tool's force / -p / -Force option if replacing is intended",
        retryable: false,
    },
    Rule {
        category: "path-not-found",
        patterns: &[
            "no such file or directory",
            "cannot find path",
            "could not find a part of the path",
            "could not find file",
            "itemnotfoundexception",
            "directorynotfoundexception",
            "filenotfoundexception",
            "the system cannot find the path specified",
            "the system cannot find the file specified",
            "not a directory",
            "没有那个文件或目录",
            "找不到路径",
            "未能找到路径",
            "系统找不到指定的路径",
            "系统找不到指定的文件",
            "不是目录",
        ],
        reason: "the path does not exist (from the shell's current directory)",
        hint: "check the spelling and the working directory (shell_cwd); relative paths start there",
        suggestion: "list what is there (ls / Get-ChildItem) and use the right path",
        retryable: false,
    },
    Rule {
        category: "element-not-found",
        patterns: &[
            "element_not_found",
            "element not found",
            "no such element",
            "elementnotavailable",
            "找不到控件",
            "找不到元素",
        ],
        reason: "no control matches in the window as it is now",
        hint: "the window changed, or the control has another name or role",
        suggestion: "call get_window_state (or find_elements) again and use a current token; fall back to clicking coordinates from a screenshot",
        retryable: false,
    },
    Rule {
        category: "element-ambiguous",
        patterns: &[
            "ambiguous_window",
            "ambiguous",
            "matched several",
            "matches several",
            "multiple elements",
            "more than one",
            "多个匹配",
        ],
        reason: "the description matched more than one window or control",
        hint: "the same words pick the same several candidates again",
        suggestion: "pass the exact id or token from the listing instead of a title or name fragment",
        retryable: false,
    },
    Rule {
        category: "window-minimized",
        patterns: &[
            "window_minimized",
            "is minimized",
            "minimised",
            "窗口已最小化",
            "最小化",
        ],
        reason: "the window is minimized, so it has no pixels and takes no clicks",
        hint: "nothing changes until it is restored",
        suggestion: "window { action: \"restore\" } (or focus) first, then take a screenshot",
        retryable: false,
    },
    Rule {
        category: "stale-handle",
        patterns: &[
            "stale_element",
            "target_window_gone",
            "target_window_changed",
            "window_not_found",
            "invalid window handle",
            "invalid handle",
            "handle is invalid",
            "no window with id",
            "unknown object",
            "句柄无效",
        ],
        reason: "the window or element it refers to is gone or was replaced",
        hint: "ids and tokens describe a moment; that moment passed",
        suggestion: "list_windows / get_window_state again and use the new id or token",
        retryable: false,
    },
    Rule {
        category: "accessibility-unavailable",
        patterns: &[
            "accessibility_unavailable",
            "accessibility bus",
            "at-spi",
            "org.a11y",
            "uiautomation",
            "ui automation",
            "regdb_e_classnotreg",
            "无障碍",
        ],
        reason: "the app's accessibility tree cannot be read (no accessibility bus, an app that does not join it, or one that does not answer)",
        hint: "asking the same app the same way gives the same silence",
        suggestion: "work from screenshots and coordinates; `deskpilot doctor` checks the bus (GTK apps need GTK_MODULES=gail:atk-bridge, Qt apps QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1)",
        retryable: false,
    },
    Rule {
        category: "browser-unavailable",
        patterns: &[
            "browser_unavailable",
            "devtools",
            "remote-debugging",
            "remote debugging",
            "cdp",
            "econnrefused 127.0.0.1:9222",
            "browser channel",
        ],
        reason: "no browser with a debugging channel is reachable",
        hint: "the browser is not running with remote debugging, or on another port",
        suggestion: "start the browser with --remote-debugging-port (or let deskpilot launch it) and try again",
        retryable: false,
    },
];

/// Words that mean a command creates or writes the path it names.
const CREATES: &[&str] = &[
    "touch",
    "mkdir",
    "cp",
    "mv",
    "ln",
    "tee",
    "install",
    "dd",
    "new-item",
    "ni",
    "md",
    "out-file",
    "set-content",
    "add-content",
    "copy-item",
    "move-item",
    "export-csv",
    "sc",
    "ac",
];

/// Whether `command` creates or writes something (redirection counts; reading commands do not).
fn creates(command: &str) -> bool {
    let lower = command.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')'))
        .filter(|w| !w.is_empty())
        .collect();
    if words.iter().any(|w| CREATES.contains(w)) {
        return true;
    }
    // `> file` / `>> file`, but not `2>&1` or `>&2`.
    let bytes = lower.as_bytes();
    bytes.iter().enumerate().any(|(i, b)| {
        *b == b'>' && bytes.get(i + 1) != Some(&b'&') && !(i > 0 && bytes[i - 1] == b'&')
    })
}

/// Paths an error message names: quoted ones, then `name: No such file…` prefixes.
fn named_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [
        ('\'', '\''),
        ('‘', '’'),
        ('"', '"'),
        ('“', '”'),
        ('`', '\''),
    ] {
        let mut rest = text;
        while let Some(a) = rest.find(open) {
            let after = &rest[a + open.len_utf8()..];
            let Some(b) = after.find(close) else { break };
            let candidate = &after[..b];
            if !candidate.is_empty() && candidate.len() < 4096 && !candidate.contains('\n') {
                out.push(candidate.to_string());
            }
            rest = &after[b + close.len_utf8()..];
        }
    }
    // bash: "bash: line 1: a/b/x.txt: No such file or directory"
    for line in text.lines() {
        let parts: Vec<&str> = line.split(": ").collect();
        if parts.len() >= 2 {
            let candidate = parts[parts.len() - 2].trim();
            if candidate.contains('/') || candidate.contains('\\') || candidate.contains('.') {
                out.push(candidate.to_string());
            }
        }
    }
    out
}

fn resolve(cwd: Option<&Path>, p: &str) -> PathBuf {
    let path = Path::new(p);
    match cwd {
        Some(c) if !path.is_absolute() => c.join(path),
        _ => path.to_path_buf(),
    }
}

/// Diagnoses a failure from its error text, the output around it, the command that ran, its
/// exit code, and the directory it ran in (for path checks).
pub fn diagnose(
    error: &str,
    output: &str,
    command: &str,
    exit_code: Option<i32>,
    cwd: Option<&Path>,
) -> Diagnosis {
    let text = format!("{error}\n{output}");
    let lower = text.to_lowercase();
    let found = RULES.iter().find_map(|r| {
        r.patterns
            .iter()
            .find(|p| lower.contains(&p.to_lowercase()))
            .map(|p| (r, *p))
    });
    let by_code = || -> Option<&'static Rule> {
        let category = match exit_code? {
            127 => "cmd-not-found",
            126 => "access-denied",
            124 => "timeout",
            _ => return None,
        };
        RULES.iter().find(|r| r.category == category)
    };
    let (rule, matched) = match found {
        Some((r, p)) => (r, Some(p.to_string())),
        None => match by_code() {
            Some(r) => (r, exit_code.map(|c| format!("exit code {c}"))),
            None => {
                return Diagnosis {
                    category: "unknown",
                    reason: "no rule recognises this failure".into(),
                    hint: "read the original error text below; it is kept unchanged".into(),
                    suggestion: if text.trim().is_empty() {
                        "the command failed without saying why: check its exit code and run it with more verbosity".into()
                    } else {
                        format!(
                            "read: {}",
                            text.trim().chars().take(300).collect::<String>()
                        )
                    },
                    retryable: true,
                    fix: None,
                    matched: None,
                };
            }
        },
    };
    let mut d = Diagnosis {
        category: rule.category,
        reason: rule.reason.to_string(),
        hint: rule.hint.to_string(),
        suggestion: rule.suggestion.to_string(),
        retryable: rule.retryable,
        fix: None,
        matched,
    };
    if rule.category == "path-not-found" && creates(command) {
        // Missing parent: the command creates something whose directory does not exist.
        let missing_parent = named_paths(&text).into_iter().find_map(|p| {
            let target = resolve(cwd, &p);
            let parent = target.parent()?.to_path_buf();
            (!parent.as_os_str().is_empty() && !parent.exists()).then_some(parent)
        });
        if let Some(parent) = missing_parent {
            let parent_text = parent.to_string_lossy().into_owned();
            d = Diagnosis {
                category: "missing-parent",
                reason: format!(
                    "the directory {parent_text} that should hold the new item does not exist"
                ),
                hint: "once the directory exists, the same command succeeds".into(),
                suggestion: format!(
                    "create it first: mkdir -p -- '{}' (bash) or New-Item -ItemType Directory -Force -Path '{}' (PowerShell)",
                    parent_text.replace('\'', "'\\''"),
                    parent_text.replace('\'', "''")
                ),
                retryable: true,
                fix: Some(Fix::CreateDirectory { path: parent_text }),
                matched: d.matched,
            };
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cat(error: &str) -> &'static str {
        diagnose(error, "", "", None, None).category
    }

    #[test]
    fn every_category_from_bash_powershell_and_chinese_text() {
        let table: &[(&str, &[&str])] = &[
            (
                "encoding",
                &[
                    "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xd6",
                    "grep: invalid multibyte sequence",
                    "鍙戠敓閿欒 锟斤拷",
                ],
            ),
            (
                "file-busy",
                &[
                    "cp: cannot create regular file 'a': Text file busy",
                    "The process cannot access the file 'C:\\a.log' because it is being used by another process.",
                    "文件正由另一进程使用，因此该进程无法访问此文件。",
                ],
            ),
            (
                "access-denied",
                &[
                    "bash: /etc/shadow: Permission denied",
                    "Access to the path 'C:\\Windows\\x' is denied.",
                    "mkdir: 无法创建目录 '/root/x': 权限不够",
                    "对路径“C:\\x”的访问被拒绝。",
                ],
            ),
            (
                "cmd-not-found",
                &[
                    "bash: foo: command not found",
                    "foo : The term 'foo' is not recognized as the name of a cmdlet, function, script file, or operable program.",
                    "bash: foo: 未找到命令",
                    "无法将“foo”项识别为 cmdlet、函数、脚本文件或可运行程序的名称。",
                ],
            ),
            (
                "bad-args",
                &[
                    "ls: invalid option -- 'z'",
                    "Get-ChildItem : A parameter cannot be found that matches parameter name 'Foo'.",
                    "ls: 无效的选项 -- z",
                    "找不到与参数名称“Foo”匹配的参数。",
                ],
            ),
            (
                "type-conversion",
                &[
                    "bash: [: abc: integer expression expected",
                    "Cannot convert value \"abc\" to type \"System.Int32\".",
                    "无法将值“abc”转换为类型“System.Int32”。",
                ],
            ),
            (
                "syntax",
                &[
                    "bash: syntax error near unexpected token `)'",
                    "The string is missing the terminator: \".",
                    "表达式或语句中包含意外的标记“)”。",
                ],
            ),
            (
                "timeout",
                &[
                    "curl: (28) Operation timed out after 5000 milliseconds",
                    "WAIT_TIMEOUT: gave up after 10000 ms",
                    "操作超时",
                ],
            ),
            (
                "already-exists",
                &[
                    "mkdir: cannot create directory 'a': File exists",
                    "New-Item : An item with the specified name C:\\a already exists.",
                    "mkdir: 无法创建目录 \"a\": 文件已存在",
                    "具有指定名称 C:\\a 的项已存在。",
                ],
            ),
            (
                "path-not-found",
                &[
                    "cat: nofile: No such file or directory",
                    "Get-Content : Cannot find path 'C:\\nofile' because it does not exist.",
                    "cat: nofile: 没有那个文件或目录",
                    "找不到路径“C:\\nofile”，因为该路径不存在。",
                ],
            ),
            (
                "element-not-found",
                &["ELEMENT_NOT_FOUND: no such element: 99", "找不到控件"],
            ),
            (
                "element-ambiguous",
                &["AMBIGUOUS_WINDOW: title_match \"a\" matches several windows"],
            ),
            (
                "window-minimized",
                &["WINDOW_MINIMIZED: window 0x1 \"x\" is minimized"],
            ),
            (
                "stale-handle",
                &[
                    "STALE_ELEMENT: s3:4 is from an older snapshot",
                    "TARGET_WINDOW_GONE: window 0x2",
                    "句柄无效",
                ],
            ),
            (
                "accessibility-unavailable",
                &[
                    "ACCESSIBILITY_UNAVAILABLE: no accessibility tree",
                    "REGDB_E_CLASSNOTREG from CUIAutomation",
                ],
            ),
            (
                "browser-unavailable",
                &[
                    "connect ECONNREFUSED 127.0.0.1:9222 (DevTools)",
                    "BROWSER_UNAVAILABLE",
                ],
            ),
        ];
        for (want, texts) in table {
            for t in *texts {
                assert_eq!(cat(t), *want, "{t}");
            }
        }
        let d = diagnose("strange things happened", "", "", Some(3), None);
        assert_eq!(d.category, "unknown");
        assert!(d.suggestion.contains("strange things happened"));
        assert_eq!(
            diagnose("", "", "frob", Some(127), None).category,
            "cmd-not-found"
        );
        assert_eq!(
            diagnose("", "", "./x", Some(126), None).category,
            "access-denied"
        );
    }

    #[test]
    fn retryable_only_where_retrying_can_help() {
        assert!(!diagnose("Permission denied", "", "", None, None).retryable);
        assert!(!diagnose("command not found", "", "", None, None).retryable);
        assert!(!diagnose("invalid option", "", "", None, None).retryable);
        assert!(diagnose("Text file busy", "", "", None, None).retryable);
        assert!(diagnose("timed out", "", "", None, None).retryable);
    }

    #[test]
    fn missing_parent_only_for_commands_that_create_and_parents_that_are_missing() {
        let dir = std::env::temp_dir().join(format!("dp-diag-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = "touch: cannot touch 'a/b/x.txt': No such file or directory";
        let d = diagnose(err, "", "touch a/b/x.txt", Some(1), Some(&dir));
        assert_eq!(d.category, "missing-parent");
        assert!(d.retryable);
        assert_eq!(
            d.fix,
            Some(Fix::CreateDirectory {
                path: dir.join("a/b").to_string_lossy().into()
            })
        );
        // Redirection creates too (bash names the path without quotes).
        let d = diagnose(
            "bash: line 1: out/中文/log.txt: No such file or directory",
            "",
            "echo hi > out/中文/log.txt",
            Some(1),
            Some(&dir),
        );
        assert_eq!(d.category, "missing-parent", "{d:?}");
        // A read is not a creation: no fix.
        let d = diagnose(
            "cat: a/b/x.txt: No such file or directory",
            "",
            "cat a/b/x.txt",
            Some(1),
            Some(&dir),
        );
        assert_eq!((d.category, d.fix.is_none()), ("path-not-found", true));
        // The parent exists: the target itself is what is missing.
        let d = diagnose(
            "mv: cannot stat 'nothere.txt': No such file or directory",
            "",
            "mv nothere.txt there.txt",
            Some(1),
            Some(&dir),
        );
        assert_eq!(d.category, "path-not-found", "{d:?}");
        assert!(!creates("ls -la 2>&1") && creates("echo x >> f") && creates("New-Item -Path x"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
