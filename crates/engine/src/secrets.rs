//! Named secrets: where their values come from (a dotenv file, `DESKPILOT_SECRET_<NAME>`, the
//! desktop keyring, the person), where each may go (its scope), and the one way out of the
//! store — into a target, by name, never back to the caller.
//!
//! Every value is registered with [`deskpilot_types::redact`] as soon as it is known, so every
//! text deskpilot returns, logs or writes reads `<secret NAME>` in its place. Nothing here
//! returns a value or its length to a surface: [`SecretStore::value`] is crate-private and
//! its only callers type the value into a target.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use deskpilot_types::{ErrorCode, WindowInfo, redact};

use crate::error::Error;

/// Where each secret may be typed, from the configuration's `[secrets.NAME]` tables. A key
/// left out does not restrict.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretScope {
    /// Title or app patterns (`windows = ["Sign in", "firefox"]`): case-insensitive; `*`
    /// matches any run of characters, otherwise a pattern matches anywhere in the title,
    /// the process name or the window class.
    pub windows: Option<Vec<String>>,
    /// Browser origins (`origins = ["https://example.com", "http://127.0.0.1:*"]`).
    pub origins: Option<Vec<String>>,
    /// `anyField = true`: the secret may go into a field that is not a password field (a
    /// terminal's `read -s` prompt). Default false.
    pub any_field: bool,
    /// `approval = true`: the person approves every use (as `requireApproval` does).
    pub approval: bool,
}

impl SecretScope {
    /// Whether `window` lies inside the scope.
    pub fn allows_window(&self, window: &WindowInfo) -> bool {
        let Some(patterns) = &self.windows else {
            return true;
        };
        let fields = [
            window.title.as_str(),
            window.process.as_deref().unwrap_or_default(),
            window.class.as_str(),
        ];
        patterns.iter().any(|p| {
            fields
                .iter()
                .any(|f| !f.is_empty() && pattern_matches(p, f))
        })
    }

    /// Whether a page of `origin` (`scheme://host[:port]`) lies inside the scope.
    pub fn allows_origin(&self, origin: &str) -> bool {
        let Some(patterns) = &self.origins else {
            return true;
        };
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        patterns.iter().any(|p| {
            let p = p.trim_end_matches('/').to_ascii_lowercase();
            if p.contains('*') {
                glob(&p, &origin)
            } else {
                p == origin
            }
        })
    }

    /// The scope in words, for errors.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(w) = &self.windows {
            parts.push(format!("windows {w:?}"));
        }
        if let Some(o) = &self.origins {
            parts.push(format!("origins {o:?}"));
        }
        if parts.is_empty() {
            "anywhere".to_string()
        } else {
            parts.join(", ")
        }
    }
}

/// A window pattern against one field: a glob when it holds `*`, else a substring.
fn pattern_matches(pattern: &str, field: &str) -> bool {
    let (p, f) = (pattern.to_lowercase(), field.to_lowercase());
    if p.contains('*') {
        glob(&p, &f)
    } else {
        f.contains(&p)
    }
}

/// `*` matches any run of characters; everything else matches itself; the whole text.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

/// The deployment's secret settings, read from the configuration and the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretsSettings {
    /// `--secrets FILE` / `secretsFile`: a dotenv file only its owner can read.
    pub file: Option<PathBuf>,
    /// `[secrets.NAME]` scopes.
    pub scopes: BTreeMap<String, SecretScope>,
    /// `secretsKeyring` (default true): a name found nowhere else is looked up in the desktop
    /// keyring (the Secret Service on Linux, Credential Manager on Windows).
    pub keyring: bool,
}

impl Default for SecretsSettings {
    fn default() -> Self {
        SecretsSettings {
            file: None,
            scopes: BTreeMap::new(),
            keyring: true,
        }
    }
}

/// Where a value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretSource {
    File,
    Environment,
    Keyring,
    /// Typed by the person on deskpilot's own page (URL-mode elicitation).
    Person,
}

impl SecretSource {
    pub fn as_str(self) -> &'static str {
        match self {
            SecretSource::File => "secrets file",
            SecretSource::Environment => "environment",
            SecretSource::Keyring => "keyring",
            SecretSource::Person => "given by the person",
        }
    }
}

/// The value of one secret. Not `Debug`, not `Display`, not `Clone` outside this module.
struct Entry {
    value: String,
    source: SecretSource,
}

