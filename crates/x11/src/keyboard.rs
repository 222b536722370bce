//! Synthetic keyboard input through XTEST, including characters the keymap lacks.
//!
//! A character the current keymap has is typed with its keycode (plus Shift for the second
//! level). Characters it lacks (CJK, emoji, most accents on a US map) are bound to spare
//! keycodes — ones with no keysym at all — in a single `ChangeKeyboardMapping` over the
//! range that holds them, typed, and the range is restored once [`SETTLE`] has passed. The
//! settle is needed because clients look keysyms up when they *read* a key event: restoring
//! at once makes them decode late events with the old map (measured here: 7 of 10 lost).
//!
//! The restore does not block the call: a pending restore is recorded, carried out by a
//! short-lived thread on its own connection after the settle, or by the next keyboard call
//! first (waiting out what is left of the settle) — whichever comes first. Keyboard calls
//! hold the pending-restore lock throughout, so no call ever reads or rebinds a map that is
//! about to change under it.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use deskpilot_backend::{Error, Keyboard};
use deskpilot_types::Key;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ConnectionExt as _, KEY_PRESS_EVENT, KEY_RELEASE_EVENT};
use x11rb::protocol::xtest::ConnectionExt as _;

use crate::X11Desktop;
use crate::desktop::x11_err;

/// Time between the last key event on a temporary binding and restoring the keymap.
///
/// Measured with the end-to-end typing test (xterm, 20 lines of Latin-1, CJK and emoji per
/// run, 2-core machine): 0 ms lost characters in 3 of 3 runs, 10 ms in 2 of 3, 60 ms in none
/// of 6. Six times the last failing value leaves room for a busier machine.
pub const SETTLE: Duration = Duration::from_millis(60);

/// Characters typed between two round trips, so a long text never floods the server.
const CHUNK: usize = 256;

const SHIFT_L: u32 = 0xffe1;

/// The X keysym of a key.
pub fn keysym(key: Key) -> u32 {
    match key {
        Key::Ctrl => 0xffe3,
        Key::Shift => SHIFT_L,
        Key::Alt => 0xffe9,
        Key::Super => 0xffeb,
        Key::Enter => 0xff0d,
        Key::Tab => 0xff09,
        Key::Escape => 0xff1b,
        Key::Backspace => 0xff08,
        Key::Delete => 0xffff,
        Key::Insert => 0xff63,
        Key::Home => 0xff50,
        Key::End => 0xff57,
        Key::PageUp => 0xff55,
        Key::PageDown => 0xff56,
        Key::Left => 0xff51,
        Key::Up => 0xff52,
        Key::Right => 0xff53,
        Key::Down => 0xff54,
        Key::Space => 0x20,
        Key::CapsLock => 0xffe5,
        Key::Menu => 0xff67,
        Key::PrintScreen => 0xff61,
        Key::F(n) => 0xffbe + (n.clamp(1, 24) as u32 - 1),
        Key::Char(c) => char_keysym(c),
    }
}

/// The keysym for a character: Latin-1 maps to itself, everything else to `0x01000000 + code point`.
pub fn char_keysym(c: char) -> u32 {
    match c {
        '\n' | '\r' => 0xff0d,
        '\t' => 0xff09,
        '\u{8}' => 0xff08,
        c if (' '..='~').contains(&c) || ('\u{a0}'..='\u{ff}').contains(&c) => c as u32,
        c => 0x0100_0000 + c as u32,
    }
}

fn next_generation() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A temporary binding to undo: the original keysyms of a keycode range.
#[derive(Debug)]
pub(crate) struct PendingRestore {
    lo: u8,
    per: usize,
    original: Vec<u32>,
    /// When the last key event on the binding was processed.
    typed_at: Instant,
    generation: u64,
}

/// The keyboard map as the server has it.
struct Keymap {
    first: u8,
    per: usize,
    syms: Vec<u32>,
}

impl Keymap {
    /// Keycode and level (0 or 1) that produce `sym`, level 0 preferred.
    fn find(&self, sym: u32) -> Option<(u8, usize)> {
        for level in 0..self.per.min(2) {
            for (i, chunk) in self.syms.chunks(self.per).enumerate() {
                if chunk[level] == sym {
                    return Some((self.first + i as u8, level));
                }
            }
        }
        None
    }

    /// Keycodes with no keysym at all, highest first.
    fn spare(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self
            .syms
            .chunks(self.per)
            .enumerate()
            .filter(|(_, c)| c.iter().all(|s| *s == 0))
            .map(|(i, _)| self.first + i as u8)
            .collect();
        out.reverse();
        out
    }

