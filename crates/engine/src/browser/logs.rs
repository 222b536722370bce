//! What a page said and fetched, and the dialogs it raised: its console messages (by level,
//! since a mark), its requests (filtered by URL, since a mark), one request in full (headers,
//! status, body up to a cap), and answering an open JavaScript dialog.
//!
//! A known secret's value in a request's URL or form body is percent-encoded (`p%40ss+w0rd`),
//! a form the text scrubbing cannot see: each `name=value` pair whose decoded value holds one
//! is shown decoded, with the value read as `<secret NAME>`.

use base64::Engine as _;
use deskpilot_browser::cdp::{ConsoleMessage, Request};
use deskpilot_browser::page as cdp_page;
use deskpilot_types::{ErrorCode, redact};

use super::effects::dialog_words;
use super::{BrowserOutcome, PageInfo, coded, unavailable};
use crate::{error::Error, safety::Mutation, session::Session};

/// Console levels from the most to the least severe; a level filter keeps its own and those
/// before it.
const LEVELS: [&str; 5] = ["error", "warning", "info", "log", "debug"];

/// One request in full: what was sent and what came back.
#[derive(Debug, Clone)]
pub struct RequestDetail {
    pub request: Request,
    /// Its response body, cut at the cap (`None`: the browser kept none, e.g. a redirect).
    pub body: Option<String>,
    /// The body is base64 (a binary response).
    pub base64: bool,
    /// The body's whole length before the cut.
    pub body_len: usize,
}

/// `r` with a known secret in its URL's query or its form body read as `<secret NAME>`.
fn scrub_request(mut r: Request) -> Request {
    if !redact::any() {
        return r;
    }
    let (url, fragment) = match r.url.split_once('#') {
        Some((u, f)) => (u.to_string(), format!("#{f}")),
        None => (r.url.clone(), String::new()),
    };
    if let Some((path, query)) = url.split_once('?')
        && let Some(clean) = scrub_form(query)
    {
        r.url = format!("{path}?{clean}{fragment}");
    }
    if let Some(body) = r.post_data.as_deref().and_then(scrub_form) {
        r.post_data = Some(body);
    }
    r
}

/// `a=1&b=x%40y` with each pair whose decoded value (or name) holds a known secret shown
/// decoded and scrubbed; `None` when no pair does.
fn scrub_form(text: &str) -> Option<String> {
    let mut hit = false;
    let pairs: Vec<String> = text
        .split('&')
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let (dk, dv) = (form_decoded(k), form_decoded(v));
            if redact::contains_secret(&dv) || redact::contains_secret(&dk) {
                hit = true;
                format!("{}={}", redact::scrub(&dk), redact::scrub(&dv))
            } else {
                pair.to_string()
            }
        })
        .collect();
    hit.then(|| pairs.join("&"))
}

