"""Smoke test through the official Python MCP SDK.

Starts `deskpilot serve --virtual-display` (its own headless desktop) over stdio, performs the
handshake, lists tools and calls list_windows, screenshot and status, asserting on what comes
back. Then, with `requireApproval = "mutating"`, answers deskpilot's approval question through the
SDK's elicitation callback (decline, then accept). Exits non-zero on any failure.

Usage: python mcp_smoke.py /path/to/deskpilot
"""

import asyncio
import base64
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def main(binary: str) -> None:
    params = StdioServerParameters(command=binary, args=["serve", "--virtual-display"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "deskpilot", init.server_info
            assert str(init.protocol_version) == "2025-11-25", init.protocol_version

            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert {"list_windows", "screenshot", "status"} <= set(tools), sorted(tools)
            assert tools["screenshot"].annotations.read_only_hint is True

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

    await approval(binary)
    print("python mcp smoke: ok")


async def approval(binary: str) -> None:
    """deskpilot asks before a mutating action; only an accept lets it run."""
    answers = ["decline", "accept"]
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action=answers.pop(0), content={} if not answers else None)

    with tempfile.TemporaryDirectory() as d:
        config = os.path.join(d, "config.toml")
        with open(config, "w") as f:
            f.write('requireApproval = "mutating"\n')
        params = StdioServerParameters(
            command=binary, args=["serve", "--virtual-display", "--config", config]
        )
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


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
