"""A minimal MCP Streamable HTTP client on Python's standard library (no SDK, nothing to install).

POST /mcp with a JSON-RPC message; the answer is either JSON or an event stream whose `data:`
lines carry JSON-RPC messages. `initialize` returns the session id in `Mcp-Session-Id`.
"""

import http.client
import json

PROTOCOL = "2025-11-25"


class HttpError(Exception):
    def __init__(self, status, body):
        super().__init__(f"HTTP {status}: {body[:300]!r}")
        self.status = status
        self.body = body


def request(host, port, method, path, body=None, headers=None, timeout=30):
    """One HTTP request on a fresh connection; returns (status, headers, body bytes)."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def parse_messages(content_type, body):
    """The JSON-RPC messages of an answer: one JSON object, or the `data:` events of a stream."""
    text = body.decode("utf-8")
    if content_type.startswith("application/json"):
        return [json.loads(text)] if text.strip() else []
    messages, data = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        elif line == "":
            if data and "".join(data).strip():
                messages.append(json.loads("\n".join(data)))
            data = []
    return messages


class Session:
    def __init__(self, host, port, token):
        self.host, self.port, self.token = host, port, token
        self.session_id = None
        self.next_id = 0

    def headers(self):
        h = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Host": f"127.0.0.1:{self.port}",
        }
        if self.token is not None:
            h["Authorization"] = f"Bearer {self.token}"
        if self.session_id:
            h["Mcp-Session-Id"] = self.session_id
            h["Mcp-Protocol-Version"] = PROTOCOL
        return h

    def post(self, message, timeout=60):
        status, headers, body = request(
            self.host, self.port, "POST", "/mcp", json.dumps(message).encode(), self.headers(), timeout
        )
        if status >= 300:
            raise HttpError(status, body)
        return headers, parse_messages(headers.get("content-type", ""), body)

    def call(self, method, params=None, timeout=60):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        headers, messages = self.post(msg, timeout)
        for m in messages:
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: JSON-RPC error {m['error']}")
                return headers, m["result"]
        raise RuntimeError(f"{method}: no answer with id {self.next_id} in {messages!r}")

    def initialize(self):
        headers, result = self.call(
            "initialize",
            {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "image-test", "version": "1"}},
        )
        self.session_id = headers.get("mcp-session-id")
        if not self.session_id:
            raise RuntimeError("initialize answered without an Mcp-Session-Id header")
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def tool(self, name, arguments=None, timeout=90):
        _, result = self.call("tools/call", {"name": name, "arguments": arguments or {}}, timeout)
        return result
