//! How a command travels to a shell and how its end is recognised.
//!
//! Every command is sent as one ASCII line: the command itself encoded and decoded inside the
//! shell, so no console code page or quoting rule ever touches its bytes — base64 for
//! PowerShell and `sh`; for bash, `\xHH` escapes decoded by the `printf` builtin, which restores
//! the same bytes without the ~2 ms fork and exec of `base64 -d` per command (measured: a
//! persistent session answering slower than a fresh `bash -c` would defeat its purpose). After it
//! runs, the shell prints an end marker on stdout — `\x1eDP-END <nonce> <exit code>\x1e<cwd>
//! \x1eDP-CWD <nonce>\x1e` — and `\x1eDP-END <nonce>\x1e` on stderr, with no newline before
//! them, so output without a trailing newline stays exactly as it was. The nonce is random per
//! command: output cannot fake an end. Stdin is `/dev/null` (`$null` on PowerShell), so a
//! command that reads input gets end-of-file instead of hanging.

use base64::Engine as _;

/// The record separator that brackets every marker.
pub(crate) const RS: u8 = 0x1e;

/// Which shell language a session speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// bash.
    Bash,
    /// A POSIX `sh`, the fallback when there is no bash.
    Posix,
    /// PowerShell 7 (`pwsh`) or Windows PowerShell 5.1.
    PowerShell,
}

impl Dialect {
    /// What the shell is called in messages.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Bash => "bash",
            Dialect::Posix => "POSIX sh",
            Dialect::PowerShell => "PowerShell",
        }
    }

    /// Lines sent once when the shell starts, before any command.
    pub(crate) fn bootstrap(self) -> String {
        match self {
            Dialect::Bash | Dialect::Posix => concat!(
                "unset HISTFILE PROMPT_COMMAND 2>/dev/null; PS1=''; PS2=''\n",
                "__dp_end() { printf '\\036DP-END %s %d\\036%s\\036DP-CWD %s\\036' \"$1\" \"$2\" \"$PWD\" \"$1\"; ",
                "printf '\\036DP-END %s\\036' \"$1\" >&2; }\n",
            )
            .to_string(),
            // Pure ASCII (Windows PowerShell reads scripts in the ANSI code page). Output is
            // UTF-8 whatever the console's code page; errors go to stderr as text.
            Dialect::PowerShell => concat!(
                "$ErrorActionPreference = 'Continue'; $ProgressPreference = 'SilentlyContinue'\r\n",
                "[Console]::OutputEncoding = [System.Text.UTF8Encoding]::new($false)\r\n",
                "$OutputEncoding = [System.Text.UTF8Encoding]::new($false)\r\n",
                "function global:__dp_end($n, $rc) { ",
                "[Console]::Out.Write([char]30 + 'DP-END ' + $n + ' ' + $rc + [char]30 + (Get-Location).ProviderPath + [char]30 + 'DP-CWD ' + $n + [char]30); ",
                "[Console]::Out.Flush(); ",
                "[Console]::Error.Write([char]30 + 'DP-END ' + $n + [char]30); [Console]::Error.Flush() }\r\n",
            )
            .to_string(),
        }
    }

    /// The line that runs `command` and then prints the end markers for `nonce`.
    pub(crate) fn command_line(self, command: &str, nonce: &str) -> String {
        let b64 = base64::engine::general_purpose::STANDARD.encode(command.as_bytes());
        match self {
            // `printf -v` is a builtin: the bytes come back without a fork.
            Dialect::Bash => {
                let mut hex = String::with_capacity(command.len() * 4);
                for b in command.bytes() {
                    hex.push_str(&format!("\\x{b:02x}"));
                }
                format!(
                    "printf -v __dp_c '%b' '{hex}' && eval \"$__dp_c\" </dev/null; __dp_end '{nonce}' $?\n"
                )
            }
            // Decoded by coreutils' base64, run at top level (so `cd`, variables and
            // `source venv/bin/activate` stay, and `return` cannot skip the marker).
            Dialect::Posix => format!(
                "__dp_c=$(printf %s '{b64}' | base64 -d) && eval \"$__dp_c\" </dev/null; __dp_end '{nonce}' $?\n"
            ),
            // Dot-sourced at top level so variables and the location stay; terminating errors
            // are caught so the marker always comes; error records go to stderr.
            Dialect::PowerShell => format!(
                concat!(
                    "$__dp_rc = 0; try {{ $global:LASTEXITCODE = 0; ",
                    "$__dp_c = [System.Text.Encoding]::UTF8.GetString([System.Convert]::FromBase64String('{b64}')); ",
                    "$null | . ([ScriptBlock]::Create($__dp_c)) 2>&1 | ForEach-Object {{ ",
                    "if ($_ -is [System.Management.Automation.ErrorRecord]) {{ $__dp_rc = 1; [Console]::Error.WriteLine(($_ | Out-String).TrimEnd()) }} ",
                    "else {{ [Console]::Out.Write(($_ | Out-String)) }} }}; ",
                    "if ($LASTEXITCODE) {{ $__dp_rc = $LASTEXITCODE }} }} ",
                    "catch {{ $__dp_rc = 1; [Console]::Error.WriteLine(($_ | Out-String).TrimEnd()) }}; ",
                    "__dp_end '{nonce}' $__dp_rc\r\n"
                ),
                b64 = b64,
                nonce = nonce
            ),
        }
    }

    /// A command that changes directory to `path`.
    pub(crate) fn cd(self, path: &str) -> String {
        match self {
            Dialect::Bash | Dialect::Posix => format!("cd -- {}", posix_quote(path)),
            Dialect::PowerShell => format!("Set-Location -LiteralPath {}", ps_quote(path)),
        }
    }

    /// A command that sets (and exports) an environment variable.
    pub(crate) fn set_env(self, name: &str, value: &str) -> String {
        match self {
            Dialect::Bash | Dialect::Posix => format!("export {name}={}", posix_quote(value)),
            Dialect::PowerShell => format!("$env:{name} = {}", ps_quote(value)),
        }
    }

    /// A command that prints `1<value>` when the variable is set and `0` when it is not.
    pub(crate) fn get_env(self, name: &str) -> String {
        match self {
            Dialect::Bash | Dialect::Posix => format!(
                "if [ -n \"${{{name}+x}}\" ]; then printf '1%s' \"${name}\"; else printf 0; fi"
            ),
            Dialect::PowerShell => format!(
                "if (Test-Path -LiteralPath 'Env:{name}') {{ [Console]::Out.Write('1' + $env:{name}) }} else {{ [Console]::Out.Write('0') }}"
            ),
        }
    }
}

