//! What tests of memory, and of the crates that open one, need: a directory of their own.

use std::path::{Path, PathBuf};

/// A fresh directory under the system temp dir, removed on drop.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// `deskpilot-memory-<name>-<pid>-<now>`, empty.
    pub fn new(name: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!(
            "deskpilot-memory-{name}-{}-{}",
            std::process::id(),
            crate::now_millis()
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
