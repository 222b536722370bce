//! The `CLIPBOARD` selection, plain text, with no helper process.
//!
//! X has no clipboard store: the owner of the `CLIPBOARD` selection answers every paste
//! itself. So deskpilot owns it from a thread with its own connection and one unmapped
//! window, answering `TARGETS`, `UTF8_STRING`, `text/plain;charset=utf-8`, `TEXT` and
//! `STRING` requests for as long as the process runs (large texts go out with the `INCR`
//! protocol). The same thread pumps the events a read needs, so reads wait on a channel with
//! a deadline instead of polling the connection.
//!
//! The thread starts on first use, so a server that never touches the clipboard pays nothing.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deskpilot_backend::{Clipboard, Error};
use x11rb::connection::{Connection, RequestConnection as _};
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    AtomEnum, ChangeWindowAttributesAux, ConnectionExt as _, CreateWindowAux, EventMask, PropMode,
    Property, SELECTION_NOTIFY_EVENT, SelectionNotifyEvent, SelectionRequestEvent, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use crate::atoms::Atoms;
use crate::desktop::X11Desktop;
use crate::error::x11_err;

/// How long a read waits for the selection owner to answer.
const READ_TIMEOUT: Duration = Duration::from_secs(2);
/// Texts larger than this go out in `INCR` chunks of this size.
const CHUNK: usize = 256 * 1024;

/// Lazily started clipboard owner, one per [`X11Desktop`].
#[derive(Debug, Default)]
pub(crate) struct ClipboardHost {
    host: Mutex<Option<Arc<Host>>>,
}

#[derive(Debug)]
struct Host {
    conn: Arc<RustConnection>,
    window: u32,
    atoms: Atoms,
    /// The text deskpilot owns the selection with, `None` once another client took it.
    text: Arc<Mutex<Option<Arc<String>>>>,
    /// Events for reads in progress; one read at a time.
    reads: Mutex<Receiver<Event>>,
}

/// An `INCR` transfer to one requestor, advanced each time it deletes the property.
struct Transfer {
    data: Arc<String>,
    kind: u32,
    offset: usize,
}

impl ClipboardHost {
    fn get(&self, display: &str) -> Result<Arc<Host>, Error> {
        let mut slot = self.host.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = slot.as_ref() {
            return Ok(h.clone());
        }
        let host = Arc::new(Host::start(display)?);
        *slot = Some(host.clone());
        Ok(host)
    }
}

impl Host {
    fn start(display: &str) -> Result<Host, Error> {
        let (conn, screen) =
            RustConnection::connect(Some(display)).map_err(|e| Error::NoDisplay {
                message: format!("clipboard connection to {display}: {e}"),
            })?;
        let conn = Arc::new(conn);
        let root = conn.setup().roots[screen].root;
        let atoms = Atoms::new(&*conn)
            .map_err(x11_err("intern atoms"))?
            .reply()
            .map_err(x11_err("intern atoms"))?;
        let window = conn.generate_id().map_err(x11_err("generate id"))?;
        conn.create_window(
            0,
            window,
            root,
            -10,
            -10,
            1,
            1,
            0,
            WindowClass::INPUT_ONLY,
            0,
            &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
        )
        .map_err(x11_err("CreateWindow"))?;
        conn.flush().map_err(x11_err("flush"))?;
        let text: Arc<Mutex<Option<Arc<String>>>> = Arc::default();
        let (tx, rx) = channel();
        let pump = Pump {
            conn: conn.clone(),
            window,
            atoms,
            text: text.clone(),
            reads: tx,
            transfers: HashMap::new(),
        };
        std::thread::Builder::new()
            .name("deskpilot-clipboard".to_string())
            .spawn(move || pump.run())
            .map_err(|e| Error::os("spawn clipboard thread", e))?;
        Ok(Host {
            conn,
            window,
            atoms,
            text,
            reads: Mutex::new(rx),
        })
    }

    fn owner(&self) -> Result<u32, Error> {
        Ok(self
            .conn
            .get_selection_owner(self.atoms.CLIPBOARD)
            .map_err(x11_err("GetSelectionOwner"))?
            .reply()
            .map_err(x11_err("GetSelectionOwner"))?
            .owner)
    }

