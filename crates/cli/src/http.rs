//! `deskpilot serve --http ADDR`: MCP over Streamable HTTP at `/mcp`, for agents on another
//! machine or a fleet of them, each MCP session with its own engine session.
//!
//! A small hyper server rather than a web framework: three routes (`/mcp`, `/healthz`,
//! `/readyz`) and one gate (the bearer token, the session cap) are a few dozen lines, and hyper
//! is already what rmcp's HTTP types and a TLS stream plug into.
//!
//! - Every `/mcp` request carries `Authorization: Bearer <token>`, compared in constant time;
//!   otherwise `401` with `WWW-Authenticate: Bearer`. The token comes from `DESKPILOT_TOKEN`,
//!   `--token-file`, or is generated and written once to stderr with the URL; it is never
//!   logged. `--no-auth` exists only for a loopback bind.
//! - `Host` must be loopback or a name given with `--allow-host`; a present `Origin` must be
//!   the server's own (one of those names at its port) or one given with `--allow-origin`
//!   (DNS rebinding and cross-site requests are refused).
//! - Limits: the request body (`--max-body-bytes`, 413), open sessions (`--max-sessions`, 503
//!   with a JSON-RPC error), idle sessions closed (`--idle-timeout-secs`), a per-session queue
//!   (its sender waits: one slow session never holds up another).
//! - `/healthz` answers while the process runs; `/readyz` when the desktop answers. Neither
//!   needs the token, and neither says more than ready or not and why.
//! - SIGTERM / Ctrl-C: stop accepting, end the sessions, let in-flight requests finish within
//!   `--shutdown-grace-secs`, shut the engine down, exit 0. Pointer and key actions release
//!   what they press within the same engine call, so nothing stays held.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use deskpilot_engine::Engine;
use deskpilot_mcp::http::{HttpOptions, McpHttp, ResponseBody};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};

use crate::args::{DesktopArgs, ToolArgs};

/// `serve --http` and its options.
#[derive(Debug, Clone, clap::Args)]
pub struct HttpArgs {
    /// Serve MCP over Streamable HTTP at ADDR (e.g. 127.0.0.1:8765) instead of stdio; the
    /// endpoint is /mcp, with /healthz and /readyz beside it.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// Read the bearer token from this file when DESKPILOT_TOKEN is not set (with neither, one
    /// is generated and printed once to stderr).
    #[arg(long, value_name = "PATH", requires = "http")]
    pub token_file: Option<PathBuf>,
    /// No bearer token (only with a loopback ADDR).
    #[arg(long, requires = "http")]
    pub no_auth: bool,
    /// Also accept this Host (a name a proxy or a Kubernetes Service uses; `name` or
    /// `name:port`). Repeatable. Loopback names are always accepted.
    #[arg(long, value_name = "HOST", requires = "http")]
    pub allow_host: Vec<String>,
    /// Also accept requests whose Origin is this (`https://app.example.com:443`). Repeatable;
    /// the server's own origins (its host names at its port) are always accepted, every other
    /// Origin is refused.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub allow_origin: Vec<String>,
    /// TLS certificate chain (PEM); with --tls-key.
    #[arg(long, value_name = "PEM", requires_all = ["http", "tls_key"])]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key (PEM); with --tls-cert.
    #[arg(long, value_name = "PEM", requires_all = ["http", "tls_cert"])]
    pub tls_key: Option<PathBuf>,
    /// Most MCP sessions open at once.
    #[arg(long, default_value_t = 32, requires = "http")]
    pub max_sessions: usize,
    /// A session with no request for this many seconds is closed.
    #[arg(long, default_value_t = 600, requires = "http")]
    pub idle_timeout_secs: u64,
    /// Largest request body in bytes.
    #[arg(long, default_value_t = 4 * 1024 * 1024, requires = "http")]
    pub max_body_bytes: usize,
    /// At shutdown, how long in-flight requests may take to finish.
    #[arg(long, default_value_t = 10, requires = "http")]
    pub shutdown_grace_secs: u64,
}

/// Hosts accepted whatever `--allow-host` says.
const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1", "[::1]"];

/// What every connection's requests share.
struct State {
    mcp: McpHttp,
    engine: Arc<Engine>,
    /// `None` only with `--no-auth`.
    token: Option<String>,
    max_sessions: usize,
}

