//! App skills (dsh-computer-use's `app_skill`): short markdown recipes — hotkeys, exact menu paths,
//! pitfalls — that a model reads before it drives an app.
//!
//! A skill is a file with front matter (`app`, `match`, `summary`) and a body. Built-ins ship in
//! the binary ([`builtin`]); a user layer (a directory) overrides them by id and is where
//! `save` / `append` / `remove` write, atomically (temp file, fsync, rename, fsync of the
//! directory), so a crash leaves the old recipe or the new one, never half of one.
//!
//! Matching ([`normalize`]) is case-insensitive and ignores `.exe`, spaces, `_` and `-`, and is
//! tried against a window's process name, class and title.
//!
//! Nothing here knows about gates or MCP: the engine passes every write through its safety
//! gates first, and a surface words the [`SkillError`] codes.

mod builtin;
mod skill;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

pub use skill::{Skill, Source, normalize, parse};

/// The longest body a skill may have, in characters (dsh-computer-use's `MAX_SKILL_CHARS`).
pub const MAX_SKILL_CHARS: usize = 4000;

/// Why a skill operation failed; each maps to one of dsh-computer-use's codes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillError {
    /// `SKILL_EXISTS`: a user skill with this id exists and `overwrite` was not given.
    #[error("a user skill for \"{app}\" already exists at {}; pass overwrite: true to replace it, or append to extend it", path.display())]
    Exists { app: String, path: PathBuf },
    /// `SKILL_TOO_LONG`: the body (or the merged body of an append) is over the cap.
    #[error(
        "the skill for \"{app}\" would be {chars} characters; the limit is {max}: keep only the hotkeys, menu paths and pitfalls"
    )]
    TooLong {
        app: String,
        chars: usize,
        max: usize,
    },
    /// `SKILL_BUILTIN`: built-ins cannot be removed, only overridden.
    #[error(
        "\"{app}\" is a built-in skill and cannot be removed; save a user skill for the same app to override it"
    )]
    Builtin { app: String },
    /// `SKILLS_READ_ONLY`: the library has no writable user directory (skills off, or none configured).
    #[error("skills are read-only here: {why}")]
    ReadOnly { why: String },
    /// `SKILLS_RELOAD_FAILED`: the user directory could not be re-read.
    #[error("re-reading the skill directory {} failed: {message}", dir.display())]
    ReloadFailed { dir: PathBuf, message: String },
    /// No skill for that app (remove / append of something that is not there).
    #[error("no skill for \"{app}\"; the skills are: {}", known.join(", "))]
    NotFound { app: String, known: Vec<String> },
    /// A malformed request (an empty app name, one that normalises to nothing).
    #[error("{0}")]
    Invalid(String),
    /// Writing the user layer failed.
    #[error("{operation} {} failed: {message}", path.display())]
    Io {
        operation: &'static str,
        path: PathBuf,
        message: String,
    },
}

/// Where the library reads from and writes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillsConfig {
    /// `skills`: false reads nothing and refuses every write.
    pub enabled: bool,
    /// `skillsDir`: the user layer; `None` uses [`default_dir`].
    pub dir: Option<PathBuf>,
}

impl Default for SkillsConfig {
    fn default() -> Self {
        SkillsConfig {
            enabled: true,
            dir: None,
        }
    }
}

/// `$DSH_HOME/computer-use-skills` when `DSH_HOME` is set (dsh-computer-use's place), else
/// `skills` in deskpilot's configuration directory.
pub fn default_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(home) = env("DSH_HOME").filter(|h| !h.trim().is_empty()) {
        return Some(PathBuf::from(home).join("computer-use-skills"));
    }
    if cfg!(windows) {
        env("APPDATA").map(|a| PathBuf::from(a).join("deskpilot").join("skills"))
    } else {
        env("XDG_CONFIG_HOME")
            .filter(|x| !x.is_empty())
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".config")))
            .map(|c| c.join("deskpilot").join("skills"))
    }
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub app: String,
    pub id: String,
    pub path: PathBuf,
    /// The body's length in characters after the write.
    pub chars: usize,
}

/// The skills: built-ins plus the user layer, re-read on demand.
#[derive(Debug)]
pub struct Library {
    enabled: bool,
    dir: Option<PathBuf>,
    /// By id; user skills replace built-ins of the same id.
    skills: RwLock<BTreeMap<String, Skill>>,
    /// Writes one at a time.
    writing: Mutex<()>,
}

impl Library {
    /// Loads the built-ins and the user directory (a missing directory is an empty layer; an
    /// unreadable one is logged and left empty until `refresh`).
    pub fn new(config: &SkillsConfig, env: &dyn Fn(&str) -> Option<String>) -> Library {
        let dir = config.dir.clone().or_else(|| default_dir(env));
        let library = Library {
            enabled: config.enabled,
            dir: if config.enabled { dir } else { None },
            skills: RwLock::default(),
            writing: Mutex::default(),
        };
        if let Err(e) = library.refresh() {
            tracing::warn!("{e}");
        }
        library
    }

