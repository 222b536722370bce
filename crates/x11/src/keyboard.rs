//! Synthetic keyboard input through XTEST, including characters the keymap lacks.
//!
//! A character the current keymap has is typed with its keycode (plus Shift for the second
//! level). Characters it lacks (CJK, emoji, most accents on a US map) are bound to spare
//! keycodes — ones with no keysym at all in the user's map — two per keycode (the second one
//! typed with Shift), in a single `ChangeKeyboardMapping`, typed, and unbound once
//! their events have been read. That wait is needed because clients look keysyms up when
//! they *read* a key event: rebinding a keycode at once makes them decode late events with
//! the new map (measured here: 7 of 10 lost). A busy client may read them long after they
//! were sent, so before a keycode is rebound, the window typed to is asked for a
//! `_NET_WM_PING`: its answer comes after it has read every earlier event. A window that does
//! not take pings (xterm) gets the fixed [`SETTLE`] instead.
//!
//! Temporary bindings outlive the call that made them (see [`Binding`]): a later call reuses
//! a character that is still bound, binds new ones to free spare keycodes, and only waits
//! for a read when it must take over a keycode whose last events may still be unread.
//! A short-lived thread on its own connection unbinds everything once typing has been idle
//! for [`RESTORE_IDLE`]; the keyboard lock is held throughout every call, so nothing rebinds the
//! map under a call that is reading it.
//!
//! A process that dies before its restore (SIGKILL, a client that ends the server within the
//! idle second) would leave its keycodes bound for good, and after enough such deaths no spare
//! keycode is left. So every binding is leased in a root-window property
//! (`_DESKPILOT_KEYMAP_LEASES`: pid, keycode pairs); before binding, keycodes leased by a pid
//! that no longer runs on this host are unbound and become spare again.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use deskpilot_backend::{Error, Keyboard};
use deskpilot_types::Key;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    AtomEnum, ConnectionExt as _, KEY_PRESS_EVENT, KEY_RELEASE_EVENT, PropMode,
};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::wrapper::ConnectionExt as _;

use crate::desktop::X11Desktop;
use crate::error::x11_err;

/// Time between the last key event on a temporary binding and rebinding its keycode, for a
/// window that does not answer `_NET_WM_PING`.
///
/// Measured with the end-to-end typing test (xterm, 20 lines of Latin-1, CJK and emoji per
/// run, 2-core machine): 0 ms lost characters in 3 of 3 runs, 10 ms in 2 of 3, 60 ms in none
/// of 6. Six times the last failing value leaves room for a busier machine.
pub const SETTLE: Duration = Duration::from_millis(60);

/// How long typing must have been idle before the temporary bindings are removed. Longer
/// than [`SETTLE`]: nothing waits for it, and an app starved of CPU may read its key events
/// long after they were sent (seen in CI: with the 60 ms settle as the idle time, a loaded
/// 2-core run lost every bound character of a mousepad line).
pub const RESTORE_IDLE: Duration = Duration::from_millis(1000);

/// How long a window may take to answer a ping before the fixed [`SETTLE`] is trusted instead
/// (a client this slow is hung, not busy).
const PING_LIMIT: Duration = Duration::from_secs(2);

/// Characters typed between two round trips, so a long text never floods the server.
const CHUNK: usize = 256;

const SHIFT_L: u32 = 0xffe1;

/// The root-window property that leases temporarily bound keycodes to their process.
const LEASES: &[u8] = b"_DESKPILOT_KEYMAP_LEASES";

/// A keycode leased to a process: (pid, keycode).
type Lease = (u32, u8);

/// Whether process `pid` still runs on this host (a zombie does not).
fn alive(pid: u32) -> bool {
    pid == std::process::id()
        || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .is_some_and(|state| state != "Z" && state != "X")
        })
}

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

/// Spare keycodes currently bound to characters, to be unbound after the settle.
///
/// Every keycode here had no keysym at all in the user's map, so unbinding writes zeros.
#[derive(Debug, Default)]
pub(crate) struct Binding {
    /// Keycode → when a key event on it was last processed.
    used: Vec<(u8, Instant)>,
    /// Every key event sent up to this instant has been read by the windows typed to.
    read: Option<Instant>,
    /// The windows that had the focus while bound characters were typed, since `read`.
    typed_to: Vec<u32>,
    /// Bumped on every change, so a stale restore thread knows it was overtaken.
    generation: u64,
}

