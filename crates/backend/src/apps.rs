//! Apps a person can start, as a backend finds them: on Linux the XDG desktop entries
//! (`applications/*.desktop` under `$XDG_DATA_HOME` and `$XDG_DATA_DIRS`), parsed here because
//! the format is plain text and the same everywhere it exists.
//!
//! Invariant: a parsed entry's `exec` is an argument vector with the field codes (`%f`, `%U`,
//! …) removed and the Desktop Entry quoting undone — it is run directly, never through a shell.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An app that can be launched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledApp {
    /// Stable id: the desktop file id (`org.xfce.mousepad.desktop`), a Start-menu shortcut's
    /// path, or an AUMID.
    pub id: String,
    /// The name shown to people (`Name=`).
    pub name: String,
    /// Localized names by locale (`Name[zh_CN]=` → `"zh_CN"`).
    pub localized: BTreeMap<String, String>,
    /// The command line, field codes removed.
    pub exec: Vec<String>,
    /// An icon name or path, when it has one.
    pub icon: Option<String>,
    /// Other names people use: `GenericName`, `Keywords`, the executable's file name.
    pub keywords: Vec<String>,
    /// Where it was found (a file path, `shell:AppsFolder`).
    pub source: String,
}

/// The directories XDG desktop entries are read from, most important first:
/// `$XDG_DATA_HOME` (else `~/.local/share`), then `$XDG_DATA_DIRS` (else `/usr/local/share`,
/// `/usr/share`), each with `applications` appended.
pub fn xdg_application_dirs(env: impl Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    match env("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(d) => dirs.push(PathBuf::from(d)),
        None => {
            if let Some(home) = env("HOME").filter(|v| !v.is_empty()) {
                dirs.push(Path::new(&home).join(".local/share"));
            }
        }
    }
    let data = env("XDG_DATA_DIRS")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "/usr/local/share:/usr/share".to_string());
    dirs.extend(data.split(':').filter(|d| !d.is_empty()).map(PathBuf::from));
    dirs.into_iter().map(|d| d.join("applications")).collect()
}

/// Every launchable desktop entry under `dirs` (see [`xdg_application_dirs`]): an id found in
/// an earlier directory hides the same id later (a user's override), hidden and `NoDisplay`
/// entries are left out, sorted by name.
pub fn xdg_apps(dirs: &[PathBuf]) -> Vec<InstalledApp> {
    let mut seen: BTreeMap<String, Option<InstalledApp>> = BTreeMap::new();
    for dir in dirs {
        let mut files = Vec::new();
        collect(dir, dir, &mut files);
        for (id, path) in files {
            if seen.contains_key(&id) {
                continue;
            }
            let entry = std::fs::read_to_string(&path)
                .ok()
                .and_then(|text| parse_desktop_entry(&text, &id, &path.display().to_string()));
            seen.insert(id, entry);
        }
    }
    let mut apps: Vec<InstalledApp> = seen.into_values().flatten().collect();
    apps.sort_by_key(|a| a.name.to_lowercase());
    apps
}

/// `*.desktop` files under `dir` with their desktop file ids (`kde/okular.desktop` →
/// `kde-okular.desktop`).
fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "desktop")
            && let Ok(rel) = path.strip_prefix(root)
        {
            let id = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("-");
            out.push((id, path));
        }
    }
}

/// The `[Desktop Entry]` group of a desktop file as an app, `None` when it is not a launchable
/// application (another type, `Hidden`, `NoDisplay`, no `Name` or no `Exec`).
pub fn parse_desktop_entry(text: &str, id: &str, source: &str) -> Option<InstalledApp> {
    let mut in_entry = false;
    let mut keys: BTreeMap<String, String> = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            in_entry = line == "[Desktop Entry]";
            continue;
        }
        if !in_entry {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            keys.entry(k.trim().to_string())
                .or_insert_with(|| unescape(v.trim()));
        }
    }
    let truthy = |k: &str| keys.get(k).is_some_and(|v| v == "true");
    if keys.get("Type").map(String::as_str) != Some("Application")
        || truthy("Hidden")
        || truthy("NoDisplay")
    {
        return None;
    }
    let name = keys.get("Name")?.clone();
    let exec = exec_argv(keys.get("Exec")?);
    if exec.is_empty() {
        return None;
    }
    let localized = keys
        .iter()
        .filter_map(|(k, v)| {
            let locale = k.strip_prefix("Name[")?.strip_suffix(']')?;
            Some((locale.to_string(), v.clone()))
        })
        .collect();
    let mut keywords: Vec<String> = Vec::new();
    if let Some(g) = keys.get("GenericName") {
        keywords.push(g.clone());
    }
    if let Some(k) = keys.get("Keywords") {
        keywords.extend(
            k.split(';')
                .map(str::trim)
                .filter(|w| !w.is_empty())
                .map(String::from),
        );
    }
    if let Some(program) = Path::new(&exec[0]).file_name() {
        keywords.push(program.to_string_lossy().into_owned());
    }
    Some(InstalledApp {
        id: id.to_string(),
        name,
        localized,
        exec,
        icon: keys.get("Icon").cloned().filter(|i| !i.is_empty()),
        keywords,
        source: source.to_string(),
    })
}