/// Equal in constant time for equal lengths (the length of a token is not a secret).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn text(status: StatusCode, body: &'static str) -> Response<ResponseBody> {
    let mut r = Response::new(Full::new(Bytes::from_static(body.as_bytes())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

fn json(status: StatusCode, value: &serde_json::Value) -> Response<ResponseBody> {
    let mut r = Response::new(Full::new(Bytes::from(value.to_string())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

/// A JSON-RPC error answer with an HTTP status (the id is unknown at this layer).
fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response<ResponseBody> {
    json(
        status,
        &serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": { "code": code, "message": message },
        }),
    )
}

impl State {
    fn authorized(&self, req: &Request<Incoming>) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        req.headers()
            .get(hyper::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .is_some_and(|given| same(given.trim().as_bytes(), token.as_bytes()))
    }

    /// `/readyz`: the desktop answers (monitors and windows read back), with the
    /// accessibility and OCR state in one word each.
    async fn ready(&self) -> Response<ResponseBody> {
        let engine = self.engine.clone();
        let probe =
            tokio::task::spawn_blocking(move || deskpilot_engine::Session::new(engine).readiness());
        match tokio::time::timeout(Duration::from_secs(5), probe).await {
            Ok(Ok(Ok(r))) => json(
                StatusCode::OK,
                &serde_json::json!({ "ready": true, "accessibility": r.accessibility, "ocr": r.ocr }),
            ),
            Ok(Ok(Err(e))) => json(
                StatusCode::SERVICE_UNAVAILABLE,
                &serde_json::json!({ "ready": false, "reason": e.code().as_str() }),
            ),
            _ => json(
                StatusCode::SERVICE_UNAVAILABLE,
                &serde_json::json!({ "ready": false, "reason": "TIMEOUT" }),
            ),
        }
    }

    async fn route(self: Arc<Self>, req: Request<Incoming>) -> Response<ResponseBody> {
        match req.uri().path() {
            "/healthz" => text(StatusCode::OK, "ok\n"),
            "/readyz" => self.ready().await,
            "/mcp" => {
                if !self.authorized(&req) {
                    let mut r = rpc_error(
                        StatusCode::UNAUTHORIZED,
                        -32001,
                        "Unauthorized: send the server's token as `Authorization: Bearer <token>`",
                    );
                    r.headers_mut().insert(
                        hyper::header::WWW_AUTHENTICATE,
                        hyper::header::HeaderValue::from_static("Bearer realm=\"deskpilot\""),
                    );
                    return r;
                }
                let opens_session = req.method() == hyper::Method::POST
                    && !req.headers().contains_key("mcp-session-id");
                if opens_session && self.mcp.sessions().await >= self.max_sessions {
                    return rpc_error(
                        StatusCode::SERVICE_UNAVAILABLE,
                        -32000,
                        "Too many MCP sessions are open on this server: close one (DELETE /mcp with its Mcp-Session-Id) or retry later",
                    );
                }
                let req = req.map(|b| b.map_err(|e| Box::new(e) as _).boxed_unsync());
                self.mcp.handle(req).await
            }
            _ => text(
                StatusCode::NOT_FOUND,
                "Not found: MCP is at /mcp (health at /healthz and /readyz)\n",
            ),
        }
    }
}

/// The token: `DESKPILOT_TOKEN`, the file, or a new random one (and whether it was made here).
fn token(args: &HttpArgs) -> anyhow::Result<(String, bool)> {
    if let Ok(t) = std::env::var("DESKPILOT_TOKEN")
        && !t.trim().is_empty()
    {
        return Ok((t.trim().to_string(), false));
    }
    if let Some(path) = &args.token_file {
        let t = std::fs::read_to_string(path)
            .with_context(|| format!("reading the token file {}", path.display()))?;
        anyhow::ensure!(
            !t.trim().is_empty(),
            "the token file {} is empty",
            path.display()
        );
        return Ok((t.trim().to_string(), false));
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness for a token: {e}"))?;
    Ok((bytes.iter().map(|b| format!("{b:02x}")).collect(), true))
}

fn tls(args: &HttpArgs) -> anyhow::Result<Option<tokio_rustls::TlsAcceptor>> {
    use tokio_rustls::rustls;
    use tokio_rustls::rustls::pki_types::pem::PemObject as _;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) else {
        return Ok(None);
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("reading {}", cert.display()))?
        .collect::<Result<_, _>>()
        .with_context(|| format!("parsing the certificates in {}", cert.display()))?;
    anyhow::ensure!(!chain.is_empty(), "no certificate in {}", cert.display());
    let key = PrivateKeyDer::from_pem_file(key)
        .with_context(|| format!("reading the private key in {}", key.display()))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .context("TLS protocol versions")?
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .context("the TLS certificate and key do not fit together")?;
    let mut config = config;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Some(tokio_rustls::TlsAcceptor::from(Arc::new(config))))
}

/// The origins a browser page served by this server itself sends: every name the server
/// answers to (`hosts`: the loopback names and `--allow-host`) at its bound port, and without
/// the port where it is the scheme's default.
fn own_origins(scheme: &str, port: u16, hosts: &[String]) -> Vec<String> {
    let default_port = matches!((scheme, port), ("http", 80) | ("https", 443));
    let mut origins = Vec::new();
    for host in hosts {
        // A bare IPv6 address is written in brackets in an origin.
        let host = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]")
        } else {
            host.clone()
        };
        let origin = format!("{scheme}://{host}:{port}");
        if !origins.contains(&origin) {
            origins.push(origin);
        }
        if default_port {
            origins.push(format!("{scheme}://{host}"));
        }
    }
    origins
}

