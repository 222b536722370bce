//! The library against a temporary user directory.

use super::*;

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "deskpilot-skills-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn library(dir: &TempDir) -> Library {
    Library::new(
        &SkillsConfig {
            enabled: true,
            dir: Some(dir.0.clone()),
        },
        &|_| None,
    )
}

#[test]
fn builtins_parse_and_cover_both_platforms() {
    let all = builtin::all();
    assert_eq!(all.len(), 22);
    let ids: std::collections::BTreeSet<_> = all.iter().map(|s| s.id.clone()).collect();
    assert_eq!(ids.len(), all.len(), "two built-ins share an id");
    for s in &all {
        assert!(!s.summary.is_empty() && !s.body.is_empty(), "{s:?}");
        assert!(s.body.chars().count() <= MAX_SKILL_CHARS);
        assert!(!s.body.starts_with("---"), "front matter left in {}", s.app);
    }
    let dir = TempDir::new("builtins");
    let lib = library(&dir);
    for name in [
        "EXCEL.EXE",
        "excel",
        "Microsoft Excel",
        "notepad.exe",
        "mousepad",
        "xterm",
        "soffice.bin",
        "Code.exe",
        "windows-terminal",
    ] {
        assert!(lib.get(name).is_some(), "no skill for {name}");
    }
    assert!(lib.get("calc").is_none());
}

#[test]
fn names_normalise_case_exe_spaces_underscores_and_dashes() {
    assert_eq!(normalize("EXCEL.EXE"), "excel");
    assert_eq!(normalize(" Windows_Terminal "), "windowsterminal");
    assert_eq!(normalize("VS-Code"), "vscode");
    assert_eq!(normalize("../../etc/passwd"), "etcpasswd");
    assert_eq!(normalize("我的 应用"), "我的应用");
}

#[test]
fn a_window_is_matched_by_process_class_or_title() {
    let dir = TempDir::new("match");
    let lib = library(&dir);
    assert_eq!(
        lib.for_window(Some("mousepad"), "Mousepad", "notes.txt")
            .unwrap()
            .app,
        "Mousepad"
    );
    assert_eq!(lib.for_window(None, "XTerm", "bash").unwrap().app, "XTerm");
    assert_eq!(
        lib.for_window(Some("python3"), "", "Untitled - Notepad")
            .unwrap()
            .app,
        "Notepad"
    );
    assert!(lib.for_window(Some("kcalc"), "kcalc", "KCalc").is_none());
}

#[test]
fn real_linux_apps_get_their_own_skill_by_class_then_process() {
    let dir = TempDir::new("real");
    let lib = library(&dir);
    // (process, class, title) as the window list reports them, and the skill each gets.
    for (process, class, title, app) in [
        (
            "soffice.bin",
            "libreoffice-calc",
            "Untitled 1 - LibreOffice Calc",
            "LibreOffice Calc",
        ),
        (
            "soffice.bin",
            "libreoffice-writer",
            "gpl.txt - LibreOffice Writer",
            "LibreOffice Writer",
        ),
        (
            "soffice.bin",
            "libreoffice-impress",
            "Untitled 1 - LibreOffice Impress",
            "LibreOffice Impress",
        ),
        // A LibreOffice dialog.
        (
            "soffice.bin",
            "Soffice",
            "Tip of the Day: 1/225",
            "LibreOffice",
        ),
        (
            "firefox-esr",
            "firefox-esr",
            "Fixture home — Mozilla Firefox",
            "Firefox",
        ),
        (
            "thunderbird",
            "thunderbird-default",
            "Home - Mozilla Thunderbird",
            "Thunderbird",
        ),
        (
            "gimp-2.10",
            "Gimp-2.10",
            "GNU Image Manipulation Program",
            "GIMP",
        ),
        ("nautilus", "org.gnome.Nautilus", "fmtest", "Nautilus"),
        ("pcmanfm", "Pcmanfm", "fmtest", "PCManFM"),
        // The kernel cuts gnome-terminal-server's name at 15 bytes.
        (
            "gnome-terminal-",
            "Gnome-terminal",
            "Terminal",
            "GNOME Terminal",
        ),
    ] {
        assert_eq!(
            lib.for_window(Some(process), class, title).map(|s| s.app),
            Some(app.to_string()),
            "{process} / {class} / {title}"
        );
    }
    // By title alone the longest name wins.
    assert_eq!(
        lib.for_window(None, "", "Untitled 1 - LibreOffice Calc")
            .unwrap()
            .app,
        "LibreOffice Calc"
    );
}