/// `'…'` with every `'` written as `'\''`.
pub(crate) fn posix_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `'…'` with every `'` doubled (PowerShell's verbatim string).
pub(crate) fn ps_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Whether `name` is a portable environment variable name.
pub fn valid_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// The stdout end marker's fixed beginning for `nonce`.
pub(crate) fn out_marker(nonce: &str) -> Vec<u8> {
    let mut m = vec![RS];
    m.extend_from_slice(format!("DP-END {nonce} ").as_bytes());
    m
}

/// The stdout marker's closing part for `nonce`.
pub(crate) fn cwd_marker(nonce: &str) -> Vec<u8> {
    let mut m = vec![RS];
    m.extend_from_slice(format!("DP-CWD {nonce}").as_bytes());
    m.push(RS);
    m
}

/// The stderr end marker for `nonce`.
pub(crate) fn err_marker(nonce: &str) -> Vec<u8> {
    let mut m = vec![RS];
    m.extend_from_slice(format!("DP-END {nonce}").as_bytes());
    m.push(RS);
    m
}

/// Where `needle` starts in `hay`.
pub(crate) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Parses a complete stdout marker found at the start of `tail`: exit code and cwd.
pub(crate) fn parse_end(tail: &[u8], nonce: &str) -> Option<(i32, String)> {
    let head = out_marker(nonce);
    let rest = tail.strip_prefix(head.as_slice())?;
    let rs = rest.iter().position(|b| *b == RS)?;
    let code: i32 = std::str::from_utf8(&rest[..rs]).ok()?.trim().parse().ok()?;
    let after = &rest[rs + 1..];
    let end = find(after, &cwd_marker(nonce))?;
    Some((code, String::from_utf8_lossy(&after[..end]).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_lines_are_ascii_escapes_of_every_byte() {
        let line = Dialect::Bash.command_line("echo '中'", "n0");
        assert!(line.is_ascii());
        assert!(line.starts_with(
            "printf -v __dp_c '%b' '\\x65\\x63\\x68\\x6f\\x20\\x27\\xe4\\xb8\\xad\\x27' && eval"
        ));
        assert!(line.ends_with("</dev/null; __dp_end 'n0' $?\n"));
    }

    #[test]
    fn posix_lines_are_ascii_and_carry_the_command_in_base64() {
        let line = Dialect::Posix.command_line("cd '中文 dir' && echo \"$HOME\"", "n1");
        assert!(line.is_ascii());
        assert!(line.ends_with("__dp_end 'n1' $?\n"));
        let b64 = line.split('\'').nth(1).unwrap();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        assert_eq!(
            String::from_utf8(decoded).unwrap(),
            "cd '中文 dir' && echo \"$HOME\""
        );
        assert!(line.contains("</dev/null"), "stdin is end-of-file");
    }

    #[test]
    fn powershell_framing_is_ascii_utf8_and_survives_terminating_errors() {
        // PowerShell cannot run on this machine: the framing text is what is checked.
        let boot = Dialect::PowerShell.bootstrap();
        assert!(boot.is_ascii(), "Windows PowerShell reads scripts as ANSI");
        assert!(boot.contains("OutputEncoding = [System.Text.UTF8Encoding]::new($false)"));
        let line = Dialect::PowerShell.command_line("Write-Output '你好'; throw 'x'", "n2");
        assert!(line.is_ascii());
        assert!(line.contains("FromBase64String("));
        assert!(line.contains("try {") && line.contains("catch {"));
        assert!(line.contains("$null | . ([ScriptBlock]::Create($__dp_c))"));
        assert!(line.trim_end().ends_with("__dp_end 'n2' $__dp_rc"));
        assert_eq!(
            Dialect::PowerShell.cd("C:\\it's"),
            "Set-Location -LiteralPath 'C:\\it''s'"
        );
        assert_eq!(
            Dialect::PowerShell.set_env("A_1", "x'y"),
            "$env:A_1 = 'x''y'"
        );
    }

    #[test]
    fn markers_parse_and_quotes_hold() {
        let mut tail = out_marker("abc");
        tail.extend_from_slice(b"3");
        tail.push(RS);
        tail.extend_from_slice("/tmp/中文".as_bytes());
        tail.extend_from_slice(&cwd_marker("abc"));
        assert_eq!(parse_end(&tail, "abc"), Some((3, "/tmp/中文".to_string())));
        assert_eq!(parse_end(&tail, "abd"), None);
        assert_eq!(posix_quote("it's"), "'it'\\''s'");
        assert!(valid_env_name("_A1") && !valid_env_name("1A") && !valid_env_name("A-B"));
    }
}
