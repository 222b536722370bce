//! Apps a person can start, as a backend finds them: on Linux the XDG desktop entries
//! (`applications/*.desktop` under `$XDG_DATA_HOME` and `$XDG_DATA_DIRS`); on Windows the
//! Start-menu shortcuts (`*.lnk` under the user's and the common `Programs` folders, read with
//! [`crate::lnk`]) joined by the shell's Applications folder (`shell:AppsFolder`, whose items
//! the Windows backend enumerates through COM and hands to [`with_apps_folder`]). The files
//! are parsed here, on every platform, because their formats are the same everywhere they
//! exist, so the rules are unit-tested on any host.
//!
//! Invariant: an entry's `exec` is an argument vector run directly, never through a shell:
//! desktop entries with the field codes (`%f`, `%U`, …) removed and the Desktop Entry quoting
//! undone; shortcuts with their arguments split by `CommandLineToArgvW` rules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::lnk::{ShellLink, expand_env, split_command_line};

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

/// How deep [`start_menu_apps`] descends below a `Programs` folder (a guard against junction
/// loops; the Start menu nests one or two levels).
const MAX_START_MENU_DEPTH: usize = 8;

/// A `.lnk` larger than this is not a shortcut anyone made (they are a few kilobytes).
const MAX_LINK_SIZE: u64 = 1 << 20;

/// Every Start-menu shortcut under `dirs` (each a `Programs` folder: the user's, then the
/// common one) that starts a program, sorted by name.
///
/// An entry's id is the shortcut's path below its `Programs` folder with `\` separators
/// (`Accessories\Notepad.lnk`); an id found in an earlier folder hides the same id later,
/// compared without case as Windows does (so pass the user's folder first: their copy is the
/// one they changed, as with XDG's `$XDG_DATA_HOME`). The name is the file's stem, `exec` the
/// target and its split arguments (`mmc.exe` first for a `.msc` console), the keywords the
/// target's file name (`notepad.exe`) and the shortcut's description.
///
/// Shortcuts whose target is not a program (`.exe`, `.com`, `.bat`, `.cmd`, `.msc`) are left
/// out: links to folders, documents, help files and web pages are not apps, and offering them
/// would make names like "Readme" or "Website" ambiguous. So are links the reader cannot
/// resolve (an item id list only, an MSI-advertised shortcut); on Windows such an app still
/// appears through the Applications folder ([`with_apps_folder`]), which the shell resolves.
/// Environment variables in the target (`%windir%`) are expanded from this process's
/// environment; the arguments are passed as stored.
pub fn start_menu_apps(dirs: &[PathBuf]) -> Vec<InstalledApp> {
    start_menu_apps_with(dirs, |name| std::env::var(name).ok())
}

fn start_menu_apps_with(
    dirs: &[PathBuf],
    env: impl Fn(&str) -> Option<String>,
) -> Vec<InstalledApp> {
    let mut seen: BTreeMap<String, Option<InstalledApp>> = BTreeMap::new();
    for dir in dirs {
        let mut links = Vec::new();
        collect_links(dir, &mut Vec::new(), &mut links);
        for (id, path) in links {
            let key = id.to_lowercase();
            if seen.contains_key(&key) {
                continue;
            }
            let app = read_link(&path).and_then(|link| shortcut_app(&id, &path, &link, &env));
            seen.insert(key, app);
        }
    }
    let mut apps: Vec<InstalledApp> = seen.into_values().flatten().collect();
    apps.sort_by_key(|a| a.name.to_lowercase());
    apps
}

/// `*.lnk` files below `dir`, each with its id (its path below the walk's root, `\`-joined).
fn collect_links(dir: &Path, below: &mut Vec<String>, out: &mut Vec<(String, PathBuf)>) {
    if below.len() > MAX_START_MENU_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        if path.is_dir() {
            below.push(name);
            collect_links(&path, below, out);
            below.pop();
        } else if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("lnk"))
        {
            let mut id = below.join("\\");
            if !id.is_empty() {
                id.push('\\');
            }
            id.push_str(&name);
            out.push((id, path));
        }
    }
}

