#!/usr/bin/env python3
"""Runs the container image's entrypoint from its root filesystem in fresh namespaces and drives it
over MCP (Streamable HTTP) from outside, as an orchestrator and a client would.

    image_test.py --bundle DIR [--containerfile deploy/Containerfile] [--logs DIR]

DIR is an unpacked OCI bundle (`umoci unpack`): DIR/config.json says what to run (the image's
entrypoint, user, environment, working directory), DIR/rootfs is the root filesystem.

The server runs like a container without a container engine (none can run here): `unshare`
gives it new mount, PID, UTS, IPC and network namespaces; the root filesystem is mounted
read-only, with /proc, a minimal /dev, tmpfs on /tmp and the home directory, and the token as a
read-only file on a tmpfs at /var/run/secrets/deskpilot (as a Kubernetes secret volume is);
`chroot --userspec` then starts the entrypoint as the image's user (uid 10001) with
no_new_privs. The entrypoint is the first process of its PID namespace, as in a container.

The test itself joins only the server's network namespace (setns), so it reaches the server
over that namespace's loopback at the port the entrypoint binds, as a port-forward would;
nothing else on the machine can reach it, and no port of the machine is taken.

Checks: the entrypoint in the bundle is the Containerfile's; /readyz refuses or answers 503
until the desktop is up, then 200 (the sequence is printed); a wrong or missing token gets 401;
tools/list; every process in the namespace runs as the image's user; a shell in the desktop
starts xmessage (x11-utils); a PNG screenshot shows it; OCR (Tesseract inside the image) reads
its text; a click on its button closes the window and xmessage reports that button's exit code;
SIGTERM ends the server with status 0 within the shutdown grace period; nothing is written to
stdout; no mount is left behind.
"""

import argparse
import base64
import ctypes
import errno
import json
import os
import re
import secrets
import signal
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mcp_http  # noqa: E402

CLONE_NEWNET = 0x40000000
SECRET_DIR = "/run/secrets/deskpilot"  # /var/run is a link to /run
FIXTURE_TITLE = "deskpilot image test"
FIXTURE_EXIT = 7  # xmessage exits with the value of the button pressed


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)
    print(f"ok: {what}", flush=True)


def poll(what, timeout, probe, pause=0.05):
    """Calls probe until it returns something truthy; fails with `what` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise Failure(f"timed out after {timeout} s waiting for {what}")
        time.sleep(pause)


# --- what to run -------------------------------------------------------------------------------


def containerfile_config(path):
    """ENTRYPOINT, USER, STOPSIGNAL and EXPOSE of the final stage of a Containerfile."""
    text = re.sub(r"\\\n", " ", Path(path).read_text())
    stages = re.split(r"(?im)^FROM\s", text)
    final = stages[-1]
    out = {}
    for line in final.splitlines():
        line = line.strip()
        m = re.match(r"(?i)^(ENTRYPOINT|USER|STOPSIGNAL|EXPOSE)\s+(.*)$", line)
        if m:
            key, value = m.group(1).upper(), m.group(2).strip()
            out[key] = json.loads(value) if key == "ENTRYPOINT" else value
    return out


def bundle_config(bundle):
    config = json.loads((Path(bundle) / "config.json").read_text())
    process = config["process"]
    return {
        "args": process["args"],
        "env": process.get("env", []),
        "cwd": process.get("cwd", "/"),
        "uid": process["user"]["uid"],
        "gid": process["user"]["gid"],
        "stopsignal": config.get("annotations", {}).get("org.opencontainers.image.stopSignal"),
        "exposed": config.get("annotations", {}).get("org.opencontainers.image.exposedPorts"),
    }


# The namespaces' first process: host tools set up the mounts, then chroot starts the entrypoint
# as the image's user. Arguments: rootfs, token file, uid, gid, cwd, then env -i's assignments
# (NAME=VALUE) and the command.
SETUP = r"""
set -eu
root=$1 token=$2 uid=$3 gid=$4 cwd=$5
shift 5
ip link set lo up
hostname deskpilot
mount --bind "$root" "$root"
mount -o remount,bind,ro,nosuid,nodev "$root"
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
mount -t tmpfs -o nosuid,noexec,mode=755,size=64k tmpfs "$root/dev"
for n in null zero full random urandom tty; do
    touch "$root/dev/$n"
    mount --bind "/dev/$n" "$root/dev/$n"
