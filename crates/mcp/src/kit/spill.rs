//! Image bytes a client takes by path instead of inline (dsh-computer-use's `savedPath`): written
//! to a private per-user directory under the temporary root the binary hands in, the newest
//! [`KEPT_FILES`] kept.
//!
//! The directory is made on the first write, so a profile that never spills creates nothing:
//! `<root>/<name>-<uid>/screenshots` on Unix (created 0700, refused when someone else owns
//! it), `<root>\<name>\screenshots` on Windows (the temporary root is per-user already).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Files kept in a spill directory (older ones are removed).
pub(crate) const KEPT_FILES: u64 = 64;

/// The temporary root the binary handed in.
static ROOT: OnceLock<PathBuf> = OnceLock::new();

/// Hands in the temporary root spilled images go under (the binary calls it once at start;
/// without it the system's temporary directory is used).
pub fn set_root(root: PathBuf) {
    if ROOT.set(root).is_err() {
        tracing::debug!("the spill root was handed in twice; the first one stays");
    }
}

fn root() -> PathBuf {
    ROOT.get().cloned().unwrap_or_else(std::env::temp_dir)
}

/// This user's private directory `name` under `root`, made when missing.
#[cfg(unix)]
fn private_dir(root: &Path, name: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let base = root.join(format!("{name}-{uid}"));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true).mode(0o700);
    builder.create(&base)?;
    let meta = std::fs::symlink_metadata(&base)?;
    if meta.uid() != uid || !meta.is_dir() || meta.mode() & 0o077 != 0 {
        return Err(std::io::Error::other(format!(
            "{} is not a private directory of this user",
            base.display()
        )));
    }
    let dir = base.join("screenshots");
    builder.create(&dir)?;
    Ok(dir)
}

/// This user's directory `name` under `root` (a per-user temporary root), made when missing.
#[cfg(not(unix))]
fn private_dir(root: &Path, name: &str) -> std::io::Result<PathBuf> {
    let dir = root.join(name).join("screenshots");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Writes image `id`'s bytes as `screenshot-<id>.<ext>` into the private directory `name`
/// (whole or not at all), removes the file [`KEPT_FILES`] ids older; the path, or why not.
pub(crate) fn write(name: &str, id: u64, ext: &str, bytes: &[u8]) -> Result<PathBuf, String> {
    write_under(&root(), name, id, ext, bytes)
}

fn write_under(
    root: &Path,
    name: &str,
    id: u64,
    ext: &str,
    bytes: &[u8],
) -> Result<PathBuf, String> {
    let dir = private_dir(root, name).map_err(|e| e.to_string())?;
    let path = dir.join(format!("screenshot-{id}.{ext}"));
    let tmp = dir.join(format!(".screenshot-{id}.tmp"));
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    if id > KEPT_FILES {
        for old in ["jpg", "png"] {
            let _ = std::fs::remove_file(dir.join(format!("screenshot-{}.{old}", id - KEPT_FILES)));
        }
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_land_in_a_private_directory_and_old_ones_go() {
        let root =
            std::env::temp_dir().join(format!("deskpilot-spill-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let first = write_under(&root, "spill", 1, "png", b"one").unwrap();
        assert_eq!(std::fs::read(&first).unwrap(), b"one");
        assert!(
            first.ends_with("screenshots/screenshot-1.png"),
            "{}",
            first.display()
        );
        let later = write_under(&root, "spill", 1 + KEPT_FILES, "jpg", b"two").unwrap();
        assert!(later.exists() && !first.exists(), "the oldest is removed");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let base = first.parent().unwrap().parent().unwrap();
            let mode = std::fs::metadata(base).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700);
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}