impl Drop for Entry {
    fn drop(&mut self) {
        // Best effort: overwrite the bytes before the allocation is freed.
        // SAFETY: zero bytes are valid UTF-8.
        unsafe { self.value.as_bytes_mut() }.fill(0);
    }
}

/// Every secret the process knows, with its scope.
pub struct SecretStore {
    settings: SecretsSettings,
    entries: Mutex<BTreeMap<String, Entry>>,
}

impl std::fmt::Debug for SecretStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretStore")
            .field("names", &self.names())
            .finish_non_exhaustive()
    }
}

/// A secret's name: a letter or `_`, then letters, digits and `_` (at most 64).
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 64
}

/// The prefix of environment variables that hold secrets.
pub const ENV_PREFIX: &str = "DESKPILOT_SECRET_";

impl SecretStore {
    /// An empty store with `settings`' scopes; [`SecretStore::load`] fills it.
    pub fn new(settings: SecretsSettings) -> SecretStore {
        SecretStore {
            settings,
            entries: Mutex::new(BTreeMap::new()),
        }
    }

    /// Reads the secrets file (refused when others can read it) and the `DESKPILOT_SECRET_*`
    /// variables among `env`. A value too short to scrub safely, or a malformed line, fails
    /// the whole load: a deployment must not start believing a secret is protected.
    pub fn load(&self, env: impl IntoIterator<Item = (String, String)>) -> Result<usize, Error> {
        let mut loaded = 0;
        if let Some(path) = self.settings.file.clone() {
            let text = read_private(&path)?;
            for (line_no, parsed) in parse_dotenv(&text) {
                let (name, value) = parsed.map_err(|why| Error::InvalidArgument {
                    message: format!("secrets file {}, line {line_no}: {why}", path.display()),
                })?;
                self.insert(&name, value, SecretSource::File)?;
                loaded += 1;
            }
        }
        for (key, value) in env {
            let Some(name) = key.strip_prefix(ENV_PREFIX) else {
                continue;
            };
            if !valid_name(name) {
                return Err(Error::InvalidArgument {
                    message: format!(
                        "{key}: a secret's name is letters, digits and _ (starting with a letter)"
                    ),
                });
            }
            self.insert(name, value, SecretSource::Environment)?;
            loaded += 1;
        }
        Ok(loaded)
    }

    /// Adds (or replaces) a secret; its value is scrubbed from everything from now on.
    pub fn insert(&self, name: &str, value: String, source: SecretSource) -> Result<(), Error> {
        redact::register(name, &value).map_err(|e| Error::InvalidArgument {
            message: e.to_string(),
        })?;
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_string(), Entry { value, source });
        Ok(())
    }

    /// The names known now, with where each came from (never a value).
    pub fn names(&self) -> Vec<(String, SecretSource)> {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(n, e)| (n.clone(), e.source))
            .collect()
    }

    /// Names with a scope in the configuration, known or not yet.
    pub fn configured_names(&self) -> Vec<String> {
        self.settings.scopes.keys().cloned().collect()
    }

    /// The scope of `name` (unrestricted when the configuration gives none).
    pub fn scope(&self, name: &str) -> SecretScope {
        self.settings.scopes.get(name).cloned().unwrap_or_default()
    }

    /// Whether `name` has a value now, looking in the keyring when it is not loaded yet.
    pub fn resolve(&self, name: &str) -> Result<SecretSource, Error> {
        if !valid_name(name) {
            return Err(Error::InvalidArgument {
                message: format!(
                    "\"{name}\" is no secret name: letters, digits and _, starting with a letter"
                ),
            });
        }
        if let Some(e) = self
            .entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
        {
            return Ok(e.source);
        }
        if self.settings.keyring
            && let Some(value) = keyring_lookup(name).unwrap_or_else(|e| {
                tracing::warn!(secret = name, "keyring lookup failed: {e}");
                None
            })
        {
            self.insert(name, value, SecretSource::Keyring)?;
            return Ok(SecretSource::Keyring);
        }
        Err(self.unknown(name))
    }

    /// The refusal for a name found nowhere.
    pub fn unknown(&self, name: &str) -> Error {
        let known = self.names();
        Error::Coded {
            code: ErrorCode::SecretUnknown,
            message: format!(
                "no secret named {name}: not in the secrets file, not {ENV_PREFIX}{name}{}, and \
                 the person was not asked. Known: {}. Hint: ask the operator to add it \
                 (deskpilot serve --secrets FILE, the environment or the keyring).",
                if self.settings.keyring {
                    ", not in the keyring (service deskpilot, name NAME)"
                } else {
                    ""
                },
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
        }
    }

    /// Runs `f` with the value of `name`; the value never leaves `f`'s borrow.
    pub(crate) fn with_value<T>(
        &self,
        name: &str,
        f: impl FnOnce(&str) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.resolve(name)?;
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let entry = entries.get(name).ok_or_else(|| self.unknown(name))?;
        f(&entry.value)
    }

    /// `with_value` for a caller outside the engine that types the value itself (the
    /// browser channel). The closure must not return, log or store the value.
    pub fn use_value<T>(
        &self,
        name: &str,
        f: impl FnOnce(&str) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.with_value(name, f)
    }
}