    fn range(&self, lo: u8, hi: u8) -> Vec<u32> {
        let a = (lo - self.first) as usize * self.per;
        let b = (hi - self.first + 1) as usize * self.per;
        self.syms[a..b].to_vec()
    }
}

impl X11Desktop {
    fn keymap(&self) -> Result<Keymap, Error> {
        let setup = self.conn.setup();
        let (first, last) = (setup.min_keycode, setup.max_keycode);
        let r = self
            .conn
            .get_keyboard_mapping(first, last - first + 1)
            .map_err(x11_err("GetKeyboardMapping"))?
            .reply()
            .map_err(x11_err("GetKeyboardMapping"))?;
        Ok(Keymap {
            first,
            per: r.keysyms_per_keycode.max(1) as usize,
            syms: r.keysyms,
        })
    }

    fn key_event(&self, keycode: u8, down: bool) -> Result<(), Error> {
        let kind = if down {
            KEY_PRESS_EVENT
        } else {
            KEY_RELEASE_EVENT
        };
        self.conn
            .xtest_fake_input(kind, keycode, 0, self.root, 0, 0, 0)
            .map_err(x11_err("XTestFakeInput"))?;
        Ok(())
    }

    fn set_range(&self, lo: u8, per: usize, syms: &[u32]) -> Result<(), Error> {
        let count = (syms.len() / per) as u8;
        self.conn
            .change_keyboard_mapping(count, lo, per as u8, syms)
            .map_err(x11_err("ChangeKeyboardMapping"))?
            .check()
            .map_err(x11_err("ChangeKeyboardMapping"))?;
        Ok(())
    }

    /// Types one batch whose unmapped characters fit the spare keycodes.
    fn type_batch(
        &self,
        pending: &mut Option<PendingRestore>,
        map: &Keymap,
        chars: &[char],
        shift: u8,
        spare: &[u8],
    ) -> Result<(), Error> {
        // Bind every distinct unmapped keysym of the batch to a spare keycode.
        let mut bound: Vec<(u32, u8)> = Vec::new();
        for &c in chars {
            let sym = char_keysym(c);
            if map.find(sym).is_none() && !bound.iter().any(|(s, _)| *s == sym) {
                let Some(&kc) = spare.get(bound.len()) else {
                    return Err(Error::Unsupported {
                        what: "typing",
                        reason: "ran out of spare keycodes".into(),
                    });
                };
                bound.push((sym, kc));
            }
        }
        let restore = if bound.is_empty() {
            None
        } else {
            let lo = bound.iter().map(|(_, k)| *k).min().unwrap_or(0);
            let hi = bound.iter().map(|(_, k)| *k).max().unwrap_or(0);
            let original = map.range(lo, hi);
            let mut temporary = original.clone();
            for (sym, kc) in &bound {
                let at = (kc - lo) as usize * map.per;
                for level in 0..map.per {
                    temporary[at + level] = if level < 2 { *sym } else { 0 };
                }
            }
            self.set_range(lo, map.per, &temporary)?;
            Some((lo, original))
        };
        let typed = (|| {
            for &c in chars {
                let sym = char_keysym(c);
                let (kc, level) = match bound.iter().find(|(s, _)| *s == sym) {
                    Some((_, kc)) => (*kc, 0),
                    None => map.find(sym).unwrap_or((0, 0)),
                };
                if kc == 0 {
                    continue;
                }
                if level == 1 {
                    self.key_event(shift, true)?;
                }
                self.key_event(kc, true)?;
                self.key_event(kc, false)?;
                if level == 1 {
                    self.key_event(shift, false)?;
                }
            }
            self.sync()
        })();
        if let Some((lo, original)) = restore {
            *pending = Some(PendingRestore {
                lo,
                per: map.per,
                original,
                typed_at: Instant::now(),
                generation: next_generation(),
            });
        }
        typed
    }

    /// Takes the keyboard lock, finishes any pending restore and reads the map it leaves.
    /// Callers keep the guard for their whole call, so nothing rebinds the map under them.
    fn settled_keymap(&self) -> Result<(MutexGuard<'_, Option<PendingRestore>>, Keymap), Error> {
        let mut pending = self
            .pending_keymap
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        self.finish_pending(&mut pending)?;
        Ok((pending, self.keymap()?))
    }

    /// Restores a pending binding, first waiting out what is left of its settle.
    fn finish_pending(&self, pending: &mut Option<PendingRestore>) -> Result<(), Error> {
        if let Some(p) = pending.take() {
            let left = SETTLE.saturating_sub(p.typed_at.elapsed());
            std::thread::sleep(left);
            self.set_range(p.lo, p.per, &p.original)?;
        }
        Ok(())
    }