/// A form-encoded text decoded: `+` is a space, `%XX` a byte (the bytes read as UTF-8).
fn form_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Session {
    /// The page's console messages after mark `since` (0: all kept), at `level` or more severe
    /// ("" for every level); with the newest mark, for the next call.
    pub fn browser_console(
        &self,
        page: Option<&str>,
        level: &str,
        since: u64,
    ) -> Result<(PageInfo, Vec<ConsoleMessage>, u64), Error> {
        let level = level.trim().to_ascii_lowercase();
        let rank = |l: &str| LEVELS.iter().position(|x| *x == l);
        let keep = match level.as_str() {
            "" => LEVELS.len(),
            l => rank(l).ok_or_else(|| Error::InvalidArgument {
                message: format!("level: {l:?} is not one of {LEVELS:?}"),
            })?,
        };
        let (cdp, session, info) = self.page_any(page)?;
        let all = cdp.console(&session, since);
        let mark = cdp.log_mark(&session);
        let kept = all
            .into_iter()
            .filter(|m| rank(&m.level).is_none_or(|r| r <= keep))
            .collect();
        Ok((info, kept, mark))
    }

    /// The page's requests after mark `since` whose URL contains `filter` (any case).
    pub fn browser_requests(
        &self,
        page: Option<&str>,
        filter: &str,
        since: u64,
    ) -> Result<(PageInfo, Vec<Request>, u64), Error> {
        let (cdp, session, info) = self.page_any(page)?;
        let filter = filter.to_lowercase();
        let kept = cdp
            .requests(&session, since)
            .into_iter()
            .filter(|r| filter.is_empty() || r.url.to_lowercase().contains(&filter))
            .map(scrub_request)
            .collect();
        let mark = cdp.log_mark(&session);
        Ok((info, kept, mark))
    }

    /// Request number `seq` of the page (as [`Session::browser_requests`] numbers it) in full,
    /// its body cut at `max_bytes`.
    pub fn browser_request(
        &self,
        page: Option<&str>,
        seq: u64,
        max_bytes: usize,
    ) -> Result<(PageInfo, RequestDetail), Error> {
        let (cdp, session, info) = self.page_any(page)?;
        let request = cdp
            .requests(&session, seq.saturating_sub(1))
            .into_iter()
            .find(|r| r.seq == seq)
            .map(scrub_request)
            .ok_or_else(|| Error::InvalidArgument {
                message: format!(
                    "request {seq}: not among the page's kept requests; browser_log {{kind: \"network\"}} lists them"
                ),
            })?;
        let (body, base64) = if request.finished && request.failed.is_none() {
            match cdp_page::response_body(&cdp, &session, &request.id) {
                Ok((b, base64)) => (Some(b), base64),
                Err(_) => (None, false),
            }
        } else {
            (None, false)
        };
        let body_len = body.as_ref().map_or(0, |b| {
            if base64 {
                base64::engine::general_purpose::STANDARD
                    .decode(b)
                    .map_or(b.len(), |d| d.len())
            } else {
                b.len()
            }
        });
        let body = body.map(|b| {
            if b.len() <= max_bytes {
                return b;
            }
            let mut end = max_bytes;
            while !b.is_char_boundary(end) {
                end -= 1;
            }
            b[..end].to_string()
        });
        Ok((
            info,
            RequestDetail {
                request,
                body,
                base64,
                body_len,
            },
        ))
    }

    /// Answers the dialog open on the page: accept (with `text` for a prompt) or dismiss.
    pub fn browser_dialog(
        &self,
        page: Option<&str>,
        accept: bool,
        text: Option<&str>,
    ) -> Result<BrowserOutcome, Error> {
        let (cdp, session, info) = self.page_any(page)?;
        let Some(d) = cdp.dialog(&session) else {
            return Err(coded(
                ErrorCode::ElementNotFound,
                format!(
                    "no dialog is open on \"{}\" ({}); an action that opens one says so",
                    info.title, info.url
                ),
            ));
        };
        let verb = if accept { "accept" } else { "dismiss" };
        self.gate(
            Mutation::Other,
            &format!(
                "{verb} {} on \"{}\" ({}){}",
                dialog_words(&d).trim_end_matches(" is"),
                info.title,
                info.url,
                text.map_or(String::new(), |t| format!(
                    " answering {}",
                    crate::safety::quoted(t)
                ))
            ),
        )?;
        cdp_page::answer_dialog(&cdp, &session, accept, text.filter(|_| accept))
            .map_err(unavailable)?;
        // Closed once the browser says so.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while cdp.dialog(&session).is_some_and(|o| o.seq == d.seq)
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(15));
        }
        let closed = cdp.dialog(&session).is_none_or(|o| o.seq != d.seq);
        Ok(BrowserOutcome {
            detail: format!(
                "{verb}ed the {} dialog \"{}\"{}",
                d.kind,
                d.message,
                if closed {
                    ""
                } else {
                    " (the browser still shows it)"
                }
            ),
            page: info,
            changed: Some(closed),
            value: None,
            snapshot: None,
            mutation: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_percent_encoded_secret_in_a_form_is_scrubbed() {
        redact::register("FORM_PASS", "p@ss w0rd&!").unwrap();
        assert_eq!(form_decoded("p%40ss+w0rd%26%21"), "p@ss w0rd&!");
        assert_eq!(form_decoded("100%"), "100%");
        assert_eq!(form_decoded("%zz%E4%B8%AD"), "%zz中");
        assert_eq!(
            scrub_form("user=ada&pw=p%40ss+w0rd%26%21").as_deref(),
            Some("user=ada&pw=<secret FORM_PASS>")
        );
        assert_eq!(scrub_form("user=ada&pw=other"), None);
    }
}