/// The keyring's value of `name`, if it holds one (blocks up to the keyring's deadline).
fn keyring_lookup(name: &str) -> Result<Option<String>, crate::keyring::KeyringError> {
    crate::keyring::lookup(name)
}

/// The file's text, refused when it is not a plain file only its owner can read.
fn read_private(path: &Path) -> Result<String, Error> {
    let refuse = |why: String| Error::Coded {
        code: ErrorCode::SecretsFilePermissions,
        message: format!(
            "secrets file {}: {why}. Hint: chmod 600 {} (and keep it owned by the user who \
             runs deskpilot).",
            path.display(),
            path.display()
        ),
    };
    let meta = std::fs::metadata(path).map_err(|e| Error::InvalidArgument {
        message: format!("secrets file {}: {e}", path.display()),
    })?;
    if !meta.is_file() {
        return Err(refuse("not a plain file".into()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(refuse(format!(
                "other users can read or write it (mode {mode:03o})"
            )));
        }
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            return Err(refuse(format!(
                "owned by uid {}, not by this user (uid {me})",
                meta.uid()
            )));
        }
    }
    std::fs::read_to_string(path).map_err(|e| Error::InvalidArgument {
        message: format!("secrets file {}: {e}", path.display()),
    })
}

/// One line of a dotenv file: a name and its value, or why the line is not one.
type DotenvLine = Result<(String, String), String>;

/// `NAME=value` lines: `#` comments, blank lines, an optional `export `, values bare (trimmed,
/// ` #` starts a comment), in single quotes (literal) or in double quotes (`\n`, `\"`, `\\`).
/// Each entry with its line number; a bad line is an error naming why (never the value).
fn parse_dotenv(text: &str) -> Vec<(usize, DotenvLine)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
        let Some((name, value)) = line.split_once('=') else {
            out.push((i + 1, Err("expected NAME=value".to_string())));
            continue;
        };
        let name = name.trim();
        if !valid_name(name) {
            out.push((
                i + 1,
                Err(format!(
                    "\"{name}\" is no secret name (letters, digits and _, starting with a letter)"
                )),
            ));
            continue;
        }
        let value = value.trim();
        let parsed = if let Some(rest) = value.strip_prefix('\'') {
            rest.strip_suffix('\'')
                .map(str::to_string)
                .ok_or_else(|| "a single quote is not closed".to_string())
        } else if let Some(rest) = value.strip_prefix('"') {
            unquote(rest)
        } else {
            Ok(match value.find(" #") {
                Some(at) => value[..at].trim_end().to_string(),
                None => value.to_string(),
            })
        };
        out.push((i + 1, parsed.map(|v| (name.to_string(), v))));
    }
    out
}