    /// Whether the library is switched on (`skills: true`).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The user layer, when there is one.
    pub fn user_dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Re-reads both layers.
    pub fn refresh(&self) -> Result<(), SkillError> {
        let mut all = BTreeMap::new();
        if self.enabled {
            for s in builtin::all() {
                all.insert(s.id.clone(), s);
            }
        }
        let mut failure = None;
        if let Some(dir) = &self.dir {
            match read_dir(dir) {
                Ok(user) => {
                    for s in user {
                        all.insert(s.id.clone(), s);
                    }
                }
                Err(e) => failure = Some(e),
            }
        }
        *self.skills.write().unwrap_or_else(|e| e.into_inner()) = all;
        failure.map_or(Ok(()), Err)
    }

    /// Every skill, by id.
    pub fn list(&self) -> Vec<Skill> {
        self.skills
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// The skill for `app` (an app name, exe name or any of a skill's `match` names).
    pub fn get(&self, app: &str) -> Option<Skill> {
        let key = normalize(app);
        if key.is_empty() {
            return None;
        }
        let skills = self.skills.read().unwrap_or_else(|e| e.into_inner());
        skills
            .get(&key)
            .or_else(|| skills.values().find(|s| s.keys().any(|k| k == key)))
            .cloned()
    }

    /// The skill for a window: its class equal to a skill's name, else its process name, else
    /// its title containing one (names of at least 4 characters, so "code" does not match every
    /// title, the longest name winning). The class comes first because it is the more specific: LibreOffice's Calc and
    /// Writer windows are both `soffice.bin`, but `libreoffice-calc` and `libreoffice-writer`.
    pub fn for_window(&self, process: Option<&str>, class: &str, title: &str) -> Option<Skill> {
        let process = process.map(normalize).unwrap_or_default();
        let class = normalize(class);
        let title = normalize(title);
        let skills = self.skills.read().unwrap_or_else(|e| e.into_inner());
        let named = |name: &str| {
            skills
                .values()
                .find(|s| !name.is_empty() && s.keys().any(|k| k == name))
        };
        named(&class)
            .or_else(|| named(&process))
            .or_else(|| {
                // The longest name in the title: "LibreOffice Calc" before "LibreOffice".
                skills
                    .values()
                    .filter_map(|s| {
                        s.keys()
                            .filter(|k| k.chars().count() >= 4 && title.contains(k.as_str()))
                            .map(|k| k.chars().count())
                            .max()
                            .map(|n| (n, s))
                    })
                    .fold(None, |best: Option<(usize, &Skill)>, (n, s)| match best {
                        Some((m, _)) if m >= n => best,
                        _ => Some((n, s)),
                    })
                    .map(|(_, s)| s)
            })
            .cloned()
    }

    fn writable(&self) -> Result<&Path, SkillError> {
        if !self.enabled {
            return Err(SkillError::ReadOnly {
                why: "the skill library is switched off (skills: false)".to_string(),
            });
        }
        self.dir.as_deref().ok_or_else(|| SkillError::ReadOnly {
            why: "there is no user skill directory (set skillsDir, DSH_HOME or HOME)".to_string(),
        })
    }

    fn id_for(app: &str) -> Result<String, SkillError> {
        let id = normalize(app);
        if id.is_empty() {
            return Err(SkillError::Invalid(format!(
                "app {app:?} has no letters or digits to name a skill by"
            )));
        }
        Ok(id)
    }

    /// Writes a user skill for `app`. An existing user skill needs `overwrite`.
    pub fn save(
        &self,
        app: &str,
        content: &str,
        summary: &str,
        matches: &[String],
        overwrite: bool,
    ) -> Result<Written, SkillError> {
        let dir = self.writable()?.to_path_buf();
        let id = Self::id_for(app)?;
        let body = content.trim_end();
        let chars = body.chars().count();
        if chars > MAX_SKILL_CHARS {
            return Err(SkillError::TooLong {
                app: app.to_string(),
                chars,
                max: MAX_SKILL_CHARS,
            });
        }
        let _one = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let path = dir.join(format!("{id}.md"));
        if path.exists() && !overwrite {
            return Err(SkillError::Exists {
                app: app.to_string(),
                path,
            });
        }
        let skill = Skill {
            id: id.clone(),
            app: app.trim().to_string(),
            matches: matches
                .iter()
                .map(|m| m.trim().to_string())
                .filter(|m| !m.is_empty())
                .collect(),
            summary: summary.trim().to_string(),
            body: body.to_string(),
            source: Source::User,
            path: Some(path.clone()),
            truncated: false,
        };
        write_atomically(&dir, &path, &skill.to_markdown())?;
        self.put(skill);
        Ok(Written {
            app: app.trim().to_string(),
            id,
            path,
            chars,
        })
    }

    /// Adds `content` to the end of the user skill for `app` (a built-in is copied into the user
    /// layer first); the merged body must stay under the cap.
    pub fn append(&self, app: &str, content: &str) -> Result<Written, SkillError> {
        let dir = self.writable()?.to_path_buf();
        let _one = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let Some(mut skill) = self.get(app) else {
            return Err(SkillError::NotFound {
                app: app.to_string(),
                known: self.list().into_iter().map(|s| s.app).collect(),
            });
        };
        let merged = format!("{}\n{}", skill.body.trim_end(), content.trim_end());
        let chars = merged.chars().count();
        if chars > MAX_SKILL_CHARS {
            return Err(SkillError::TooLong {
                app: skill.app,
                chars,
                max: MAX_SKILL_CHARS,
            });
        }
        // A user skill stays in its own file (a hand-made one may be named otherwise).
        let path = match (&skill.source, &skill.path) {
            (Source::User, Some(p)) => p.clone(),
            _ => dir.join(format!("{}.md", skill.id)),
        };
        skill.body = merged;
        skill.source = Source::User;
        skill.path = Some(path.clone());
        skill.truncated = false;
        write_atomically(&dir, &path, &skill.to_markdown())?;
        let written = Written {
            app: skill.app.clone(),
            id: skill.id.clone(),
            path,
            chars,
        };
        self.put(skill);
        Ok(written)
    }

    /// Deletes the user skill for `app`; the built-in of the same id (if any) shows again.
    pub fn remove(&self, app: &str) -> Result<Written, SkillError> {
        let dir = self.writable()?.to_path_buf();
        let _one = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let Some(skill) = self.get(app) else {
            return Err(SkillError::NotFound {
                app: app.to_string(),
                known: self.list().into_iter().map(|s| s.app).collect(),
            });
        };
        if skill.source == Source::Builtin {
            return Err(SkillError::Builtin { app: skill.app });
        }
        let path = skill
            .path
            .clone()
            .unwrap_or_else(|| dir.join(format!("{}.md", skill.id)));
        std::fs::remove_file(&path).map_err(|e| SkillError::Io {
            operation: "removing",
            path: path.clone(),
            message: e.to_string(),
        })?;
        let mut skills = self.skills.write().unwrap_or_else(|e| e.into_inner());
        skills.remove(&skill.id);
        if let Some(b) = builtin::all().into_iter().find(|b| b.id == skill.id) {
            skills.insert(b.id.clone(), b);
        }
        Ok(Written {
            app: skill.app,
            id: skill.id,
            path,
            chars: 0,
        })
    }

    fn put(&self, skill: Skill) {
        self.skills
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(skill.id.clone(), skill);
    }
}

/// The `*.md` skills of a directory (missing: none).
fn read_dir(dir: &Path) -> Result<Vec<Skill>, SkillError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(SkillError::ReloadFailed {
                dir: dir.to_path_buf(),
                message: e.to_string(),
            });
        }
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| SkillError::ReloadFailed {
            dir: dir.to_path_buf(),
            message: format!("{}: {e}", path.display()),
        })?;
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let mut skill = parse(stem, &text, Source::User);
        skill.path = Some(path.clone());
        if !skill.id.is_empty() {
            out.push(skill);
        }
    }
    Ok(out)
}

