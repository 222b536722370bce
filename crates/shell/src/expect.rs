//! What `shell_exec_verified` checks after a command: through the filesystem, never through
//! the shell, so a command cannot vouch for itself. Relative paths are resolved against the
//! session's working directory.

use std::path::{Path, PathBuf};

/// The expectations (DesktopOS's keys). Every one given must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expect {
    pub path_exists: Option<String>,
    pub path_not_exists: Option<String>,
    pub is_dir: Option<String>,
    pub is_file: Option<String>,
    /// A file and a text it must contain.
    pub file_contains: Option<(String, String)>,
    /// The session's working directory afterwards.
    pub cwd: Option<String>,
}

/// One expectation and whether it held.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Check {
    pub key: &'static str,
    pub path: String,
    pub ok: bool,
    /// What was found, in words.
    pub detail: String,
}

/// A check of one path.
type PathTest = fn(&Path) -> bool;

fn resolve(cwd: &Path, p: &str) -> PathBuf {
    let p = Path::new(p);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

impl Expect {
    pub fn is_empty(&self) -> bool {
        *self == Expect::default()
    }

    /// Checks every expectation against the filesystem, `cwd` being the session's directory.
    pub fn check(&self, cwd: &Path) -> Vec<Check> {
        let mut out = Vec::new();
        let kind = |p: &Path| match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => "a directory".to_string(),
            Ok(m) if m.is_file() => format!("a file of {} bytes", m.len()),
            Ok(_) => "something other than a file or directory".to_string(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "nothing".to_string(),
            Err(e) => format!("unreadable ({e})"),
        };
        let plain: [(&'static str, &Option<String>, PathTest); 4] = [
            ("pathExists", &self.path_exists, |p| p.exists()),
            ("pathNotExists", &self.path_not_exists, |p| {
                std::fs::symlink_metadata(p).is_err()
            }),
            ("isDir", &self.is_dir, |p| p.is_dir()),
            ("isFile", &self.is_file, |p| p.is_file()),
        ];
        for (key, wanted, holds) in plain {
            if let Some(p) = wanted {
                let path = resolve(cwd, p);
                out.push(Check {
                    key,
                    ok: holds(&path),
                    detail: format!("{} is {}", path.display(), kind(&path)),
                    path: p.clone(),
                });
            }
        }
        if let Some((p, text)) = &self.file_contains {
            let path = resolve(cwd, p);
            let (ok, detail) = match std::fs::read(&path) {
                Ok(bytes) => {
                    let content = String::from_utf8_lossy(&bytes);
                    let ok = content.contains(text.as_str());
                    (
                        ok,
                        format!(
                            "{} ({} bytes) {} {text:?}",
                            path.display(),
                            bytes.len(),
                            if ok { "contains" } else { "does not contain" }
                        ),
                    )
                }
                Err(e) => (false, format!("{} cannot be read: {e}", path.display())),
            };
            out.push(Check {
                key: "fileContains",
                ok,
                detail,
                path: p.clone(),
            });
        }
        if let Some(p) = &self.cwd {
            let want = resolve(cwd, p);
            out.push(Check {
                key: "cwd",
                ok: same_dir(cwd, &want),
                detail: format!("the session is in {}", cwd.display()),
                path: p.clone(),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_read_the_filesystem_relative_to_the_session() {
        let dir = std::env::temp_dir().join(format!("dp-expect-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("中文")).unwrap();
        std::fs::write(dir.join("中文/a.txt"), "héllo 世界").unwrap();
        let e = Expect {
            path_exists: Some("中文/a.txt".into()),
            path_not_exists: Some("missing".into()),
            is_dir: Some("中文".into()),
            is_file: Some(dir.join("中文/a.txt").to_string_lossy().into()),
            file_contains: Some(("中文/a.txt".into(), "世界".into())),
            cwd: Some(".".into()),
        };
        let checks = e.check(&dir);
        assert_eq!(checks.len(), 6);
        assert!(checks.iter().all(|c| c.ok), "{checks:?}");
        let e = Expect {
            is_dir: Some("中文/a.txt".into()),
            file_contains: Some(("中文/a.txt".into(), "absent".into())),
            ..Expect::default()
        };
        let checks = e.check(&dir);
        assert!(checks.iter().all(|c| !c.ok), "{checks:?}");
        assert!(checks[0].detail.contains("a file of"), "{checks:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
