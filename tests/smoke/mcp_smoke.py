"""Smoke test through the official Python MCP SDK (a client nobody here wrote).

Starts `deskpilot serve --virtual-display` (its own headless desktop) over stdio and checks, in
order:
- the handshake, tools/list, and status, list_windows and screenshot answers;
- logging: nothing before logging/setLevel; after setLevel debug a screenshot brings a
  notifications/message with a level and a logger naming a deskpilot crate;
- a resource update: subscribed to deskpilot://windows, an xterm launched through deskpilot's
  own `window` tool brings notifications/resources/updated for that URI, and the resource then
  names the window;
- an app skill saved through `app_skill` is a resource (deskpilot://skill/{app}) and a prompt
  ("work in {app}") carrying the skill's text;
then, with `requireApproval = "mutating"`, answers deskpilot's approval question through the
SDK's elicitation callback (decline, then accept).

Every check runs even when an earlier one failed (a later check may need what an earlier one
made, and then says so); each failure is printed and the exit status is non-zero. Waits are
polls with deadlines. With CI=true a desktop that cannot start fails the run; elsewhere the
test is skipped with a message.

Usage: python mcp_smoke.py /path/to/deskpilot
"""

import asyncio
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPDeprecationWarning

# logging/setLevel and resources/subscribe belong to the 2025-11-25 revision negotiated here; the
# SDK marks them deprecated for 2026-07-28, which this test does not speak.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

LEVELS = {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
WINDOWS = "deskpilot://windows"
TITLE = f"deskpilot python smoke {os.getpid()}"
SKILL_APP = "xterm"
SKILL_TEXT = f"Ctrl+Shift+V pastes in xterm (python smoke {os.getpid()})."

failed: list[str] = []


async def check(name: str, fn) -> None:
    """Runs one check; a failure is printed and remembered, and the next check still runs."""
    try:
        await fn()
        print(f"ok      python mcp: {name}", file=sys.stderr)
    except Exception as e:  # noqa: BLE001 - every failure is reported the same way
        failed.append(name)
        detail = "".join(traceback.format_exception_only(e)).strip()
        here = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == __file__]
        if isinstance(e, AssertionError) and here:
            detail = f"{detail}\n(line {here[-1].lineno}: {here[-1].line})"
        detail = detail.replace("\n", "\n        ")
        print(f"FAILED  python mcp: {name}\n        {detail}", file=sys.stderr)