/// Writes `text` to `path` so that a crash at any point leaves the old file or the new one:
/// a temporary file in the same directory, flushed to disk, renamed over the target, and the
/// directory flushed so the rename itself survives a power cut.
fn write_atomically(dir: &Path, path: &Path, text: &str) -> Result<(), SkillError> {
    use std::io::Write as _;
    let io = |operation: &'static str, p: &Path| {
        let p = p.to_path_buf();
        move |e: std::io::Error| SkillError::Io {
            operation,
            path: p,
            message: e.to_string(),
        }
    };
    std::fs::create_dir_all(dir).map_err(io("creating", dir))?;
    remove_orphans(dir);
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("skill"),
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("writing", &tmp)(e));
    }
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("renaming into", path)(e));
    }
    #[cfg(unix)]
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Removes the temporary files of writes that never finished (`.<name>.<pid>.<n>.tmp`): those
/// whose process no longer runs (Linux), or, where that cannot be told, older than an hour. A
/// live writer's file is left alone; the skills themselves are never touched.
fn remove_orphans(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let Some(pid) = orphan_pid(name) else {
            continue;
        };
        let gone = if cfg!(target_os = "linux") {
            pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
        } else {
            e.metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age.as_secs() > 3600))
        };
        if gone {
            tracing::info!(
                "removing {name}, left in {} by a write that never finished",
                dir.display()
            );
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The writer's pid in a temporary file's name `.<name>.<pid>.<n>.tmp`.
fn orphan_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let mut parts = rest.rsplitn(3, '.');
    let n = parts.next()?;
    let pid = parts.next()?;
    parts.next().filter(|s| !s.is_empty())?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

#[cfg(test)]
mod tests;