    fn write(&self, text: &str) -> Result<(), Error> {
        *self.text.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(text.to_string()));
        self.conn
            .set_selection_owner(self.window, self.atoms.CLIPBOARD, x11rb::CURRENT_TIME)
            .map_err(x11_err("SetSelectionOwner"))?;
        if self.owner()? != self.window {
            return Err(Error::os(
                "SetSelectionOwner",
                "another client kept the CLIPBOARD selection",
            ));
        }
        Ok(())
    }

    fn read(&self) -> Result<Option<String>, Error> {
        let owner = self.owner()?;
        if owner == x11rb::NONE {
            return Ok(None);
        }
        if owner == self.window
            && let Some(text) = self.text.lock().unwrap_or_else(|e| e.into_inner()).clone()
        {
            return Ok(Some(text.as_str().to_string()));
        }
        let reads = self.reads.lock().unwrap_or_else(|e| e.into_inner());
        while reads.try_recv().is_ok() {}
        for (target, latin1) in [
            (self.atoms.UTF8_STRING, false),
            (AtomEnum::STRING.into(), true),
        ] {
            if let Some(bytes) = self.convert(&reads, target)? {
                return Ok(Some(if latin1 {
                    bytes.iter().map(|&b| b as char).collect()
                } else {
                    String::from_utf8_lossy(&bytes).into_owned()
                }));
            }
        }
        Ok(None)
    }

    /// Asks the owner for `target`; `None` when it has no such conversion.
    fn convert(&self, reads: &Receiver<Event>, target: u32) -> Result<Option<Vec<u8>>, Error> {
        let property = self.atoms.DESKPILOT_SELECTION;
        self.conn
            .delete_property(self.window, property)
            .map_err(x11_err("DeleteProperty"))?;
        self.conn
            .convert_selection(
                self.window,
                self.atoms.CLIPBOARD,
                target,
                property,
                x11rb::CURRENT_TIME,
            )
            .map_err(x11_err("ConvertSelection"))?;
        self.conn.flush().map_err(x11_err("flush"))?;
        let deadline = Instant::now() + READ_TIMEOUT;
        let notify = loop {
            match wait(reads, deadline)? {
                Event::SelectionNotify(n) if n.selection == self.atoms.CLIPBOARD => break n,
                _ => continue,
            }
        };
        if notify.property == x11rb::NONE {
            return Ok(None);
        }
        let first = self.take_property(false)?;
        if first.type_ != self.atoms.INCR {
            let reply = self.take_property(true)?;
            return Ok(Some(reply.value));
        }
        // INCR: deleting the property asks for the next chunk; an empty chunk ends it.
        self.conn
            .delete_property(self.window, property)
            .map_err(x11_err("DeleteProperty"))?;
        self.conn.flush().map_err(x11_err("flush"))?;
        let mut data = Vec::new();
        loop {
            match wait(reads, deadline)? {
                Event::PropertyNotify(p)
                    if p.atom == property && p.state == Property::NEW_VALUE =>
                {
                    let chunk = self.take_property(true)?;
                    self.conn.flush().map_err(x11_err("flush"))?;
                    if chunk.value.is_empty() {
                        return Ok(Some(data));
                    }
                    data.extend_from_slice(&chunk.value);
                }
                _ => continue,
            }
        }
    }

    fn take_property(
        &self,
        delete: bool,
    ) -> Result<x11rb::protocol::xproto::GetPropertyReply, Error> {
        self.conn
            .get_property(
                delete,
                self.window,
                self.atoms.DESKPILOT_SELECTION,
                AtomEnum::ANY,
                0,
                u32::MAX / 4,
            )
            .map_err(x11_err("GetProperty"))?
            .reply()
            .map_err(x11_err("GetProperty"))
    }
}

fn wait(reads: &Receiver<Event>, deadline: Instant) -> Result<Event, Error> {
    let left = deadline.saturating_duration_since(Instant::now());
    reads.recv_timeout(left).map_err(|_| {
        Error::os(
            "clipboard read",
            format!(
                "the clipboard owner did not answer within {} ms",
                READ_TIMEOUT.as_millis()
            ),
        )
    })
}

/// The event loop of the clipboard thread.
struct Pump {
    conn: Arc<RustConnection>,
    window: u32,
    atoms: Atoms,
    text: Arc<Mutex<Option<Arc<String>>>>,
    reads: Sender<Event>,
    transfers: HashMap<(u32, u32), Transfer>,
}

impl Pump {
    fn run(mut self) {
        loop {
            let event = match self.conn.wait_for_event() {
                Ok(e) => e,
                Err(e) => {
                    tracing::warn!("clipboard connection closed: {e}");
                    return;
                }
            };
            match event {
                Event::SelectionRequest(r) => {
                    if let Err(e) = self.answer(&r) {
                        tracing::debug!("clipboard request from {:#x} failed: {e}", r.requestor);
                    }
                }
                Event::SelectionClear(c) if c.selection == self.atoms.CLIPBOARD => {
                    tracing::debug!("another client took the clipboard");
                    *self.text.lock().unwrap_or_else(|e| e.into_inner()) = None;
                }
                Event::PropertyNotify(p)
                    if p.window != self.window && p.state == Property::DELETE =>
                {
                    self.advance(p.window, p.atom);
                }
                Event::PropertyNotify(p) if p.window != self.window => {}
                e @ (Event::SelectionNotify(_) | Event::PropertyNotify(_)) => {
                    let _ = self.reads.send(e);
                }
                _ => {}
            }
            let _ = self.conn.flush();
        }
    }