/// The rest of a double-quoted value (after the opening quote), its escapes resolved.
fn unquote(rest: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let tail: String = chars.collect();
                let tail = tail.trim();
                return if tail.is_empty() || tail.starts_with('#') {
                    Ok(out)
                } else {
                    Err("text after the closing quote".to_string())
                };
            }
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(c @ ('"' | '\\' | '$')) => out.push(c),
                Some(c) => {
                    out.push('\\');
                    out.push(c);
                }
                None => return Err("a double quote is not closed".to_string()),
            },
            c => out.push(c),
        }
    }
    Err("a double quote is not closed".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(title: &str, process: &str, class: &str) -> WindowInfo {
        WindowInfo {
            id: deskpilot_types::WindowId(1),
            title: title.into(),
            class: class.into(),
            pid: Some(1),
            process: Some(process.into()),
            frame: deskpilot_types::Rect::new(0, 0, 10, 10),
            client: deskpilot_types::Rect::new(0, 0, 10, 10),
            state: deskpilot_types::WindowState {
                minimized: false,
                maximized: false,
                active: true,
                visible: true,
            },
            z: 0,
            monitor: None,
        }
    }

    #[test]
    fn dotenv_lines_parse_with_quotes_comments_and_export() {
        let text = "# comment\n\nA_ONE=plain-value # note\nexport B='lit #\\n'\nC=\"q \\\"x\\\" \\n\"\nbad line\n9X=1\nD=\"open\n";
        let got = parse_dotenv(text);
        assert_eq!(got[0], (3, Ok(("A_ONE".into(), "plain-value".into()))));
        assert_eq!(got[1], (4, Ok(("B".into(), "lit #\\n".into()))));
        assert_eq!(got[2], (5, Ok(("C".into(), "q \"x\" \n".into()))));
        assert!(got[3].1.as_ref().unwrap_err().contains("NAME=value"));
        assert!(got[4].1.as_ref().unwrap_err().contains("no secret name"));
        assert!(got[5].1.as_ref().unwrap_err().contains("not closed"));
    }

    #[test]
    fn scopes_match_titles_apps_and_origins() {
        let scope = SecretScope {
            windows: Some(vec!["sign in".into(), "zen*ty".into()]),
            origins: Some(vec![
                "https://example.com".into(),
                "http://127.0.0.1:*".into(),
            ]),
            ..Default::default()
        };
        assert!(scope.allows_window(&window("Please Sign In", "x", "y")));
        assert!(scope.allows_window(&window("Password", "zenity", "Zenity")));
        assert!(!scope.allows_window(&window("Terminal", "xterm", "XTerm")));
        assert!(scope.allows_origin("https://example.com/"));
        assert!(scope.allows_origin("http://127.0.0.1:8123"));
        assert!(!scope.allows_origin("https://example.com.evil.net"));
        assert!(!scope.allows_origin("http://localhost:8123"));
        let open = SecretScope::default();
        assert!(open.allows_window(&window("anything", "a", "b")) && open.allows_origin("x"));
        assert_eq!(open.describe(), "anywhere");
    }

    #[test]
    #[cfg(unix)]
    fn a_readable_file_is_refused_and_a_private_one_loads() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("dp-secrets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("secrets.env");
        std::fs::write(&path, "MAIL_PASS=correct-horse-42\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let store = SecretStore::new(SecretsSettings {
            file: Some(path.clone()),
            keyring: false,
            ..Default::default()
        });
        let err = store.load(Vec::new()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::SecretsFilePermissions);
        assert!(err.to_string().contains("chmod 600"), "{err}");
        assert!(!err.to_string().contains("correct-horse"), "{err}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let env = vec![
            (
                "DESKPILOT_SECRET_API_TOKEN".to_string(),
                "tok-0123456789".to_string(),
            ),
            ("HOME".to_string(), "/root".to_string()),
        ];
        assert_eq!(store.load(env).unwrap(), 2);
        assert_eq!(store.resolve("MAIL_PASS").unwrap(), SecretSource::File);
        assert_eq!(
            store.resolve("API_TOKEN").unwrap(),
            SecretSource::Environment
        );
        let err = store.resolve("NOPE").unwrap_err();
        assert_eq!(err.code(), ErrorCode::SecretUnknown);
        assert!(err.to_string().contains("API_TOKEN, MAIL_PASS"), "{err}");
        assert_eq!(
            redact::scrub("pw correct-horse-42 tok-0123456789"),
            "pw <secret MAIL_PASS> <secret API_TOKEN>"
        );
        let typed = store.with_value("MAIL_PASS", |v| Ok(v.len())).unwrap();
        assert_eq!(typed, "correct-horse-42".len());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_short_value_fails_the_load() {
        let store = SecretStore::new(SecretsSettings {
            keyring: false,
            ..Default::default()
        });
        let err = store
            .load(vec![("DESKPILOT_SECRET_PIN".into(), "1234".into())])
            .unwrap_err();
        assert!(err.to_string().contains("shorter than 6"), "{err}");
        assert!(store.resolve("PIN").is_err());
    }
}
