//! The page where a person types a secret deskpilot was asked to use but does not have: a
//! one-request-at-a-time HTTP endpoint on `127.0.0.1` (a fresh port per question), at an
//! address holding a random single-use token. The client opens it for the person (URL-mode
//! elicitation); the value goes from the person's browser to deskpilot and never crosses the
//! MCP channel.
//!
//! The same rules as the picker's page: `Host` must be the loopback address and port (DNS
//! rebinding), a POST must carry the page's own `Origin`, bodies are capped, there is no CORS,
//! and nothing is cached. The form takes a value of at least
//! [`deskpilot_types::redact::MIN_SECRET_CHARS`] characters and a "keep in my keyring" choice.

use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use crate::http::{self, Request, Response};

/// What the person gave.
pub struct Given {
    pub value: String,
    /// Keep it in the desktop keyring, not only for this session.
    pub keep: bool,
}

impl std::fmt::Debug for Given {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Given")
            .field("keep", &self.keep)
            .finish_non_exhaustive()
    }
}

/// One question for one secret, open until answered or dropped.
#[derive(Debug)]
pub struct SecretPage {
    listener: TcpListener,
    port: u16,
    token: String,
    name: String,
    purpose: String,
}

impl SecretPage {
    /// Opens the page for secret `name`, to go into `purpose`.
    pub fn open(name: &str, purpose: &str) -> std::io::Result<SecretPage> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        Ok(SecretPage {
            listener,
            port,
            token: crate::random_hex(24),
            name: name.to_string(),
            purpose: purpose.to_string(),
        })
    }

    /// The address to give the person.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/secret/{}", self.port, self.token)
    }

    /// Serves the page until the person submits a value, `deadline` passes (`Err`, saying so)
    /// or `stop` says to give up.
    pub fn wait(&self, deadline: Instant, stop: &dyn Fn() -> bool) -> Result<Given, String> {
        loop {
            if stop() {
                return Err("the question was withdrawn".to_string());
            }
            if Instant::now() >= deadline {
                return Err("nothing was entered on the page in time".to_string());
            }
            match self.listener.accept() {
                Ok((stream, _)) => {
                    if let Some(given) = self.serve(stream) {
                        return Ok(given);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(25));
                }
                Err(e) => return Err(format!("the page stopped: {e}")),
            }
        }
    }

    /// Answers one request; the value when it was a valid submission.
    fn serve(&self, mut stream: TcpStream) -> Option<Given> {
        let _ = stream.set_nonblocking(false);
        let (response, given) = match http::read(&mut stream) {
            Ok(req) => self.respond(&req),
            Err(refusal) => (refusal, None),
        };
        http::write(&mut stream, &response);
        given
    }

    fn respond(&self, req: &Request) -> (Response, Option<Given>) {
        let own = [
            format!("127.0.0.1:{}", self.port),
            format!("localhost:{}", self.port),
        ];
        if !req
            .header("host")
            .is_some_and(|h| own.iter().any(|o| o == h))
        {
            return (Response::refuse(403, "foreign Host"), None);
        }
        let origin = req.header("origin");
        if let Some(o) = origin
            && !own.iter().any(|h| o == format!("http://{h}"))
        {
            return (Response::refuse(403, "foreign Origin"), None);
        }
        let Some(token) = req.path.strip_prefix("/secret/") else {
            return (Response::refuse(404, "not found"), None);
        };
        if !http::same(token, &self.token) {
            return (Response::refuse(404, "not found"), None);
        }
        match req.method.as_str() {
            "GET" => (self.page(None), None),
            "POST" if origin.is_none() => (
                Response::refuse(403, "a POST needs the page's Origin"),
                None,
            ),
            "POST" => {
                let form = form_fields(&req.body);
                let value = form
                    .iter()
                    .find(|(k, _)| k == "value")
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default();
                let keep = form.iter().any(|(k, v)| k == "keep" && v == "on");
                let min = deskpilot_types::redact::MIN_SECRET_CHARS;
                if value.trim().chars().count() < min {
                    return (
                        self.page(Some(&format!(
                            "A secret has at least {min} characters; nothing was kept."
                        ))),
                        None,
                    );
                }
                (
                    Response::new(
                        200,
                        "text/html; charset=utf-8",
                        format!(
                            "<!doctype html><meta charset=utf-8><title>deskpilot</title>\
                             <p>deskpilot received secret <b>{}</b>{}. You can close this page.</p>",
                            escape(&self.name),
                            if keep {
                                " and keeps it in your keyring"
                            } else {
                                " for this session"
                            }
                        ),
                    ),
                    Some(Given { value, keep }),
                )
            }
            _ => (Response::refuse(405, "GET or POST"), None),
        }
    }

    /// The form, with `error` above it when the last submission was refused.
    fn page(&self, error: Option<&str>) -> Response {
        let body = format!(
            r#"<!doctype html><html><head><meta charset="utf-8"><title>deskpilot asks for a secret</title>
<style>body{{font:16px system-ui,sans-serif;max-width:36em;margin:3em auto}}input[type=password]{{width:100%;font-size:1.1em}}.e{{color:#b00}}</style></head>
<body><h1>Secret {name}</h1>
<p>An agent working through deskpilot wants to type the secret <b>{name}</b> into {purpose}.
The value goes to deskpilot only; the agent never sees it.</p>
{error}<form method="post"><p><input type="password" name="value" autocomplete="off" autofocus required aria-label="Value of {name}"></p>
<p><label><input type="checkbox" name="keep"> Keep it in my keyring (otherwise it is forgotten when deskpilot stops)</label></p>
<p><button type="submit">Give it to deskpilot</button></p></form></body></html>"#,
            name = escape(&self.name),
            purpose = escape(&self.purpose),
            error = error
                .map(|e| format!("<p class=\"e\">{}</p>", escape(e)))
                .unwrap_or_default(),
        );
        Response::new(200, "text/html; charset=utf-8", body).with(
            "Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'".into(),
        )
    }
}

/// `application/x-www-form-urlencoded` pairs.
fn form_fields(body: &[u8]) -> Vec<(String, String)> {
    String::from_utf8_lossy(body)
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (http::decode(k), http::decode(v))
        })
        .collect()
}