    fn answer(&mut self, r: &SelectionRequestEvent) -> Result<(), x11rb::errors::ReplyOrIdError> {
        let a = &self.atoms;
        // Obsolete clients pass no property: use the target's name.
        let property = if r.property == x11rb::NONE {
            r.target
        } else {
            r.property
        };
        let text = self.text.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut answered = x11rb::NONE;
        if let (Some(text), true) = (text, r.selection == a.CLIPBOARD) {
            if r.target == a.TARGETS {
                let targets = [
                    a.TARGETS,
                    a.UTF8_STRING,
                    a.TEXT_PLAIN_UTF8,
                    a.TEXT,
                    AtomEnum::STRING.into(),
                ];
                self.conn.change_property32(
                    PropMode::REPLACE,
                    r.requestor,
                    property,
                    AtomEnum::ATOM,
                    &targets,
                )?;
                answered = property;
            } else if [a.UTF8_STRING, a.TEXT_PLAIN_UTF8, a.TEXT].contains(&r.target) {
                let kind = if r.target == a.TEXT_PLAIN_UTF8 {
                    a.TEXT_PLAIN_UTF8
                } else {
                    a.UTF8_STRING
                };
                self.send(r.requestor, property, kind, text)?;
                answered = property;
            } else if r.target == u32::from(AtomEnum::STRING) {
                let latin1: String = text
                    .chars()
                    .map(|c| if (c as u32) < 256 { c } else { '?' })
                    .collect();
                let bytes: Vec<u8> = latin1.chars().map(|c| c as u8).collect();
                self.conn.change_property8(
                    PropMode::REPLACE,
                    r.requestor,
                    property,
                    AtomEnum::STRING,
                    &bytes,
                )?;
                answered = property;
            }
        }
        let notify = SelectionNotifyEvent {
            response_type: SELECTION_NOTIFY_EVENT,
            sequence: 0,
            time: r.time,
            requestor: r.requestor,
            selection: r.selection,
            target: r.target,
            property: answered,
        };
        self.conn
            .send_event(false, r.requestor, EventMask::NO_EVENT, notify)?;
        Ok(())
    }

    /// Writes `text` at once, or starts an `INCR` transfer when it is large.
    fn send(
        &mut self,
        requestor: u32,
        property: u32,
        kind: u32,
        text: Arc<String>,
    ) -> Result<(), x11rb::errors::ReplyOrIdError> {
        let limit = self.conn.maximum_request_bytes().saturating_sub(1024);
        if text.len() <= CHUNK.min(limit) {
            self.conn.change_property8(
                PropMode::REPLACE,
                requestor,
                property,
                kind,
                text.as_bytes(),
            )?;
            return Ok(());
        }
        self.conn.change_window_attributes(
            requestor,
            &ChangeWindowAttributesAux::new().event_mask(EventMask::PROPERTY_CHANGE),
        )?;
        self.conn.change_property32(
            PropMode::REPLACE,
            requestor,
            property,
            self.atoms.INCR,
            &[text.len() as u32],
        )?;
        self.transfers.insert(
            (requestor, property),
            Transfer {
                data: text,
                kind,
                offset: 0,
            },
        );
        Ok(())
    }

    /// The requestor deleted the property: write the next `INCR` chunk (empty at the end).
    fn advance(&mut self, requestor: u32, property: u32) {
        let Some(t) = self.transfers.get_mut(&(requestor, property)) else {
            return;
        };
        let end = (t.offset + CHUNK).min(t.data.len());
        let chunk = &t.data.as_bytes()[t.offset..end];
        let done = chunk.is_empty();
        let written =
            self.conn
                .change_property8(PropMode::REPLACE, requestor, property, t.kind, chunk);
        t.offset = end;
        if done || written.is_err() {
            self.transfers.remove(&(requestor, property));
        }
    }
}

impl Clipboard for X11Desktop {
    fn read_text(&self) -> Result<Option<String>, Error> {
        self.clipboard.get(&self.display)?.read()
    }

    fn write_text(&self, text: &str) -> Result<(), Error> {
        self.clipboard.get(&self.display)?.write(text)
    }
}

/// Owns the clipboard with `text` on `display` until another client takes it over, then
/// returns: what `deskpilot call clipboard_write` leaves running in the background, since an
/// X clipboard lives only as long as its owner. `ready` runs once the text is pasteable.
pub fn hold_clipboard(display: &str, text: &str, ready: impl FnOnce()) -> Result<(), Error> {
    let host = Host::start(display)?;
    host.write(text)?;
    ready();
    while host.owner()? == host.window {
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(())
}