/// Serves `profile` over HTTP at `args.http` until a signal; exit 0 after a clean shutdown.
pub fn run(desktop: &DesktopArgs, tools: &ToolArgs, args: &HttpArgs) -> anyhow::Result<ExitCode> {
    let addr = args.http.context("serve --http needs an address")?;
    let loopback = addr.ip().is_loopback();
    anyhow::ensure!(
        !args.no_auth || loopback,
        "--no-auth only binds a loopback address (127.0.0.1 or ::1), not {addr}: anyone who can reach {addr} could drive this desktop"
    );
    let profile = crate::serve::profile(tools)?;
    let acceptor = tls(args)?;
    let token = if args.no_auth {
        None
    } else {
        Some(token(args)?)
    };
    let (desktop, session) = crate::platform::connect(desktop)?;
    let (engine, identity, filter) = crate::serve::engine(desktop, tools)?;
    crate::platform::supervise(&session, &engine);
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
    hosts.extend(args.allow_host.iter().cloned());
    let runtime = crate::runtime()?;
    // Bound before the endpoint is built: the server's own origins carry its port.
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(addr))
        .with_context(|| format!("binding {addr}"))?;
    let bound = listener.local_addr()?;
    let scheme = if acceptor.is_some() { "https" } else { "http" };
    let mut origins = own_origins(scheme, bound.port(), &hosts);
    origins.extend(args.allow_origin.iter().cloned());
    let options = HttpOptions {
        allowed_hosts: hosts,
        allowed_origins: origins,
        max_body_bytes: args.max_body_bytes,
        idle_timeout: Duration::from_secs(args.idle_timeout_secs.max(1)),
        queue: 16,
        cancel: cancel.clone(),
    };
    let mcp = (profile.http)(engine.clone(), identity, &filter, &options);
    let outcome = runtime.block_on(async {
        {
            use std::io::Write as _;
            // Once, on stderr, outside the log: the token is never a log line.
            let mut err = std::io::stderr().lock();
            writeln!(err, "deskpilot: MCP ({}) at {scheme}://{bound}/mcp", profile.name)?;
            match &token {
                Some((t, true)) => writeln!(err, "deskpilot: bearer token (generated): {t}")?,
                Some((_, false)) => writeln!(err, "deskpilot: bearer token from the environment or --token-file")?,
                None => writeln!(err, "deskpilot: no authentication (--no-auth, loopback only)")?,
            }
        }
        if !loopback && acceptor.is_none() {
            tracing::warn!(
                %bound,
                "serving HTTP without TLS on a non-loopback address: the bearer token travels in clear unless a proxy terminates TLS (--tls-cert / --tls-key)"
            );
        }
        tracing::info!(profile = profile.name, %bound, tls = acceptor.is_some(), "serving MCP over Streamable HTTP");
        let state = Arc::new(State {
            mcp,
            engine: engine.clone(),
            token: token.map(|(t, _)| t),
            max_sessions: args.max_sessions.max(1),
        });
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        let signal = crate::platform::shutdown_signal();
        tokio::pin!(signal);
        let stopped_by = loop {
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                s = &mut signal => break s,
            };
            let _ = stream.set_nodelay(true);
            let state = state.clone();
            let service = hyper::service::service_fn(move |req| {
                let state = state.clone();
                async move { Ok::<_, Infallible>(state.route(req).await) }
            });
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            match &acceptor {
                None => {
                    let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                    let conn = graceful.watch(conn.into_owned());
                    tokio::spawn(async move {
                        if let Err(e) = conn.await {
                            tracing::debug!(%peer, error = %e, "connection ended");
                        }
                    });
                }
                Some(acceptor) => {
                    let acceptor = acceptor.clone();
                    let watcher = graceful.watcher();
                    tokio::spawn(async move {
                        let stream = match tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream)).await {
                            Ok(Ok(s)) => s,
                            Ok(Err(e)) => {
                                tracing::debug!(%peer, error = %e, "TLS handshake failed");
                                return;
                            }
                            Err(_) => {
                                tracing::debug!(%peer, "TLS handshake timed out");
                                return;
                            }
                        };
                        let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                        if let Err(e) = watcher.watch(conn.into_owned()).await {
                            tracing::debug!(%peer, error = %e, "connection ended");
                        }
                    });
                }
            }
        };
        tracing::info!(signal = stopped_by, "stopping: no new requests; in-flight ones may finish");
        drop(listener);
        cancel.cancel();
        let grace = Duration::from_secs(args.shutdown_grace_secs);
        if tokio::time::timeout(grace, graceful.shutdown()).await.is_err() {
            tracing::warn!(?grace, "in-flight requests did not finish within the grace period");
        }
        anyhow::Ok(())
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    engine.shutdown();
    outcome.map(|()| ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
        assert!(!same(b"", b"a"));
    }

    #[test]
    fn own_origins_are_every_served_name_at_the_bound_port() {
        let hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
        assert_eq!(
            own_origins("http", 8931, &hosts),
            [
                "http://localhost:8931",
                "http://127.0.0.1:8931",
                "http://[::1]:8931"
            ]
        );
        let origins = own_origins("https", 443, &["desk.example".to_string()]);
        assert_eq!(
            origins,
            ["https://desk.example:443", "https://desk.example"]
        );
    }
}