/// A value's escapes (`\s`, `\n`, `\t`, `\r`, `\\`) undone.
fn unescape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('s') => out.push(' '),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// An `Exec` value as an argument vector: quoted arguments unquoted (`"a b"`, `\"`, `\\`,
/// `` \` ``, `\$`), field codes dropped (`%f %F %u %U %i %c %k`, and the deprecated ones),
/// `%%` a literal `%`.
pub fn exec_argv(exec: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut has = false;
    let mut quoted = false;
    let mut chars = exec.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                has = true;
            }
            '\\' if quoted => {
                if let Some(n) = chars.next() {
                    current.push(n);
                }
            }
            ' ' | '\t' if !quoted => {
                if has {
                    args.push(std::mem::take(&mut current));
                    has = false;
                }
            }
            '%' => match chars.next() {
                Some('%') => {
                    current.push('%');
                    has = true;
                }
                // A field code alone as an argument disappears with it.
                Some(_) => {}
                None => {
                    current.push('%');
                    has = true;
                }
            },
            other => {
                current.push(other);
                has = true;
            }
        }
    }
    if has {
        args.push(current);
    }
    args.retain(|a| !a.is_empty());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_loses_field_codes_and_keeps_quoted_arguments() {
        assert_eq!(exec_argv("mousepad %U"), ["mousepad"]);
        assert_eq!(
            exec_argv(r#"sh -c "echo \"hi there\" 100%%" %f"#),
            ["sh", "-c", "echo \"hi there\" 100%"]
        );
        assert_eq!(
            exec_argv("/opt/My\\sApp/run --flag=%i"),
            ["/opt/My\\sApp/run", "--flag="]
        );
        assert!(exec_argv("%F").is_empty());
    }

    #[test]
    fn a_desktop_entry_gives_names_in_every_language_and_its_command() {
        let text = "# comment\n[Desktop Entry]\nType=Application\nName=Mousepad\nName[zh_CN]=Mousepad 文本编辑器\n\
            GenericName=Text Editor\nKeywords=text;editor;notepad;\nExec=mousepad %U\nIcon=org.xfce.mousepad\n\
            [Desktop Action window]\nName=New Window\nExec=mousepad --new-window\n";
        let app = parse_desktop_entry(
            text,
            "org.xfce.mousepad.desktop",
            "/usr/share/applications/x",
        )
        .unwrap();
        assert_eq!(app.name, "Mousepad");
        assert_eq!(app.localized["zh_CN"], "Mousepad 文本编辑器");
        assert_eq!(app.exec, ["mousepad"]);
        assert_eq!(app.icon.as_deref(), Some("org.xfce.mousepad"));
        assert_eq!(
            app.keywords,
            ["Text Editor", "text", "editor", "notepad", "mousepad"]
        );
        for hidden in [
            "[Desktop Entry]\nType=Application\nName=X\nExec=x\nNoDisplay=true\n",
            "[Desktop Entry]\nType=Link\nName=X\nURL=http://x\n",
            "[Desktop Entry]\nType=Application\nName=X\n",
            "[Other]\nType=Application\nName=X\nExec=x\n",
        ] {
            assert_eq!(
                parse_desktop_entry(hidden, "x.desktop", "x"),
                None,
                "{hidden}"
            );
        }
    }

    #[test]
    fn the_first_directory_wins_and_subdirectories_join_the_id() {
        let root = std::env::temp_dir().join(format!("deskpilot-xdg-{}", std::process::id()));
        let (user, system) = (root.join("user"), root.join("system"));
        std::fs::create_dir_all(user.join("kde")).unwrap();
        std::fs::create_dir_all(&system).unwrap();
        let entry =
            |name: &str| format!("[Desktop Entry]\nType=Application\nName={name}\nExec={name}\n");
        std::fs::write(system.join("xterm.desktop"), entry("XTerm")).unwrap();
        std::fs::write(user.join("xterm.desktop"), entry("My XTerm")).unwrap();
        std::fs::write(user.join("kde").join("okular.desktop"), entry("Okular")).unwrap();
        let apps = xdg_apps(&[user, system]);
        let ids: Vec<(&str, &str)> = apps
            .iter()
            .map(|a| (a.id.as_str(), a.name.as_str()))
            .collect();
        assert_eq!(
            ids,
            [
                ("xterm.desktop", "My XTerm"),
                ("kde-okular.desktop", "Okular")
            ]
        );
        let _ = std::fs::remove_dir_all(&root);
        let dirs = xdg_application_dirs(|k| match k {
            "HOME" => Some("/home/u".into()),
            "XDG_DATA_DIRS" => Some("/a:/b".into()),
            _ => None,
        });
        assert_eq!(
            dirs,
            [
                PathBuf::from("/home/u/.local/share/applications"),
                PathBuf::from("/a/applications"),
                PathBuf::from("/b/applications")
            ]
        );
    }
}
