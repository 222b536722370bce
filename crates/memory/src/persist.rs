//! The state file: `memory.json` in the memory directory, holding the window index, the
//! element index and the focus history under a schema version.
//!
//! Writes are atomic: a temporary file in the same directory is written and fsynced, renamed
//! over the state file, and the directory is fsynced (on Unix), so a crash leaves the old or
//! the new file, never a mix. A file that cannot be read, parsed or is of a newer schema is
//! moved aside to `memory.json.corrupt-<unix ms>` and reported as a [`LoadWarning`]: memory
//! starts empty but the old bytes are kept for a human, never silently lost. The state is
//! bounded by the `MAX_*` caps in [`super`], so the file stays under [`MAX_STATE_BYTES`].

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::store::{ElementIndex, FocusHistory, WindowIndex};
use super::{MemoryState, UnixMillis};

/// The state file's name.
pub const STATE_FILE: &str = "memory.json";
/// The schema this build writes and reads.
pub const SCHEMA_VERSION: u32 = 1;
/// A state file larger than this is not read (it cannot have been written by the caps).
pub const MAX_STATE_BYTES: u64 = 8 * 1024 * 1024;

#[derive(Serialize)]
struct FileOut<'a> {
    schema: u32,
    updated_at: Option<UnixMillis>,
    windows: &'a WindowIndex,
    elements: &'a ElementIndex,
    focus: &'a FocusHistory,
}

#[derive(Deserialize)]
struct FileIn {
    schema: u32,
    updated_at: Option<UnixMillis>,
    windows: WindowIndex,
    elements: ElementIndex,
    focus: FocusHistory,
}

#[derive(Deserialize)]
struct SchemaOnly {
    schema: u32,
}

/// Why a state file was not loaded. In every case the file was moved to `moved_to`.
#[derive(Debug)]
#[non_exhaustive]
pub enum LoadWarning {
    /// It could not be read (permissions, I/O).
    Unreadable { moved_to: PathBuf, error: io::Error },
    /// Its bytes are not a state file (torn, truncated, edited).
    Corrupt { moved_to: PathBuf, reason: String },
    /// It was written by a newer deskpilot.
    NewerSchema { moved_to: PathBuf, found: u32 },
    /// It is larger than [`MAX_STATE_BYTES`].
    TooLarge { moved_to: PathBuf, bytes: u64 },
}

impl std::fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadWarning::Unreadable { moved_to, error } => write!(
                f,
                "the state file could not be read ({error}); moved to {}",
                moved_to.display()
            ),
            LoadWarning::Corrupt { moved_to, reason } => write!(
                f,
                "the state file was corrupt ({reason}); moved to {} and memory started empty",
                moved_to.display()
            ),
            LoadWarning::NewerSchema { moved_to, found } => write!(
                f,
                "the state file has schema {found}, newer than this deskpilot's {SCHEMA_VERSION}; moved to {}",
                moved_to.display()
            ),
            LoadWarning::TooLarge { moved_to, bytes } => write!(
                f,
                "the state file is {bytes} bytes, over the {MAX_STATE_BYTES}-byte bound; moved to {}",
                moved_to.display()
            ),
        }
    }
}

/// What loading found: the state (empty when there was none or it was moved aside) and any
/// warning. `move_failed` is set when even moving the bad file aside failed.
#[derive(Debug)]
pub struct Loaded {
    pub state: MemoryState,
    pub warning: Option<LoadWarning>,
    pub move_failed: Option<io::Error>,
}

/// Serialises `state` (no trailing newline).
pub fn encode(state: &MemoryState) -> io::Result<Vec<u8>> {
    serde_json::to_vec(&FileOut {
        schema: SCHEMA_VERSION,
        updated_at: state.updated_at,
        windows: &state.windows,
        elements: &state.elements,
        focus: &state.focus,
    })
    .map(deskpilot_types::redact::scrub_bytes)
    .map_err(io::Error::other)
}