#[test]
fn save_get_append_remove_and_the_codes() {
    let dir = TempDir::new("write");
    let lib = library(&dir);
    let w = lib
        .save(
            "MyApp",
            "- export: ctrl+shift+e",
            "导出报表",
            &["myapp.exe".to_string(), "我的应用".to_string()],
            false,
        )
        .unwrap();
    assert_eq!((w.id.as_str(), w.chars), ("myapp", 22));
    assert!(w.path.ends_with("myapp.md") && w.path.is_file());
    let s = lib.get("我的应用").unwrap();
    assert_eq!((s.source, s.summary.as_str()), (Source::User, "导出报表"));
    assert!(
        s.hint()
            .contains("App skill available for MyApp (导出报表)")
    );
    assert!(matches!(
        lib.save("myapp", "x", "", &[], false),
        Err(SkillError::Exists { .. })
    ));
    lib.save("myapp", "- replaced", "", &[], true).unwrap();
    assert_eq!(lib.get("MyApp").unwrap().body, "- replaced");
    // The cap applies to save and to the merged append.
    let big = "x".repeat(MAX_SKILL_CHARS + 1);
    assert!(matches!(
        lib.save("Big", &big, "", &[], false),
        Err(SkillError::TooLong { chars: 4001, .. })
    ));
    assert!(!dir.0.join("big.md").exists(), "rejected, not cut");
    let near = "y".repeat(MAX_SKILL_CHARS - 5);
    assert!(matches!(
        lib.append("myapp", &near),
        Err(SkillError::TooLong { .. })
    ));
    let w = lib.append("myapp", "- second line").unwrap();
    assert_eq!(lib.get("myapp").unwrap().body, "- replaced\n- second line");
    assert_eq!(w.chars, "- replaced\n- second line".chars().count());
    // Built-ins: removing is refused; a user skill overrides and removing it brings it back.
    assert!(matches!(
        lib.remove("Excel"),
        Err(SkillError::Builtin { .. })
    ));
    lib.save("Excel", "- my own excel notes", "mine", &[], false)
        .unwrap();
    assert_eq!(lib.get("EXCEL.EXE").unwrap().source, Source::User);
    lib.remove("excel").unwrap();
    assert_eq!(lib.get("excel").unwrap().source, Source::Builtin);
    lib.remove("MyApp").unwrap();
    assert!(lib.get("myapp").is_none() && !dir.0.join("myapp.md").exists());
    assert!(matches!(
        lib.remove("nothing"),
        Err(SkillError::NotFound { .. })
    ));
    // No temporary files are left behind.
    let left: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        left.iter().all(|n| !n.to_string_lossy().ends_with(".tmp")),
        "{left:?}"
    );
}

