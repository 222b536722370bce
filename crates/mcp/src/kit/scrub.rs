//! The last step before bytes reach a client: every known secret value becomes `<secret NAME>`
//! ([`deskpilot_types::redact`]) in everything the server sends — results, errors,
//! notifications, task results, resources, prompts — over stdio and over HTTP alike.
//!
//! Scrubbing at the transport instead of in each handler means no path can forget it. The
//! values' JSON-escaped forms are registered too, so a value inside a JSON string is found.
//! With no secret known, bytes pass through untouched and unbuffered.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use deskpilot_types::redact;
use tokio::io::AsyncWrite;

/// `bytes` scrubbed (JSON-RPC is UTF-8; anything else passes as it is).
pub fn bytes(bytes: Bytes) -> Bytes {
    if !redact::any() {
        return bytes;
    }
    match std::str::from_utf8(&bytes) {
        Ok(text) => match redact::scrub(text) {
            std::borrow::Cow::Borrowed(_) => bytes,
            std::borrow::Cow::Owned(clean) => Bytes::from(clean),
        },
        Err(_) => bytes,
    }
}

/// A writer of newline-delimited JSON-RPC (the stdio transport) that scrubs each message
/// whole: it holds a line until its newline, so a value is never split between two writes.
#[derive(Debug)]
pub struct ScrubbedWriter<W> {
    inner: W,
    /// The message being written, up to its newline.
    line: Vec<u8>,
    /// Scrubbed bytes not yet taken by `inner`.
    out: Vec<u8>,
    /// How much of `out` `inner` took.
    sent: usize,
}

impl<W> ScrubbedWriter<W> {
    pub fn new(inner: W) -> Self {
        ScrubbedWriter {
            inner,
            line: Vec::new(),
            out: Vec::new(),
            sent: 0,
        }
    }
}

impl<W: AsyncWrite + Unpin> ScrubbedWriter<W> {
    /// Writes what `out` holds; `Ready(Ok)` once all of it went.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while self.sent < self.out.len() {
            let n = std::task::ready!(
                Pin::new(&mut self.inner).poll_write(cx, &self.out[self.sent..])
            )?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.out.clear();
        self.sent = 0;
        Poll::Ready(Ok(()))
    }

    /// Moves every complete line of `line` into `out`, scrubbed.
    fn take_lines(&mut self) {
        let Some(end) = self.line.iter().rposition(|b| *b == b'\n') else {
            return;
        };
        let rest = self.line.split_off(end + 1);
        let whole = std::mem::replace(&mut self.line, rest);
        self.out.extend_from_slice(&bytes(Bytes::from(whole)));
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for ScrubbedWriter<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        // What earlier messages left goes first; a slow reader slows the writer down.
        std::task::ready!(this.drain(cx))?;
        if !redact::any() && this.line.is_empty() {
            return Pin::new(&mut this.inner).poll_write(cx, buf);
        }
        this.line.extend_from_slice(buf);
        this.take_lines();
        // Best effort now; `poll_flush` finishes it.
        if let Poll::Ready(Err(e)) = this.drain(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        std::task::ready!(this.drain(cx))?;
        if !this.line.is_empty() {
            // A flush without a newline: the message ends here.
            let whole = std::mem::take(&mut this.line);
            this.out.extend_from_slice(&bytes(Bytes::from(whole)));
            std::task::ready!(this.drain(cx))?;
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        std::task::ready!(self.as_mut().poll_flush(cx))?;
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt as _;

    use super::*;

    #[tokio::test]
    async fn a_value_split_across_writes_is_still_scrubbed() {
        redact::register("WRITER_PASS", "split\"value-42").unwrap();
        let mut w = ScrubbedWriter::new(Vec::new());
        let msg = serde_json::json!({ "text": "got split\"value-42 back" }).to_string() + "\n";
        let (a, b) = msg.split_at(msg.find("value").unwrap());
        w.write_all(a.as_bytes()).await.unwrap();
        w.write_all(b.as_bytes()).await.unwrap();
        w.write_all(b"{\"tail\":1}").await.unwrap();
        w.flush().await.unwrap();
        let out = String::from_utf8(w.inner.clone()).unwrap();
        assert_eq!(
            out,
            "{\"text\":\"got <secret WRITER_PASS> back\"}\n{\"tail\":1}"
        );
        assert_eq!(
            bytes(Bytes::from_static(b"x split\"value-42")),
            Bytes::from_static(b"x <secret WRITER_PASS>")
        );
    }
}