/// Writes `state` atomically to `dir/memory.json`; returns the bytes written.
pub fn save(dir: &Path, state: &MemoryState) -> io::Result<u64> {
    fs::create_dir_all(dir)?;
    let bytes = encode(state)?;
    let tmp = dir.join(format!("{STATE_FILE}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, dir.join(STATE_FILE))?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map(|()| bytes.len() as u64)
}

/// Makes the rename durable.
///
/// # Platform-specific
/// On Unix the directory is opened and fsynced; Windows cannot open a directory as a file
/// and its rename is journalled by NTFS, so nothing is done there.
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

fn move_aside(path: &Path, now: UnixMillis) -> io::Result<PathBuf> {
    let mut to = path.with_file_name(format!("{STATE_FILE}.corrupt-{now}"));
    let mut n = 1;
    while to.exists() {
        to = path.with_file_name(format!("{STATE_FILE}.corrupt-{now}-{n}"));
        n += 1;
    }
    fs::rename(path, &to)?;
    Ok(to)
}

/// Loads `dir/memory.json` (see the module doc); never fails. Leftover temporary files of
/// interrupted saves are removed.
pub fn load(dir: &Path, now: UnixMillis) -> Loaded {
    if let Ok(list) = fs::read_dir(dir) {
        for e in list.flatten() {
            if e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{STATE_FILE}.tmp-"))
            {
                let _ = fs::remove_file(e.path());
            }
        }
    }
    let path = dir.join(STATE_FILE);
    let empty = |warning, move_failed| Loaded {
        state: MemoryState::default(),
        warning,
        move_failed,
    };
    let bad = |make: &dyn Fn(PathBuf) -> LoadWarning| match move_aside(&path, now) {
        Ok(to) => empty(Some(make(to)), None),
        Err(e) => empty(Some(make(path.clone())), Some(e)),
    };
    let len = match fs::metadata(&path) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return empty(None, None),
        Err(e) => {
            let kind = e.kind();
            return bad(&|moved_to| LoadWarning::Unreadable {
                moved_to,
                error: io::Error::from(kind),
            });
        }
    };
    if len > MAX_STATE_BYTES {
        return bad(&|moved_to| LoadWarning::TooLarge {
            moved_to,
            bytes: len,
        });
    }
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            let kind = e.kind();
            return bad(&|moved_to| LoadWarning::Unreadable {
                moved_to,
                error: io::Error::from(kind),
            });
        }
    };
    if let Ok(SchemaOnly { schema }) = serde_json::from_slice::<SchemaOnly>(&bytes)
        && schema > SCHEMA_VERSION
    {
        return bad(&|moved_to| LoadWarning::NewerSchema {
            moved_to,
            found: schema,
        });
    }
    match serde_json::from_slice::<FileIn>(&bytes) {
        Ok(f) if f.schema == SCHEMA_VERSION => {
            let mut state = MemoryState {
                windows: f.windows,
                elements: f.elements,
                focus: f.focus,
                updated_at: f.updated_at,
            };
            state.enforce_bounds();
            Loaded {
                state,
                warning: None,
                move_failed: None,
            }
        }
        Ok(f) => bad(&|moved_to| LoadWarning::Corrupt {
            moved_to,
            reason: format!("unknown schema {}", f.schema),
        }),
        Err(e) => {
            let reason = e.to_string();
            bad(&|moved_to| LoadWarning::Corrupt {
                moved_to,
                reason: reason.clone(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::obs;
    use crate::testing::TempDir;
    use deskpilot_types::WindowId;

    fn sample() -> MemoryState {
        let mut s = MemoryState::default();
        s.observe_windows(
            &[
                obs(1, "Untitled - Mousepad", "mousepad"),
                obs(2, "终端", "xterm"),
            ],
            Some(WindowId(2)),
            100,
        );
        s
    }

    #[test]
    fn save_then_load_round_trips() {
        let dir = TempDir::new("persist-roundtrip");
        let s = sample();
        let n = save(dir.path(), &s).unwrap();
        assert_eq!(n, fs::metadata(dir.path().join(STATE_FILE)).unwrap().len());
        let l = load(dir.path(), 1);
        assert!(l.warning.is_none());
        assert_eq!(l.state, s);
        assert_eq!(
            load(&dir.path().join("absent"), 1).state,
            MemoryState::default()
        );
    }

    #[test]
    fn a_file_truncated_at_every_offset_loads_whole_or_is_moved_aside() {
        let dir = TempDir::new("persist-truncate");
        let s = sample();
        let full = encode(&s).unwrap();
        let path = dir.path().join(STATE_FILE);
        for cut in 0..=full.len() {
            fs::write(&path, &full[..cut]).unwrap();
            let l = load(dir.path(), cut as u64);
            if l.state == s {
                assert!(l.warning.is_none(), "cut {cut}");
                continue;
            }
            let Some(LoadWarning::Corrupt { moved_to, .. }) = &l.warning else {
                panic!("cut {cut}: {:?}", l.warning);
            };
            assert!(!path.exists(), "cut {cut}: left in place");
            assert_eq!(fs::read(moved_to).unwrap(), &full[..cut], "cut {cut}");
            assert!(
                moved_to
                    .to_string_lossy()
                    .ends_with(&format!(".corrupt-{cut}")),
                "{moved_to:?}"
            );
            assert_eq!(l.state, MemoryState::default());
            fs::remove_file(moved_to).unwrap();
        }
        assert_eq!(
            load(dir.path(), 0).state,
            s,
            "the whole file ends the loop in place"
        );
    }

    #[test]
    fn an_interrupted_save_leaves_the_old_file() {
        let dir = TempDir::new("persist-interrupted");
        let s = sample();
        save(dir.path(), &s).unwrap();
        // A save killed before its rename leaves only a partial temporary file.
        let tmp = dir.path().join(format!("{STATE_FILE}.tmp-999"));
        fs::write(&tmp, &encode(&MemoryState::default()).unwrap()[..5]).unwrap();
        let l = load(dir.path(), 1);
        assert_eq!((l.state, l.warning.is_none()), (s, true));
        assert!(!tmp.exists(), "leftover temporary file removed");
    }

    #[test]
    fn newer_schema_and_oversized_files_are_moved_aside() {
        let dir = TempDir::new("persist-schema");
        let path = dir.path().join(STATE_FILE);
        fs::write(&path, br#"{"schema":99,"whatever":true}"#).unwrap();
        let l = load(dir.path(), 7);
        assert!(matches!(
            l.warning,
            Some(LoadWarning::NewerSchema { found: 99, .. })
        ));
        fs::write(&path, vec![b' '; MAX_STATE_BYTES as usize + 1]).unwrap();
        let l = load(dir.path(), 8);
        assert!(matches!(l.warning, Some(LoadWarning::TooLarge { .. })));
        // Two bad files in the same millisecond do not overwrite each other.
        fs::write(&path, b"x").unwrap();
        let first = load(dir.path(), 9).warning;
        fs::write(&path, b"y").unwrap();
        let second = load(dir.path(), 9).warning;
        let (
            Some(LoadWarning::Corrupt { moved_to: a, .. }),
            Some(LoadWarning::Corrupt { moved_to: b, .. }),
        ) = (first, second)
        else {
            panic!()
        };
        assert_ne!(a, b);
        assert_eq!(fs::read(a).unwrap(), b"x");
    }
}
