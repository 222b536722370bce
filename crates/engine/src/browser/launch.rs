//! A session's browsers come and go: launching the installed Chromium (on this desktop, or
//! headless) with a throw-away profile, attaching to a browser or Electron app by its DevTools
//! port or process, finding DevTools ports open on this machine, waiting for a page to load,
//! and closing (a launched browser ends with its profile; an attached one is only detached).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use deskpilot_browser::cdp::Connection;
use deskpilot_browser::launch::{self, LaunchOptions, Launched};
use deskpilot_browser::{page as cdp_page, script, target as cdp_target};
use deskpilot_types::ErrorCode;

use super::pages::{Browser, pages_of};
use super::{BrowserInfo, CALL, coded, lock, unavailable};
use crate::limits::{self, PAGE_LOAD_MS};
use crate::{error::Error, safety::Mutation, session::Session};

/// How long a launch may take to announce its endpoint.
const START: Duration = Duration::from_secs(30);

/// How often a page is asked whether it has loaded.
const LOAD_POLL: Duration = Duration::from_millis(30);

/// The ports of `ports` on which a DevTools endpoint answers on 127.0.0.1 (any browser or
/// Electron app started with `--remote-debugging-port`), read-only.
pub fn devtools_ports(ports: std::ops::RangeInclusive<u16>) -> Vec<u16> {
    ports
        .filter(|p| launch::endpoint(*p, Duration::from_millis(300)).is_ok())
        .collect()
}

impl Session {
    fn add_browser(
        &self,
        cdp: Connection,
        launched: Option<Launched>,
        port: Option<u16>,
        headless: bool,
    ) -> Result<BrowserInfo, Error> {
        let shared = self.browsers();
        let mut b = lock(&shared);
        b.next += 1;
        let id = b.next;
        b.list.push(Browser {
            id,
            headless,
            cdp: Arc::new(cdp),
            launched,
            port,
            pages: HashMap::new(),
        });
        drop(b);
        let info = self.browser_info(id)?;
        if let Some(first) = info.pages.first() {
            lock(&shared).current = Some((id, first.id.clone()));
        }
        Ok(info)
    }

    fn browser_info(&self, id: u32) -> Result<BrowserInfo, Error> {
        let shared = self.browsers();
        let (cdp, pid, launched, port) = {
            let b = lock(&shared);
            let br = b
                .list
                .iter()
                .find(|x| x.id == id)
                .ok_or_else(|| coded(ErrorCode::PageNotFound, format!("no browser {id}")))?;
            (
                br.cdp.clone(),
                br.launched.as_ref().map(Launched::pid),
                br.launched.is_some(),
                br.port,
            )
        };
        Ok(BrowserInfo {
            id,
            pid,
            launched,
            port,
            pages: pages_of(&cdp, id)?,
            window: None,
        })
    }

    /// Launches the installed Chromium on `url` (on this desktop, or headless) with a
    /// throw-away profile.
    pub fn browser_launch(&self, url: &str, headless: bool) -> Result<BrowserInfo, Error> {
        self.browser_launch_with(url, headless, None, 0)
    }