/// Text safe inside HTML.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};

    use super::*;

    fn send(port: u16, raw: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(raw.as_bytes()).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    #[test]
    fn the_page_takes_a_value_only_from_its_own_origin_and_token() {
        let page = SecretPage::open("MAIL_PASS", "Edit \"Password\" in <Sign in>").unwrap();
        let port = page.port;
        let token = page.token.clone();
        let waiter = std::thread::spawn(move || {
            page.wait(Instant::now() + Duration::from_secs(10), &|| false)
        });
        let host = format!("127.0.0.1:{port}");
        let got = send(
            port,
            &format!("GET /secret/{token} HTTP/1.1\r\nHost: {host}\r\n\r\n"),
        );
        assert!(got.starts_with("HTTP/1.1 200"), "{got}");
        assert!(
            got.contains("Secret MAIL_PASS") && got.contains("&lt;Sign in&gt;"),
            "{got}"
        );
        let wrong = send(
            port,
            &format!(
                "GET /secret/{}x HTTP/1.1\r\nHost: {host}\r\n\r\n",
                &token[1..]
            ),
        );
        assert!(wrong.starts_with("HTTP/1.1 404"), "{wrong}");
        let rebound = send(
            port,
            &format!("GET /secret/{token} HTTP/1.1\r\nHost: evil.example:{port}\r\n\r\n"),
        );
        assert!(rebound.starts_with("HTTP/1.1 403"), "{rebound}");
        let post = |origin: &str, body: &str| {
            send(
                port,
                &format!(
                    "POST /secret/{token} HTTP/1.1\r\nHost: {host}\r\n{origin}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                ),
            )
        };
        assert!(post("", "value=abcdefgh").starts_with("HTTP/1.1 403"));
        assert!(
            post("Origin: http://evil.example\r\n", "value=abcdefgh").starts_with("HTTP/1.1 403")
        );
        let short = post(&format!("Origin: http://{host}\r\n"), "value=abc");
        assert!(short.contains("at least 6 characters"), "{short}");
        let ok = post(
            &format!("Origin: http://{host}\r\n"),
            "value=p%40ss+w%C3%B6rd%21&keep=on",
        );
        assert!(
            ok.contains("received secret <b>MAIL_PASS</b> and keeps it"),
            "{ok}"
        );
        let given = waiter.join().unwrap().unwrap();
        assert_eq!(given.value, "p@ss wörd!");
        assert!(given.keep);
    }

    #[test]
    fn an_unanswered_page_gives_up_at_its_deadline() {
        let page = SecretPage::open("X_PASS", "a field").unwrap();
        let started = Instant::now();
        let err = page
            .wait(Instant::now() + Duration::from_millis(200), &|| false)
            .unwrap_err();
        assert!(err.contains("in time"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(2));
        assert!(page.url().starts_with("http://127.0.0.1:"));
    }
}