done
ln -s /proc/self/fd "$root/dev/fd"
ln -s /proc/self/fd/0 "$root/dev/stdin"
ln -s /proc/self/fd/1 "$root/dev/stdout"
ln -s /proc/self/fd/2 "$root/dev/stderr"
mkdir "$root/dev/pts" "$root/dev/shm"
mount -t devpts -o newinstance,nosuid,noexec,ptmxmode=0666,mode=0620 devpts "$root/dev/pts"
ln -s pts/ptmx "$root/dev/ptmx"
mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs "$root/dev/shm"
mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs "$root/tmp"
mount -t tmpfs -o nosuid,nodev,mode=0700,uid="$uid",gid="$gid" tmpfs "$root/home/deskpilot"
mount -t tmpfs -o nosuid,nodev,noexec,mode=0755,size=64k tmpfs "$root/run/secrets/deskpilot"
touch "$root/run/secrets/deskpilot/token"
mount --bind -o ro "$token" "$root/run/secrets/deskpilot/token"
exec setpriv --no-new-privs chroot --userspec="$uid:$gid" --groups="$gid" "$root" /usr/bin/env -i -C "$cwd" "$@"
"""


def children(pid):
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def join_netns(pid):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns(CLONE_NEWNET)")
    finally:
        os.close(fd)


def processes_in_pidns(pid):
    """(pid, name, real uid, effective uid) of every process in pid's PID namespace."""
    ns = os.readlink(f"/proc/{pid}/ns/pid")
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "ns/pid") != ns:
                continue
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        uids = fields["Uid"].split()
        found.append((int(entry.name), fields["Name"].strip(), int(uids[0]), int(uids[1])))
    return sorted(found)


# --- PNG ---------------------------------------------------------------------------------------