fn read_link(path: &Path) -> Option<ShellLink> {
    let size = std::fs::metadata(path).ok()?.len();
    if size > MAX_LINK_SIZE {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    match ShellLink::parse(&bytes) {
        Ok(link) => Some(link),
        Err(e) => {
            tracing::debug!("skipping the shortcut {}: {e}", path.display());
            None
        }
    }
}

/// The file name of a Windows path (after its last `\` or `/`).
fn windows_file_name(path: &str) -> &str {
    path.rsplit(['\\', '/']).next().unwrap_or(path)
}

/// The lower-case extension of a Windows path's file name, when it has one.
fn windows_extension(path: &str) -> Option<String> {
    let name = windows_file_name(path);
    name.rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .filter(|ext| !ext.is_empty())
}

/// Whether Windows can start `path` as a program (not a document opened by another one).
fn is_program(path: &str) -> bool {
    windows_extension(path)
        .is_some_and(|ext| matches!(ext.as_str(), "exe" | "com" | "bat" | "cmd" | "msc"))
}

/// The catalog entry of one shortcut, `None` when it does not start a program.
fn shortcut_app(
    id: &str,
    path: &Path,
    link: &ShellLink,
    env: &impl Fn(&str) -> Option<String>,
) -> Option<InstalledApp> {
    let target = link.target(env)?;
    if !is_program(&target) {
        return None;
    }
    let arguments = split_command_line(link.arguments.as_deref().unwrap_or(""));
    let mut exec = Vec::with_capacity(arguments.len() + 2);
    if windows_extension(&target).as_deref() == Some("msc") {
        exec.push("mmc.exe".to_string());
    }
    exec.push(target.clone());
    exec.extend(arguments);
    let name = path.file_stem()?.to_string_lossy().into_owned();
    let icon = link
        .icon_location
        .as_deref()
        .filter(|i| !i.is_empty())
        .map(|i| {
            let i = expand_env(i, env).unwrap_or_else(|| i.to_string());
            match link.icon_index {
                0 => i,
                n => format!("{i},{n}"),
            }
        })
        .unwrap_or_else(|| target.clone());
    let mut keywords = vec![windows_file_name(&target).to_string()];
    if let Some(description) = link.description.as_deref().map(str::trim)
        && !description.is_empty()
    {
        keywords.push(description.to_string());
    }
    Some(InstalledApp {
        id: id.to_string(),
        name,
        localized: BTreeMap::new(),
        exec,
        icon: Some(icon),
        keywords,
        source: path.display().to_string(),
    })
}

/// One entry of the Windows shell's Applications folder (`shell:AppsFolder`, what the Start
/// menu's "All apps" lists), as the Windows backend reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppsFolderItem {
    /// The name the Start menu shows.
    pub name: String,
    /// Its `System.AppUserModel.ID`: `PackageFamilyName!AppId` for a packaged app, an id a
    /// shortcut declares (`Chrome`), or, for a desktop app with none, the program's path,
    /// absolute or below a known folder's GUID (`{1AC14E77-…}\notepad.exe`).
    pub aumid: String,
}