async def wait_for(what: str, seconds: float, probe):
    """Polls `probe` until it returns something truthy or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {seconds} s")
        await asyncio.sleep(0.05)


def texts(result) -> str:
    """Everything a result says, as JSON text, for `in` checks and failure messages."""
    return json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True))


def desktop_starts(binary: str) -> bool:
    """`serve --virtual-display --check`: whether a desktop starts here. CI=true fails without one."""
    probe = subprocess.run(
        [binary, "serve", "--virtual-display", "--check"], capture_output=True, text=True, timeout=60
    )
    if probe.returncode == 0:
        return True
    why = (probe.stdout + probe.stderr).strip()
    if os.environ.get("CI") == "true":
        sys.exit(f"python mcp smoke: CI=true and no desktop could start:\n{why}")
    print(f"SKIP python mcp smoke: no desktop could start:\n{why}", file=sys.stderr)
    return False


async def main(binary: str) -> None:
    if not desktop_starts(binary):
        return
    with tempfile.TemporaryDirectory() as d:
        env = {
            **os.environ,
            "DESKPILOT_MEMORY_DIR": os.path.join(d, "memory"),
            "DESKPILOT_SKILLS_DIR": os.path.join(d, "skills"),
            "DESKPILOT_CURSOR": "off",
        }
        await features(binary, env)
        await approval(binary, env, d)
    if failed:
        sys.exit(f"python mcp smoke: {len(failed)} checks failed: {'; '.join(failed)}")
    print("python mcp smoke: ok", file=sys.stderr)


async def features(binary: str, env: dict[str, str]) -> None:
    logs: list[types.LoggingMessageNotificationParams] = []
    updates: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))

    params = StdioServerParameters(command=binary, args=["serve", "--virtual-display"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, logging_callback=on_log, message_handler=on_message) as session:
            made: dict[str, object] = {}

            async def handshake():
                init = await session.initialize()
                assert init.server_info.name == "deskpilot", init.server_info
                assert str(init.protocol_version) == "2025-11-25", init.protocol_version
                tools = {t.name: t for t in (await session.list_tools()).tools}
                assert {"list_windows", "screenshot", "status", "window", "app_skill"} <= set(tools), sorted(tools)
                assert tools["screenshot"].annotations.read_only_hint is True

            async def tool_answers():
                status = await session.call_tool("status", {})
                assert not status.is_error, status
                assert status.structured_content["platform"] == "x11", status.structured_content
                assert status.structured_content["window_manager"], status.structured_content

                windows = await session.call_tool("list_windows", {})
                assert not windows.is_error, windows
                assert isinstance(windows.structured_content["windows"], list)

                shot = await session.call_tool("screenshot", {"max_width": 640})
                assert not shot.is_error, shot
                view = shot.structured_content["view"]
                assert view["width"] == 640 and view["capture"]["width"] == 1920, view
                images = [c for c in shot.content if c.type == "image"]
                assert len(images) == 1 and images[0].mime_type == "image/jpeg"
                data = base64.b64decode(images[0].data)
                assert data[:2] == b"\xff\xd8" and len(data) > 1000, len(data)

                missing = await session.call_tool("screenshot", {"window_id": 12345})
                assert missing.is_error
                assert missing.structured_content["error"]["code"] == "WINDOW_NOT_FOUND"

            async def logging():
                # The screenshots above logged too, before any level was set: a client hears nothing then.
                assert not logs, f"messages before logging/setLevel: {logs[:3]}"
                await session.set_logging_level("debug")
                shot = await session.call_tool("screenshot", {"max_width": 320})
                assert not shot.is_error, shot
                message = await wait_for("notifications/message", 10, lambda: next((m for m in logs if m.logger), None))
                # Only deskpilot's own crates' events are forwarded (never a library's).
                assert message.logger.startswith("deskpilot"), message
                assert message.level in LEVELS, message
                assert message.data is not None, message

            async def resource_update():
                # The window is launched even when the subscription is refused, for the next check.
                refused = None
                try:
                    await session.subscribe_resource(WINDOWS)
                except Exception as e:  # noqa: BLE001 - re-raised after the launch
                    refused = e
                launched = await session.call_tool(
                    "window", {"action": "launch", "command": "xterm", "args": ["-T", TITLE]}
                )
                assert not launched.is_error, launched
                assert launched.structured_content["window"]["title"] == TITLE, launched.structured_content
                made["window"] = launched.structured_content["window"]["id"]
                if refused:
                    raise refused
                await wait_for(f"notifications/resources/updated for {WINDOWS}", 15, lambda: WINDOWS in updates)

            async def windows_resource():
                assert "window" in made, "needs the xterm of the resource update check"
                read = await session.read_resource(WINDOWS)
                assert str(read.contents[0].uri) == WINDOWS, read
                assert any(TITLE in getattr(c, "text", "") for c in read.contents), texts(read)

            async def skill_resource():
                saved = await session.call_tool(
                    "app_skill",
                    {"action": "save", "app": SKILL_APP, "summary": "xterm basics", "content": SKILL_TEXT},
                )
                assert not saved.is_error, saved
                made["skill"] = SKILL_APP
                uri = f"deskpilot://skill/{SKILL_APP}"
                read = await session.read_resource(uri)
                assert str(read.contents[0].uri) == uri, read
                assert any(SKILL_TEXT in getattr(c, "text", "") for c in read.contents), texts(read)

            async def skill_prompt():
                assert "skill" in made, "needs the skill saved by the check before"
                prompts = (await session.list_prompts()).prompts
                prompt = next((p for p in prompts if SKILL_APP in p.name.lower()), None) or next(
                    (p for p in prompts if any(a.name == "app" for a in p.arguments or [])), None
                )
                assert prompt, f"no prompt for the {SKILL_APP} skill (named for it, or taking `app`): {prompts}"
                args = {"app": SKILL_APP} if any(a.name == "app" for a in prompt.arguments or []) else {}
                got = await session.get_prompt(prompt.name, args)
                assert got.messages, got
                assert SKILL_TEXT in texts(got), texts(got)

            await check("initialize and tools/list", handshake)
            await check("status, list_windows and screenshot answers", tool_answers)
            await check("no log message before logging/setLevel; after setLevel debug a screenshot logs", logging)
            await check(
                f"resources/subscribe {WINDOWS}, a window opens, notifications/resources/updated names it",
                resource_update,
            )
            await check(f"resources/read {WINDOWS} names the new window", windows_resource)
            await check("app_skill save, then resources/read deskpilot://skill/{app} has its text", skill_resource)
            await check("prompts/get of the saved skill's prompt carries its text", skill_prompt)


async def approval(binary: str, env: dict[str, str], d: str) -> None:
    """deskpilot asks before a mutating action; only an accept lets it run."""
    answers = ["decline", "accept"]
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action=answers.pop(0), content={} if not answers else None)

    config = os.path.join(d, "config.toml")
    with open(config, "w") as f:
        f.write('requireApproval = "mutating"\n')
    params = StdioServerParameters(
        command=binary, args=["serve", "--virtual-display", "--config", config], env=env
    )

    async def ask():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, elicitation_callback=elicit) as session:
                await session.initialize()
                move = {"x": 20, "y": 20, "coordinates": "physical"}
                denied = await session.call_tool("move_cursor", move)
                assert denied.is_error, denied
                assert denied.structured_content["error"]["code"] == "APPROVAL_DENIED", denied
                moved = await session.call_tool("move_cursor", move)
                assert not moved.is_error, moved
                assert moved.structured_content["receipt"]["x"] == 20, moved.structured_content
        assert len(asked) == 2 and "move the pointer to (20, 20)" in asked[0], asked

    await check("approval through elicitation (decline, then accept)", ask)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