def png_pixels(data):
    """Width, height and the distinct colours of an 8-bit RGB/RGBA PNG (stdlib only)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise Failure("the screenshot is not a PNG")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = ihdr
    if depth != 8 or colour not in (2, 6) or interlace:
        raise Failure(f"unexpected PNG format: depth {depth}, colour type {colour}, interlace {interlace}")
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours = {}
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        for x in range(0, stride, bpp):
            key = bytes(line[x : x + 3])
            colours[key] = colours.get(key, 0) + 1
        prev = line
    return width, height, colours


# --- the test ----------------------------------------------------------------------------------


def structured(result):
    if result.get("isError"):
        raise Failure(f"tool error: {result['content'][0].get('text', '')[:500]}")
    return result.get("structuredContent") or {}


def text_of(result):
    return "\n".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")


def run(args):
    logs = Path(args.logs).resolve()
    logs.mkdir(parents=True, exist_ok=True)
    bundle = Path(args.bundle).resolve()
    rootfs = bundle / "rootfs"
    cfg = bundle_config(bundle)

    # The image's configuration is the Containerfile's.
    cf = containerfile_config(args.containerfile)
    check(cfg["args"] == cf.get("ENTRYPOINT"), f"the image's entrypoint is the Containerfile's: {cfg['args']}")
    check(f"{cfg['uid']}:{cfg['gid']}" == cf.get("USER") and cfg["uid"] != 0,
          f"the image runs as {cfg['uid']}:{cfg['gid']}, the Containerfile's USER, not root")
    check(cfg["stopsignal"] == cf.get("STOPSIGNAL") == "SIGTERM", "stop signal SIGTERM in both")
    port = int(cfg["args"][cfg["args"].index("--http") + 1].rsplit(":", 1)[1])
    check(cf.get("EXPOSE") == f"{port}" and f"{port}/tcp" in (cfg["exposed"] or ""),
          f"port {port} exposed in both")
    grace = 10.0
    if "--shutdown-grace-secs" in cfg["args"]:
        grace = float(cfg["args"][cfg["args"].index("--shutdown-grace-secs") + 1])

    token = secrets.token_hex(32)
    token_file = logs / "token"
    token_file.write_text(token + "\n")
    os.chown(token_file, 0, cfg["gid"])
    os.chmod(token_file, 0o440)

    stdout_path, stderr_path = logs / "stdout", logs / "stderr"
    cmd = ["unshare", "--mount", "--pid", "--fork", "--uts", "--ipc", "--net", "--propagation", "private",
           "--kill-child", "--", "/bin/sh", "-c", SETUP, "setup",
           str(rootfs), str(token_file), str(cfg["uid"]), str(cfg["gid"]), cfg["cwd"],
           *cfg["env"], *cfg["args"]]
    started = time.monotonic()
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    pid1 = None
    try:
        pid1 = poll("the namespaces' first process", 10, lambda: (children(proc.pid) or [None])[0], 0.002)
        join_netns(pid1)

        # /readyz from the start: refused or 503 until the desktop answers, then 200.
        sequence = []

        def observe():
            try:
                status, _, body = mcp_http.request("127.0.0.1", port, "GET", "/readyz", timeout=8)
                state = f"{status} {body.decode()}"
            except ConnectionRefusedError:
                state = "connection refused"
            except OSError as e:
                if e.errno != errno.ENETUNREACH:
                    raise
                # The namespace's loopback is not up yet: the setup has not reached the entrypoint.
                state = "network unreachable (before the entrypoint)"
            t = time.monotonic() - started
            if not sequence or sequence[-1][1] != state:
                sequence.append([t, state, 1])
            else:
                sequence[-1][2] += 1
            if proc.poll() is not None:
                raise Failure(f"the server exited with {proc.returncode} before it was ready; "
                              f"stderr:\n{stderr_path.read_text()[-3000:]}")
            return state.startswith("200 ")

        poll("/readyz to answer 200", 120, observe, 0.05)
        print("readyz sequence (seconds since start, answer, times seen):")
        for t, state, n in sequence:
            print(f"  {t:6.2f}s  {state}  x{n}")
        before = [s for _, s, _ in sequence[:-1]]
        check(all(s.startswith(("connection refused", "network unreachable", "503 ")) for s in before),
              "before the desktop was up /readyz refused the connection or answered 503")
        ready = json.loads(sequence[-1][1].split(" ", 1)[1])
        check(ready.get("ready") is True and ready.get("ocr") == "ok",
              f"/readyz 200 with OCR available: {ready} after {sequence[-1][0]:.2f} s")
        status, _, body = mcp_http.request("127.0.0.1", port, "GET", "/healthz")
        check(status == 200, "/healthz 200")

        # The token.
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": mcp_http.PROTOCOL, "capabilities": {},
                           "clientInfo": {"name": "image-test", "version": "1"}}}
        for label, value in (("a wrong token", "0" * 64), ("no token", None)):
            h = mcp_http.Session("127.0.0.1", port, value).headers()
            status, headers, _ = mcp_http.request("127.0.0.1", port, "POST", "/mcp", json.dumps(init).encode(), h)
            check(status == 401 and headers.get("www-authenticate", "").startswith("Bearer"),
                  f"{label}: 401 with WWW-Authenticate: Bearer")

        s = mcp_http.Session("127.0.0.1", port, token)
        info = s.initialize()
        check(info["serverInfo"]["name"] == "deskpilot", f"initialize: {info['serverInfo']}, session {s.session_id[:8]}…")
        _, listed = s.call("tools/list")
        names = {t["name"] for t in listed["tools"]}
        need = {"screenshot", "click", "list_windows", "shell_exec", "ocr", "wait_for"}
        check(need <= names, f"tools/list: {len(names)} tools, including {', '.join(sorted(need))}")

        # Who runs: every process of the namespace as the image's user.
        procs = processes_in_pidns(pid1)
        check(procs and all(r == cfg["uid"] and e == cfg["uid"] for _, _, r, e in procs),
              "every process in the PID namespace runs as uid {}: {}".format(
                  cfg["uid"], ", ".join(sorted({n for _, n, _, _ in procs}))))
        nspid = next(l for l in Path(f"/proc/{pid1}/status").read_text().splitlines() if l.startswith("NSpid:"))
        with open(f"/proc/{pid1}/cmdline", "rb") as f:
            check(f.read().split(b"\0")[:2] == [b"deskpilot", b"serve"] and nspid.split()[-1] == "1",
                  "the entrypoint is PID 1 of its namespace")

        # A fixture in the desktop: xmessage, started by deskpilot's own shell tool. Its button is
        # given a fixed size, so its place in the window is known: bottom left, 160x60, 4 px in.
        shell = structured(s.tool("shell_exec", {"command": (
            "id -u; echo $DISPLAY; "
            f"xmessage -geometry 400x200+100+100 -xrm '*okay.width: 160' -xrm '*okay.height: 60' "
            f"-buttons okay:{FIXTURE_EXIT} -title '{FIXTURE_TITLE}' 'hello from the image' "
            ">/dev/null 2>&1 & echo $!")}))
        uid_seen, display, xpid = shell["stdout"]["text"].split()
        check(uid_seen == str(cfg["uid"]) and display.startswith(":"),
              f"shell_exec runs as uid {uid_seen} on the virtual display {display}; xmessage pid {xpid}")
        waited = structured(s.tool("wait_for", {"wait_kind": "window", "text": FIXTURE_TITLE, "timeout_ms": 30000}))
        check(waited.get("matched"), f"wait_for: the xmessage window appeared after {waited.get('waited_ms')} ms")
        windows = structured(s.tool("list_windows", {"filter": FIXTURE_TITLE}))["windows"]
        check(len(windows) == 1, f"list_windows: {windows[0]['title']!r} at {windows[0]['client']}")
        client = windows[0]["client"]

        shot = s.tool("screenshot", {"format": "png"})
        meta = structured(shot)
        image = next(c for c in shot["content"] if c["type"] == "image")
        png = base64.b64decode(image["data"])
        (logs / "screenshot.png").write_bytes(png)
        width, height, colours = png_pixels(png)
        top = max(colours.values()) / (width * height)
        check(image["mimeType"] == "image/png" and width == meta["view"]["width"] and len(colours) >= 8 and top < 0.98,
              f"screenshot: {width}x{height} PNG, {len(png)} bytes, {len(colours)} colours, "
              f"the commonest covers {top:.0%} (saved as {logs / 'screenshot.png'})")

        ocr = s.tool("ocr", {"title_match": FIXTURE_TITLE})
        structured(ocr)
        check("hello" in text_of(ocr).lower(), "ocr (Tesseract in the image, eng+chi_sim) reads the fixture's text")

        x, y = client["x"] + 4 + 80, client["y"] + client["height"] - 4 - 30
        clicked = s.tool("click", {"x": x, "y": y, "coordinates": "physical"})
        structured(clicked)
        check(True, f"click on the okay button: {text_of(clicked).splitlines()[0]}")
        poll("the xmessage window to close", 15,
             lambda: structured(s.tool("list_windows", {"filter": FIXTURE_TITLE}))["count"] == 0, 0.1)
        check(True, "the xmessage window closed")
        rc = structured(s.tool("shell_exec", {"command": f"wait {xpid}; echo $?"}))["stdout"]["text"].strip()
        check(rc == str(FIXTURE_EXIT), f"xmessage exited with {rc}: its okay button was pressed")

        # SIGTERM, with the MCP session still open.
        t0 = time.monotonic()
        os.kill(pid1, signal.SIGTERM)
        try:
            code = proc.wait(timeout=grace + 5)
        except subprocess.TimeoutExpired:
            raise Failure(f"still running {grace + 5} s after SIGTERM")
        took = time.monotonic() - t0
        check(code == 0 and took <= grace,
              f"SIGTERM: exit status {code} after {took:.2f} s (grace {grace:.0f} s)")
        check(stdout_path.stat().st_size == 0, "nothing on stdout")
    finally:
        if proc.poll() is None:
            if pid1:
                try:
                    os.kill(pid1, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            proc.kill()
            proc.wait()
        print(f"server log: {stderr_path}")
    mounts = Path("/proc/self/mountinfo").read_text()
    check(str(rootfs) not in mounts, "no mount of the root filesystem is left (they lived in the namespace)")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bundle", required=True)
    p.add_argument("--containerfile", default=str(Path(__file__).resolve().parents[2] / "deploy/Containerfile"))
    p.add_argument("--logs", default="target/image/test")
    args = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("image_test: run as root (unshare, mount, chroot)")
    try:
        run(args)
    except Failure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)
    print("image test passed")


if __name__ == "__main__":
    main()