    /// After the settle, restores the binding of `generation` on a connection of its own,
    /// unless a keyboard call has already done so.
    fn schedule_restore(&self, pending: &Option<PendingRestore>) {
        let Some(generation) = pending.as_ref().map(|p| p.generation) else {
            return;
        };
        let shared: Arc<Mutex<Option<PendingRestore>>> = self.pending_keymap.clone();
        let display = self.display.clone();
        let spawned = std::thread::Builder::new()
            .name("keymap-restore".into())
            .spawn(move || {
                std::thread::sleep(SETTLE);
                let mut slot = shared.lock().unwrap_or_else(|e| e.into_inner());
                if slot.as_ref().is_none_or(|p| p.generation != generation) {
                    return;
                }
                let Some(p) = slot.take() else { return };
                let restored = x11rb::rust_connection::RustConnection::connect(Some(&display))
                    .ok()
                    .and_then(|(c, _)| {
                        let count = (p.original.len() / p.per) as u8;
                        c.change_keyboard_mapping(count, p.lo, p.per as u8, &p.original)
                            .ok()?
                            .check()
                            .ok()
                    });
                if restored.is_none() {
                    tracing::warn!(
                        keycode = p.lo,
                        "could not restore the temporary keymap binding"
                    );
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot start the keymap restore thread: {e}");
        }
    }
}

impl Keyboard for X11Desktop {
    fn key(&self, key: Key, down: bool) -> Result<(), Error> {
        let (_pending, map) = self.settled_keymap()?;
        let sym = keysym(key);
        let Some((kc, _)) = map.find(sym) else {
            return Err(Error::Unsupported {
                what: "press_key",
                reason: format!(
                    "the keyboard map has no key for {key:?}; use type_text for characters"
                ),
            });
        };
        self.key_event(kc, down)?;
        self.sync()
    }

    fn type_text(&self, text: &str) -> Result<(), Error> {
        let (mut pending, map) = self.settled_keymap()?;
        let shift = map
            .find(SHIFT_L)
            .map(|(kc, _)| kc)
            .ok_or_else(|| Error::Unsupported {
                what: "typing",
                reason: "the keyboard map has no Shift key".into(),
            })?;
        let spare = map.spare();
        if spare.is_empty() && text.chars().any(|c| map.find(char_keysym(c)).is_none()) {
            return Err(Error::Unsupported {
                what: "typing",
                reason: "the keyboard map has no spare keycode to bind characters it lacks".into(),
            });
        }
        // Split into batches: at most CHUNK characters and at most `spare.len()` distinct unmapped ones.
        let chars: Vec<char> = text.chars().collect();
        let mut start = 0;
        while start < chars.len() {
            let mut end = start;
            let mut unmapped: Vec<u32> = Vec::new();
            while end < chars.len() && end - start < CHUNK {
                let sym = char_keysym(chars[end]);
                if map.find(sym).is_none() && !unmapped.contains(&sym) {
                    if unmapped.len() == spare.len() {
                        break;
                    }
                    unmapped.push(sym);
                }
                end += 1;
            }
            // A later batch reuses the spare keycodes: its earlier binding must settle first.
            self.finish_pending(&mut pending)?;
            self.type_batch(&mut pending, &map, &chars[start..end], shift, &spare)?;
            start = end;
        }
        self.schedule_restore(&pending);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keysyms_for_characters_and_named_keys() {
        assert_eq!(char_keysym('a'), 0x61);
        assert_eq!(char_keysym('é'), 0xe9);
        assert_eq!(char_keysym('中'), 0x0100_4e2d);
        assert_eq!(char_keysym('😀'), 0x0101_f600);
        assert_eq!(char_keysym('\n'), 0xff0d);
        assert_eq!(keysym(Key::F(5)), 0xffc2);
        assert_eq!(keysym(Key::PageDown), 0xff56);
    }

    #[test]
    fn keymap_finds_levels_and_spare_codes() {
        // Keycodes 8..=11: [a A], [b B], [], [].
        let map = Keymap {
            first: 8,
            per: 2,
            syms: vec![0x61, 0x41, 0x62, 0x42, 0, 0, 0, 0],
        };
        assert_eq!(map.find(0x41), Some((8, 1)));
        assert_eq!(map.find(0x62), Some((9, 0)));
        assert_eq!(map.find(0x63), None);
        assert_eq!(map.spare(), vec![11, 10]);
        assert_eq!(map.range(9, 10), vec![0x62, 0x42, 0, 0]);
    }
}