/// `shortcuts` (from [`start_menu_apps`]) joined by the Applications folder's entries that add
/// an app, each started as `explorer.exe shell:AppsFolder\<AUMID>`, all sorted by name.
///
/// An entry is left out when
/// - its name is a shortcut's name (compared without case): the folder lists every Start-menu
///   shortcut again, under the AUMID the shortcut declares or its program's path, and two
///   entries with one name would make launching by name ambiguous — the shortcut, which
///   starts the program directly, wins;
/// - its AUMID is a path (it holds a `\`; a leading `{GUID}` is a known folder, which
///   `known_folder` resolves to a directory) to a program a shortcut already starts, compared
///   without case (a shortcut whose name differs from the folder's, e.g. a localized one);
/// - its AUMID is a path or URL to something that is not a program (documents, web links,
///   which [`start_menu_apps`] leaves out too);
/// - its name or AUMID is empty, or the AUMID came earlier.
///
/// Keywords: a packaged app's package family (`Microsoft.WindowsCalculator_8wekyb3d8bbwe`) and
/// package name (`Microsoft.WindowsCalculator`); a path's file name (`app.exe`).
pub fn with_apps_folder(
    shortcuts: Vec<InstalledApp>,
    items: &[AppsFolderItem],
    known_folder: impl Fn(&str) -> Option<String>,
) -> Vec<InstalledApp> {
    let names: BTreeSet<String> = shortcuts.iter().map(|a| a.name.to_lowercase()).collect();
    let programs: BTreeSet<String> = shortcuts
        .iter()
        .filter_map(|a| match a.exec.as_slice() {
            [mmc, console, ..] if mmc.eq_ignore_ascii_case("mmc.exe") => Some(console),
            [program, ..] => Some(program),
            [] => None,
        })
        .map(|p| normal_path(p))
        .collect();
    let mut seen = BTreeSet::new();
    let mut apps = shortcuts;
    for item in items {
        let (name, aumid) = (item.name.trim(), item.aumid.trim());
        if name.is_empty()
            || aumid.is_empty()
            || names.contains(&name.to_lowercase())
            || !seen.insert(aumid.to_lowercase())
        {
            continue;
        }
        let mut keywords = Vec::new();
        if aumid.contains("://") {
            continue;
        } else if aumid.contains('\\') {
            let path = resolve_known_folder(aumid, &known_folder);
            if !is_program(&path) || programs.contains(&normal_path(&path)) {
                continue;
            }
            keywords.push(windows_file_name(&path).to_string());
        } else if let Some((family, _app)) = aumid.split_once('!') {
            keywords.push(family.to_string());
            if let Some((package, _publisher)) = family.rsplit_once('_') {
                keywords.push(package.to_string());
            }
        }
        apps.push(InstalledApp {
            id: aumid.to_string(),
            name: name.to_string(),
            localized: BTreeMap::new(),
            exec: vec![
                "explorer.exe".to_string(),
                format!("shell:AppsFolder\\{aumid}"),
            ],
            icon: None,
            keywords,
            source: "shell:AppsFolder".to_string(),
        });
    }
    apps.sort_by_key(|a| a.name.to_lowercase());
    apps
}

/// `{GUID}\rest` with the known folder's directory in place of `{GUID}`, when `known_folder`
/// knows it; otherwise the path as it is.
fn resolve_known_folder(path: &str, known_folder: &impl Fn(&str) -> Option<String>) -> String {
    if let Some(rest) = path.strip_prefix('{')
        && let Some((guid, tail)) = rest.split_once('}')
        && let Some(dir) = known_folder(&format!("{{{guid}}}"))
    {
        let tail = tail.trim_start_matches('\\');
        return format!("{}\\{tail}", dir.trim_end_matches('\\'));
    }
    path.to_string()
}