impl Binding {
    fn is_empty(&self) -> bool {
        self.used.is_empty()
    }

    fn last_use(&self, keycode: u8) -> Option<Instant> {
        self.used
            .iter()
            .find(|(k, _)| *k == keycode)
            .map(|(_, t)| *t)
    }

    /// Whether the events last sent on `keycode` have certainly been read.
    fn settled(&self, keycode: u8) -> bool {
        self.last_use(keycode)
            .is_none_or(|t| self.read.is_some_and(|r| t <= r))
    }

    fn touch(&mut self, keycode: u8, at: Instant) {
        match self.used.iter_mut().find(|(k, _)| *k == keycode) {
            Some(entry) => entry.1 = at,
            None => self.used.push((keycode, at)),
        }
    }
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

/// Where each character of a batch is typed: keycode and level.
type Plan = Vec<(u32, u8, usize)>;

/// Sends `_NET_WM_PING` to the top-level window holding `focus` (itself or an ancestor that
/// lists the protocol) and waits for its answer on the root window. `Ok(false)` when no window
/// on the way up takes pings or the answer does not come within `limit`. A connection of its
/// own: the answer must not wait in, or be taken from, the backend's event queue.
fn ping(display: &str, focus: u32, limit: Duration) -> Result<bool, Error> {
    use x11rb::protocol::Event;
    use x11rb::protocol::xproto::{ChangeWindowAttributesAux, ClientMessageEvent, EventMask};

    let (conn, screen) = x11rb::rust_connection::RustConnection::connect(Some(display))
        .map_err(|e| Error::os("pinging the focused window", e.to_string()))?;
    let root = conn.setup().roots[screen].root;
    let atoms = crate::atoms::Atoms::new(&conn)
        .map_err(x11_err("intern atoms"))?
        .reply()
        .map_err(x11_err("intern atoms"))?;
    // PointerRoot (1) and None (0) name no window.
    let mut window = focus;
    let mut target = None;
    for _ in 0..16 {
        if window <= 1 || window == root {
            break;
        }
        let protocols = conn
            .get_property(false, window, atoms.WM_PROTOCOLS, AtomEnum::ATOM, 0, 64)
            .map_err(x11_err("GetProperty"))?
            .reply();
        if protocols.is_ok_and(|p| {
            p.value32()
                .is_some_and(|mut v| v.any(|a| a == atoms._NET_WM_PING))
        }) {
            target = Some(window);
            break;
        }
        match conn
            .query_tree(window)
            .map_err(x11_err("QueryTree"))?
            .reply()
        {
            Ok(tree) => window = tree.parent,
            Err(_) => break,
        }
    }
    let Some(target) = target else {
        return Ok(false);
    };
    conn.change_window_attributes(
        root,
        &ChangeWindowAttributesAux::new().event_mask(EventMask::SUBSTRUCTURE_NOTIFY),
    )
    .map_err(x11_err("ChangeWindowAttributes"))?;
    static STAMP: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let stamp = STAMP.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let message = ClientMessageEvent::new(
        32,
        target,
        atoms.WM_PROTOCOLS,
        [atoms._NET_WM_PING, stamp, target, 0, 0],
    );
    conn.send_event(false, target, EventMask::NO_EVENT, message)
        .map_err(x11_err("SendEvent"))?;
    conn.flush().map_err(x11_err("flush"))?;
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        match conn.poll_for_event().map_err(x11_err("poll"))? {
            Some(Event::ClientMessage(m)) => {
                let d = m.data.as_data32();
                if m.type_ == atoms.WM_PROTOCOLS
                    && d[0] == atoms._NET_WM_PING
                    && d[1] == stamp
                    && d[2] == target
                {
                    return Ok(true);
                }
            }
            Some(_) => {}
            None => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    Ok(false)
}

/// Binds `wanted` (distinct keysyms the map lacks) two per keycode onto `slots`, returning the
/// new keysyms for each keycode used.
fn pair_up(wanted: &[u32], slots: &[u8]) -> Vec<(u8, [u32; 2])> {
    wanted
        .chunks(2)
        .zip(slots)
        .map(|(pair, kc)| (*kc, [pair[0], *pair.get(1).unwrap_or(&pair[0])]))
        .collect()
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

    /// Writes `changes` (keycode → its first two keysyms, the rest cleared) in one request
    /// over the range they span, keeping every other keycode of the range as it is.
    fn rebind(&self, map: &mut Keymap, changes: &[(u8, [u32; 2])]) -> Result<(), Error> {
        let (Some(lo), Some(hi)) = (
            changes.iter().map(|(k, _)| *k).min(),
            changes.iter().map(|(k, _)| *k).max(),
        ) else {
            return Ok(());
        };
        let per = map.per;
        for (kc, syms) in changes {
            let at = (kc - map.first) as usize * per;
            for (level, slot) in map.syms[at..at + per].iter_mut().enumerate() {
                *slot = syms.get(level).copied().unwrap_or(0);
            }
        }
        let range = map.range(lo, hi);
        self.conn
            .change_keyboard_mapping(hi - lo + 1, lo, per as u8, &range)
            .map_err(x11_err("ChangeKeyboardMapping"))?
            .check()
            .map_err(x11_err("ChangeKeyboardMapping"))?;
        Ok(())
    }

    fn leases_atom(&self) -> Result<u32, Error> {
        Ok(self
            .conn
            .intern_atom(false, LEASES)
            .map_err(x11_err("InternAtom"))?
            .reply()
            .map_err(x11_err("InternAtom"))?
            .atom)
    }

    /// The keycode leases: (pid, keycode) pairs.
    fn leases(&self) -> Result<Vec<(u32, u8)>, Error> {
        let atom = self.leases_atom()?;
        let reply = self
            .conn
            .get_property(false, self.root, atom, AtomEnum::CARDINAL, 0, 4096)
            .map_err(x11_err("GetProperty"))?
            .reply()
            .map_err(x11_err("GetProperty"))?;
        Ok(reply
            .value32()
            .map(|v| v.collect::<Vec<u32>>())
            .unwrap_or_default()
            .chunks(2)
            .filter_map(|p| match p {
                [pid, kc] => u8::try_from(*kc).ok().map(|kc| (*pid, kc)),
                _ => None,
            })
            .collect())
    }

    fn write_leases(&self, leases: &[(u32, u8)]) -> Result<(), Error> {
        let atom = self.leases_atom()?;
        let flat: Vec<u32> = leases
            .iter()
            .flat_map(|(pid, kc)| [*pid, u32::from(*kc)])
            .collect();
        self.conn
            .change_property32(
                PropMode::REPLACE,
                self.root,
                atom,
                AtomEnum::CARDINAL,
                &flat,
            )
            .map_err(x11_err("ChangeProperty"))?;
        Ok(())
    }

    /// Records this process's lease on `keycodes` (`take`), or gives them up.
    fn lease(&self, keycodes: &[u8], take: bool) -> Result<(), Error> {
        let me = std::process::id();
        let mut leases = self.leases()?;
        leases.retain(|l| !keycodes.contains(&l.1));
        if take {
            leases.extend(keycodes.iter().map(|kc| (me, *kc)));
        }
        self.write_leases(&leases)
    }

    /// Unbinds the keycodes leased by processes that are gone, so they are spare again.
    fn reclaim_dead_leases(&self, map: &mut Keymap) -> Result<(), Error> {
        let leases = self.leases()?;
        let (dead, kept): (Vec<Lease>, Vec<Lease>) =
            leases.into_iter().partition(|(pid, _)| !alive(*pid));
        if dead.is_empty() {
            return Ok(());
        }
        let changes: Vec<(u8, [u32; 2])> = dead.iter().map(|(_, kc)| (*kc, [0, 0])).collect();
        tracing::info!(
            keycodes = changes.len(),
            "unbinding keycodes left bound by processes that are gone"
        );
        self.rebind(map, &changes)?;
        self.write_leases(&kept)
    }

    /// Unbinds every temporary keycode (after waiting out what is left of their settle).
    fn unbind_all(&self, binding: &mut Binding, map: &mut Keymap) -> Result<(), Error> {
        if binding.is_empty() {
            return Ok(());
        }
        self.settle(binding);
        let changes: Vec<(u8, [u32; 2])> = binding.used.iter().map(|(k, _)| (*k, [0, 0])).collect();
        self.rebind(map, &changes)?;
        let keycodes: Vec<u8> = changes.iter().map(|(k, _)| *k).collect();
        self.lease(&keycodes, false)?;
        *binding = Binding {
            generation: next_generation(),
            ..Binding::default()
        };
        Ok(())
    }

    /// Makes every character of `chars` typable, binding what the map lacks; returns the
    /// plan (keysym, keycode, level) or `None` when the batch needs more slots than are free.
    fn prepare(
        &self,
        binding: &mut Binding,
        map: &mut Keymap,
        chars: &[char],
    ) -> Result<Option<Plan>, Error> {
        let mut wanted: Vec<u32> = Vec::new();
        for &c in chars {
            let sym = char_keysym(c);
            if map.find(sym).is_none() && !wanted.contains(&sym) {
                wanted.push(sym);
            }
        }
        if !wanted.is_empty() {
            // Keycodes free right now: spare ones, and temporary ones whose characters this
            // batch does not need and whose last events have been read.
            let needed: Vec<u8> = chars
                .iter()
                .filter_map(|c| map.find(char_keysym(*c)).map(|(k, _)| k))
                .collect();
            if map.spare().len() * 2 < wanted.len() {
                self.settle(binding);
            }
            let slots: Vec<u8> = map
                .spare()
                .into_iter()
                .chain(binding.used.iter().filter_map(|(k, _)| {
                    (binding.settled(*k) && !needed.contains(k)).then_some(*k)
                }))
                .collect();
            if slots.len() * 2 < wanted.len() {
                return Ok(None);
            }
            let changes = pair_up(&wanted, &slots);
            let keycodes: Vec<u8> = changes.iter().map(|(k, _)| *k).collect();
            // Leased before the map changes: a death in between leaves a lease, not a leak.
            self.lease(&keycodes, true)?;
            self.rebind(map, &changes)?;
            let now = Instant::now();
            for (kc, _) in &changes {
                binding.touch(*kc, now);
            }
            binding.generation = next_generation();
        }
        let mut plan = Vec::with_capacity(chars.len());
        for &c in chars {
            let sym = char_keysym(c);
            let (kc, level) = map.find(sym).ok_or_else(|| Error::Unsupported {
                what: "typing",
                reason: format!("no key could be bound for {c:?}"),
            })?;
            plan.push((sym, kc, level));
        }
        Ok(Some(plan))
    }

    fn type_plan(&self, plan: &Plan, shift: u8, binding: &mut Binding) -> Result<(), Error> {
        let typed = (|| {
            for &(_, kc, level) in plan {
                if level == 1 {
                    self.key_event(shift, true)?;
                }
                self.key_event(kc, true)?;
                self.key_event(kc, false)?;
                if level == 1 {
                    self.key_event(shift, false)?;
                }
            }
            // The round trip that waits for the server also says where the keys went.
            let focus = self
                .conn
                .get_input_focus()
                .map_err(x11_err("GetInputFocus"))?
                .reply()
                .map_err(x11_err("GetInputFocus"))?
                .focus;
            Ok(focus)
        })();
        let now = Instant::now();
        let mut bound = false;
        for &(_, kc, _) in plan {
            if binding.last_use(kc).is_some() {
                binding.touch(kc, now);
                bound = true;
            }
        }
        let focus = typed?;
        if bound && !binding.typed_to.contains(&focus) {
            binding.typed_to.push(focus);
        }
        Ok(())
    }

    /// Waits until every key event sent on a temporary keycode has been read: each window
    /// typed to answers a `_NET_WM_PING` (its answer follows everything it read before), or,
    /// when one does not take pings or does not answer within [`PING_LIMIT`], [`SETTLE`] has
    /// passed since the last event.
    fn settle(&self, binding: &mut Binding) {
        let Some(last) = binding.used.iter().map(|(_, t)| *t).max() else {
            return;
        };
        if binding.read.is_some_and(|r| r >= last) {
            return;
        }
        let asked = Instant::now();
        let answered = !binding.typed_to.is_empty()
            && binding.typed_to.iter().all(|w| {
                ping(&self.display, *w, PING_LIMIT).unwrap_or_else(|e| {
                    tracing::debug!("no ping answer from window {w:#x}: {e}");
                    false
                })
            });
        tracing::debug!(
            answered,
            windows = ?binding.typed_to,
            waited_ms = asked.elapsed().as_millis() as u64,
            "keymap settle"
        );
        if answered {
            binding.read = Some(asked);
        } else {
            std::thread::sleep(SETTLE.saturating_sub(last.elapsed()));
            binding.read = Some(last);
        }
        binding.typed_to.clear();
    }

    /// Takes the keyboard lock and reads the map as it is (temporary bindings included).
    fn locked_keymap(&self) -> Result<(MutexGuard<'_, Binding>, Keymap), Error> {
        let binding = self
            .pending_keymap
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        Ok((binding, self.keymap()?))
    }

    /// Once typing has been idle for [`RESTORE_IDLE`], unbinds every temporary keycode on a
    /// connection of its own — unless a keyboard call changed the binding meanwhile.
    fn schedule_restore(&self, binding: &Binding) {
        if binding.is_empty() {
            return;
        }
        let generation = binding.generation;
        let shared: Arc<Mutex<Binding>> = self.pending_keymap.clone();
        let display = self.display.clone();
        let spawned = std::thread::Builder::new()
            .name("keymap-restore".into())
            .spawn(move || {
                std::thread::sleep(RESTORE_IDLE);
                let mut slot = shared.lock().unwrap_or_else(|e| e.into_inner());
                if slot.generation != generation || slot.is_empty() {
                    return;
                }
                let restored = X11Desktop::connect(Some(&display)).and_then(|d| {
                    let mut map = d.keymap()?;
                    d.unbind_all(&mut slot, &mut map)
                });
                if let Err(e) = restored {
                    tracing::warn!("could not restore the temporary keymap binding: {e}");
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot start the keymap restore thread: {e}");
        }
    }
}

impl Keyboard for X11Desktop {
    fn key(&self, key: Key, down: bool) -> Result<(), Error> {
        let (_binding, map) = self.locked_keymap()?;
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
        let (mut binding, mut map) = self.locked_keymap()?;
        if let Err(e) = self.reclaim_dead_leases(&mut map) {
            tracing::warn!("could not reclaim keycodes of dead processes: {e}");
        }
        let shift = map
            .find(SHIFT_L)
            .map(|(kc, _)| kc)
            .ok_or_else(|| Error::Unsupported {
                what: "typing",
                reason: "the keyboard map has no Shift key".into(),
            })?;
        // Capacity: every spare keycode (free or temporarily bound) holds two characters.
        let capacity = (map.spare().len() + binding.used.len()) * 2;
        let chars: Vec<char> = text.chars().collect();
        let mut start = 0;
        while start < chars.len() {
            // A batch: at most CHUNK characters and at most `capacity` distinct ones the
            // user's map lacks (characters bound by earlier calls count too: they may need
            // their slot back).
            let mut end = start;
            let mut unmapped: Vec<u32> = Vec::new();
            while end < chars.len() && end - start < CHUNK {
                let sym = char_keysym(chars[end]);
                let temporary = map
                    .find(sym)
                    .is_none_or(|(kc, _)| binding.last_use(kc).is_some());
                if temporary && !unmapped.contains(&sym) {
                    if unmapped.len() == capacity {
                        break;
                    }
                    unmapped.push(sym);
                }
                end += 1;
            }
            if end == start {
                return Err(Error::Unsupported {
                    what: "typing",
                    reason: "the keyboard map has no spare keycode to bind characters it lacks"
                        .into(),
                });
            }
            let batch = &chars[start..end];
            let plan = match self.prepare(&mut binding, &mut map, batch)? {
                Some(plan) => plan,
                None => {
                    // Not enough settled slots: let the earlier bindings settle, start afresh.
                    self.unbind_all(&mut binding, &mut map)?;
                    self.prepare(&mut binding, &mut map, batch)?
                        .ok_or_else(|| Error::Unsupported {
                            what: "typing",
                            reason: "ran out of spare keycodes".into(),
                        })?
                }
            };
            self.type_plan(&plan, shift, &mut binding)?;
            start = end;
        }
        self.schedule_restore(&binding);
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

    #[test]
    fn unmapped_characters_pair_up_two_per_keycode() {
        assert_eq!(
            pair_up(&[1, 2, 3], &[30, 29, 28]),
            vec![(30, [1, 2]), (29, [3, 3])]
        );
    }
}