    /// [`Session::browser_launch`] with a browser of the caller's choice (`program`) and a fixed
    /// DevTools `port` (0: any).
    pub fn browser_launch_with(
        &self,
        url: &str,
        headless: bool,
        program: Option<&std::path::Path>,
        port: u16,
    ) -> Result<BrowserInfo, Error> {
        let url = if url.trim().is_empty() {
            "about:blank"
        } else {
            url.trim()
        };
        self.gate(
            Mutation::Launch,
            &format!("launch a browser on {}", crate::safety::quoted(url)),
        )?;
        // The browser starts on a blank page that is attached, with its network events on,
        // before it goes to `url`: the document request of `url` itself is then logged (a
        // page attached after its first navigation never sees it).
        let launched = launch::launch(&LaunchOptions {
            url: "about:blank".to_string(),
            headless,
            program: program.map(std::path::Path::to_path_buf),
            port,
            env: self.desktop().window_control.launch_env(),
            timeout: START,
        })
        .map_err(unavailable)?;
        let cdp = Connection::open(&launched.ws_url, CALL).map_err(unavailable)?;
        // The first page appears shortly after the endpoint does.
        let deadline = Instant::now() + Duration::from_secs(10);
        while pages_of(&cdp, 0)?.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let pid = launched.pid();
        // ws://127.0.0.1:PORT/devtools/browser/…
        let port = launched
            .ws_url
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next()?.parse::<u16>().ok());
        let mut info = self.add_browser(cdp, Some(launched), port, headless)?;
        if url != "about:blank" && !info.pages.is_empty() {
            let (cdp, session, _) = self.page_any(None)?;
            // A URL the browser cannot load shows its error page, as it would when given on
            // the command line.
            let _ = cdp_page::navigate(&cdp, &session, url).map_err(unavailable)?;
            wait_loaded(&cdp, &session);
            info.pages = pages_of(&cdp, info.id)?;
        }
        if !headless {
            // Its window maps a moment after its first page exists.
            let deadline = Instant::now() + Duration::from_secs(10);
            while info.window.is_none() && Instant::now() < deadline {
                info.window = self
                    .list_windows(&crate::engine::WindowFilter::default())
                    .ok()
                    .and_then(|w| w.into_iter().find(|w| w.pid == Some(pid)));
                if info.window.is_none() {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
        Ok(info)
    }

    /// Attaches to a browser (or Electron app) listening on DevTools `port`, or to the one
    /// owning the process `pid` (its `--remote-debugging-port`).
    pub fn browser_attach(
        &self,
        port: Option<u16>,
        pid: Option<u32>,
    ) -> Result<BrowserInfo, Error> {
        let port = match (port, pid) {
            (Some(p), _) => p,
            (None, Some(pid)) => launch::debug_port_of(pid).ok_or_else(|| {
                coded(
                    ErrorCode::BrowserUnavailable,
                    format!(
                        "process {pid} was not started with --remote-debugging-port; restart it with --remote-debugging-port=9222 (Electron apps too) and attach by port"
                    ),
                )
            })?,
            (None, None) => {
                return Err(Error::InvalidArgument {
                    message: "pass port (the browser's --remote-debugging-port) or window_id".into(),
                });
            }
        };
        let ws = launch::endpoint(port, Duration::from_secs(5)).map_err(unavailable)?;
        let cdp = Connection::open(&ws, CALL).map_err(unavailable)?;
        self.add_browser(cdp, None, Some(port), false)
    }

    /// Waits up to `within` (clamped to [`PAGE_LOAD_MS`]) for the page `page` names (default:
    /// the one this client used last) to finish loading — and, when `past_blank`, to be past
    /// the blank page a browser shows before it starts on its URL. Whether it did; a page that
    /// cannot be reached has not. Read-only: nothing is gated.
    pub fn browser_wait_loaded(
        &self,
        page: Option<&str>,
        within: Duration,
        past_blank: bool,
    ) -> bool {
        let within = limits::clamp_duration(PAGE_LOAD_MS, within);
        match self.page_any(page) {
            Ok((cdp, session, _)) => loaded_within(&cdp, &session, within, past_blank),
            Err(_) => false,
        }
    }

    /// Closes a browser this client launched (its process and profile go), or detaches from
    /// one it attached to (left running). `None`: every browser of this client.
    pub fn browser_close(&self, browser: Option<u32>) -> Result<Vec<(u32, bool)>, Error> {
        let shared = self.browsers();
        let ids: Vec<u32> = {
            let b = lock(&shared);
            b.list
                .iter()
                .filter(|x| browser.is_none_or(|id| id == x.id))
                .map(|x| x.id)
                .collect()
        };
        if ids.is_empty() {
            return Err(coded(
                ErrorCode::PageNotFound,
                "no such browser in this session",
            ));
        }
        self.gate(
            Mutation::CloseWindow,
            &format!(
                "close browser{} {ids:?}",
                if ids.len() == 1 { "" } else { "s" }
            ),
        )?;
        let mut done = Vec::new();
        let taken: Vec<Browser> = {
            let mut b = lock(&shared);
            let (take, keep): (Vec<Browser>, Vec<Browser>) = std::mem::take(&mut b.list)
                .into_iter()
                .partition(|x| ids.contains(&x.id));
            b.list = keep;
            if b.current.as_ref().is_some_and(|c| ids.contains(&c.0)) {
                b.current = None;
            }
            take
        };
        for br in taken {
            let launched = br.launched.is_some();
            if launched {
                let _ = cdp_target::close_browser(&br.cdp, Duration::from_secs(3));
            }
            done.push((br.id, launched));
            drop(br); // a launched browser is killed and its profile removed here
        }
        Ok(done)
    }
}

/// Waits up to the protocol call's time for the document to finish loading.
pub(super) fn wait_loaded(cdp: &Connection, session: &str) {
    loaded_within(cdp, session, CALL, false);
}

/// Whether the document finished loading (past `about:blank`, when `past_blank`) within
/// `within`.
fn loaded_within(cdp: &Connection, session: &str, within: Duration, past_blank: bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        let loaded = if past_blank {
            script::loaded_past_blank(cdp, session)
        } else {
            script::loaded(cdp, session)
        };
        if loaded {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(LOAD_POLL);
    }
}