/// A Windows path in the form paths are compared in: lower case, `\` separators.
fn normal_path(path: &str) -> String {
    path.replace('/', "\\").to_lowercase()
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

    fn windows_env(name: &str) -> Option<String> {
        name.eq_ignore_ascii_case("windir")
            .then(|| r"C:\Windows".to_string())
    }

    #[test]
    fn start_menu_shortcuts_that_start_programs_become_apps_and_the_users_folder_wins() {
        use crate::lnk::tests::{Spec, write};
        let root = std::env::temp_dir().join(format!("deskpilot-startmenu-{}", std::process::id()));
        let (user, common) = (root.join("user/Programs"), root.join("common/Programs"));
        std::fs::create_dir_all(common.join("Accessories")).unwrap();
        std::fs::create_dir_all(common.join("Administrative Tools")).unwrap();
        std::fs::create_dir_all(&user).unwrap();
        let put = |path: PathBuf, spec: Spec<'_>| std::fs::write(path, write(&spec)).unwrap();
        put(
            common.join("Accessories").join("Notepad.lnk"),
            Spec {
                local_path: Some(r"C:\Windows\System32\notepad.exe"),
                env_target: Some(r"%windir%\system32\notepad.exe"),
                description: Some("Edits text files"),
                arguments: Some(r#"/A "C:\My Files\a.txt""#),
                icon_location: Some(r"%windir%\system32\shell32.dll"),
                icon_index: 3,
                ..Spec::default()
            },
        );
        put(
            common
                .join("Administrative Tools")
                .join("Computer Management.LNK"),
            Spec {
                env_target: Some(r"%windir%\system32\compmgmt.msc"),
                arguments: Some("/s"),
                ..Spec::default()
            },
        );
        put(
            common.join("Tool.lnk"),
            Spec {
                local_path: Some(r"C:\Common\tool.exe"),
                ..Spec::default()
            },
        );
        put(
            user.join("tool.lnk"),
            Spec {
                local_path: Some(r"C:\Users\me\tool.cmd"),
                ansi_strings: true,
                description: Some("  "),
                ..Spec::default()
            },
        );
        // Not programs, not resolvable, not links at all: left out.
        put(
            common.join("Readme.lnk"),
            Spec {
                local_path: Some(r"C:\Program Files\App\readme.txt"),
                ..Spec::default()
            },
        );
        put(
            common.join("Downloads.lnk"),
            Spec {
                local_path: Some(r"C:\Users\me\Downloads"),
                ..Spec::default()
            },
        );
        put(
            common.join("Control Panel.lnk"),
            Spec {
                id_list: true,
                ..Spec::default()
            },
        );
        std::fs::write(common.join("Broken.lnk"), b"L\0\0\0garbage").unwrap();
        std::fs::write(common.join("desktop.ini"), b"[.ShellClassInfo]").unwrap();

        let apps = start_menu_apps_with(&[user.clone(), common.clone()], windows_env);
        let _ = std::fs::remove_dir_all(&root);
        let summary: Vec<(&str, &str, Vec<&str>)> = apps
            .iter()
            .map(|a| {
                (
                    a.id.as_str(),
                    a.name.as_str(),
                    a.exec.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (
                    r"Administrative Tools\Computer Management.LNK",
                    "Computer Management",
                    vec!["mmc.exe", r"C:\Windows\system32\compmgmt.msc", "/s"]
                ),
                (
                    r"Accessories\Notepad.lnk",
                    "Notepad",
                    vec![
                        r"C:\Windows\system32\notepad.exe",
                        "/A",
                        r"C:\My Files\a.txt"
                    ]
                ),
                ("tool.lnk", "tool", vec![r"C:\Users\me\tool.cmd"]),
            ]
        );
        let notepad = &apps[1];
        assert_eq!(
            notepad.icon.as_deref(),
            Some(r"C:\Windows\system32\shell32.dll,3")
        );
        assert_eq!(notepad.keywords, ["notepad.exe", "Edits text files"]);
        assert!(
            notepad.source.ends_with("Notepad.lnk"),
            "{}",
            notepad.source
        );
        let tool = &apps[2];
        assert_eq!(tool.icon.as_deref(), Some(r"C:\Users\me\tool.cmd"));
        assert_eq!(tool.keywords, ["tool.cmd"]);
    }

    fn shortcut(name: &str, exec: &[&str]) -> InstalledApp {
        InstalledApp {
            id: format!("{name}.lnk"),
            name: name.to_string(),
            localized: BTreeMap::new(),
            exec: exec.iter().map(|s| s.to_string()).collect(),
            icon: None,
            keywords: Vec::new(),
            source: format!(r"C:\ProgramData\{name}.lnk"),
        }
    }

    #[test]
    fn the_apps_folder_adds_packaged_and_unlisted_apps_but_not_what_shortcuts_start() {
        const SYSTEM: &str = "{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}";
        const PROGRAM_FILES: &str = "{6D809377-6AF0-444B-8957-A3773F02200E}";
        let shortcuts = vec![
            shortcut("Notepad", &[r"C:\Windows\system32\notepad.exe"]),
            shortcut("Google Chrome", &[r"C:\Program Files\Google\chrome.exe"]),
            shortcut(
                "Services",
                &["mmc.exe", r"C:\Windows\System32\services.msc"],
            ),
        ];
        let item = |name: &str, aumid: &str| AppsFolderItem {
            name: name.into(),
            aumid: aumid.into(),
        };
        let items = [
            item(
                "Calculator",
                "Microsoft.WindowsCalculator_8wekyb3d8bbwe!App",
            ),
            // The same program under another (localized) name, by path.
            item("Editor", &format!(r"{SYSTEM}\NOTEPAD.EXE")),
            item("Service list", &format!(r"{SYSTEM}\services.msc")),
            // A shortcut's own AUMID, under its name.
            item("google chrome", "Chrome"),
            // A desktop app no shortcut starts (an advertised one).
            item("Word", &format!(r"{PROGRAM_FILES}\Office\WINWORD.EXE")),
            item(
                "Unknown folder",
                r"{00000000-0000-0000-0000-000000000000}\x\y.exe",
            ),
            item("Readme", &format!(r"{PROGRAM_FILES}\App\readme.txt")),
            item("Website", "https://example.com/"),
            item(
                "Calculator again",
                "microsoft.windowscalculator_8wekyb3d8bbwe!app",
            ),
            item("", "Nameless"),
            item("Explorer", "Microsoft.Windows.Explorer"),
        ];
        let known = |guid: &str| match guid {
            SYSTEM => Some(r"C:\Windows\System32".to_string()),
            PROGRAM_FILES => Some(r"C:\Program Files\".to_string()),
            _ => None,
        };
        let apps = with_apps_folder(shortcuts, &items, known);
        let summary: Vec<(&str, &str, &str)> = apps
            .iter()
            .map(|a| (a.name.as_str(), a.id.as_str(), a.source.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                (
                    "Calculator",
                    "Microsoft.WindowsCalculator_8wekyb3d8bbwe!App",
                    "shell:AppsFolder"
                ),
                ("Explorer", "Microsoft.Windows.Explorer", "shell:AppsFolder"),
                (
                    "Google Chrome",
                    "Google Chrome.lnk",
                    r"C:\ProgramData\Google Chrome.lnk"
                ),
                ("Notepad", "Notepad.lnk", r"C:\ProgramData\Notepad.lnk"),
                ("Services", "Services.lnk", r"C:\ProgramData\Services.lnk"),
                (
                    "Unknown folder",
                    r"{00000000-0000-0000-0000-000000000000}\x\y.exe",
                    "shell:AppsFolder"
                ),
                (
                    "Word",
                    &format!(r"{PROGRAM_FILES}\Office\WINWORD.EXE"),
                    "shell:AppsFolder"
                ),
            ]
        );
        assert_eq!(
            apps[0].exec,
            [
                "explorer.exe",
                r"shell:AppsFolder\Microsoft.WindowsCalculator_8wekyb3d8bbwe!App"
            ]
        );
        assert_eq!(
            apps[0].keywords,
            [
                "Microsoft.WindowsCalculator_8wekyb3d8bbwe",
                "Microsoft.WindowsCalculator"
            ]
        );
        assert!(apps[1].keywords.is_empty());
        assert_eq!(apps[6].keywords, ["WINWORD.EXE"]);
    }
}