#[test]
fn a_write_removes_temporary_files_of_writers_that_died_and_keeps_the_rest() {
    let dir = TempDir::new("orphans");
    let lib = library(&dir);
    std::fs::create_dir_all(&dir.0).unwrap();
    // 4194304 is above Linux's largest pid: that writer is certainly gone.
    let dead = ".myapp.md.4194305.0.tmp";
    let mine = format!(".other.md.{}.9.tmp", std::process::id());
    let notes = ".notes.tmp";
    for n in [dead, mine.as_str(), notes] {
        std::fs::write(dir.0.join(n), "half").unwrap();
    }
    lib.save("MyApp", "- a recipe", "mine", &[], false).unwrap();
    let left = |n: &str| dir.0.join(n).exists();
    assert_eq!(left(dead), !cfg!(target_os = "linux"));
    assert!(left(&mine), "a live writer's file stays");
    assert!(left(notes), "a file not named like ours stays");
    assert!(left("myapp.md"));
    assert_eq!(orphan_pid(".a.b.md.77.3.tmp"), Some(77));
    assert_eq!(orphan_pid(".77.3.tmp"), None);
    assert_eq!(orphan_pid("a.md.77.3.tmp"), None);
}

#[test]
fn a_hand_edit_is_seen_after_refresh_and_long_files_are_cut_with_a_marker() {
    let dir = TempDir::new("refresh");
    let lib = library(&dir);
    std::fs::create_dir_all(&dir.0).unwrap();
    std::fs::write(
        dir.0.join("anything.md"),
        "---\napp: Mousepad\nmatch: [mp, \"mouse pad\"]\nsummary: my notes\n---\n\n- my recipe\n",
    )
    .unwrap();
    assert_eq!(
        lib.get("mousepad").unwrap().source,
        Source::Builtin,
        "not before refresh"
    );
    lib.refresh().unwrap();
    let s = lib.get("mp").unwrap();
    assert_eq!(
        (s.source, s.body.as_str(), s.summary.as_str()),
        (Source::User, "- my recipe", "my notes")
    );
    assert_eq!(lib.get("mouse pad").unwrap().app, "Mousepad");
    // A user skill in a file of another name is appended to in place and removed from there.
    lib.append("mousepad", "- more").unwrap();
    assert!(!dir.0.join("mousepad.md").exists());
    lib.remove("mousepad").unwrap();
    assert!(!dir.0.join("anything.md").exists());
    std::fs::write(dir.0.join("long.md"), "z".repeat(MAX_SKILL_CHARS + 50)).unwrap();
    lib.refresh().unwrap();
    let long = lib.get("long").unwrap();
    assert!(long.truncated && long.body.ends_with("[truncated at 4000 characters]"));
}

#[test]
fn switched_off_or_without_a_directory_it_is_read_only() {
    let off = Library::new(
        &SkillsConfig {
            enabled: false,
            dir: None,
        },
        &|_| Some("/tmp".into()),
    );
    assert!(off.list().is_empty());
    assert!(matches!(
        off.save("a", "b", "", &[], false),
        Err(SkillError::ReadOnly { .. })
    ));
    let none = Library::new(&SkillsConfig::default(), &|_| None);
    assert!(!none.list().is_empty(), "built-ins still served");
    assert!(matches!(none.remove("x"), Err(SkillError::ReadOnly { .. })));
}

#[test]
fn the_default_directory_follows_dsh_home_then_the_config_dir() {
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    };
    assert_eq!(
        default_dir(&env(&[("DSH_HOME", "/home/u/.dsh"), ("HOME", "/home/u")])),
        Some(PathBuf::from("/home/u/.dsh/computer-use-skills"))
    );
    if !cfg!(windows) {
        assert_eq!(
            default_dir(&env(&[("HOME", "/home/u")])),
            Some(PathBuf::from("/home/u/.config/deskpilot/skills"))
        );
    }
}

#[test]
fn an_unreadable_directory_is_a_reload_failure() {
    let dir = TempDir::new("unreadable");
    std::fs::create_dir_all(dir.0.parent().unwrap()).unwrap();
    // A file where the directory should be.
    std::fs::write(&dir.0, "not a directory").unwrap();
    let lib = library(&dir);
    assert!(matches!(
        lib.refresh(),
        Err(SkillError::ReloadFailed { .. })
    ));
    let _ = std::fs::remove_file(&dir.0);
}
