// The official TypeScript SDK's client (`@modelcontextprotocol/sdk`, a client nobody here wrote)
// against the `deskpilot` profile, over stdio and over Streamable HTTP, on one private desktop.
// Per transport it checks what an agent host relies on:
// - tool output: after tools/list the SDK validates every structuredContent against the tool's
//   outputSchema (a mismatch throws); each tool called here that answers with structuredContent
//   must declare one, or nothing was validated;
// - logging: nothing before logging/setLevel; after setLevel debug a screenshot brings a
//   notifications/message with a level and a logger naming a deskpilot crate;
// - a resource update: subscribed to deskpilot://windows, an xterm launched through deskpilot's
//   own `window` tool brings notifications/resources/updated for that URI; the resource then
//   names the window;
// - a screenshot read back as deskpilot://screenshot/{id} (the image's bytes);
// - the inspect-a-window prompt: its window argument completed from a title prefix, and the
//   prompt naming the window with its screenshot embedded.
//
// Usage: node ts_sdk.mjs /path/to/deskpilot
// Environment: DESKPILOT_TS_SDK, the installed `@modelcontextprotocol/sdk` package directory
// (scripts/test installs it under target/).

import { join } from "node:path";
import { createRequire } from "node:module";

import { check, keepLog, run, serverEnv, startDesktop, startHttp, waitFor } from "./lib.mjs";

const binary = process.argv[2];
const sdkDir = process.env.DESKPILOT_TS_SDK;
if (!binary || !sdkDir) {
  console.error("usage: DESKPILOT_TS_SDK=…/node_modules/@modelcontextprotocol/sdk node ts_sdk.mjs DESKPILOT");
  process.exit(2);
}
const require = createRequire(join(sdkDir, "package.json"));
const { Client } = require("./dist/cjs/client/index.js");
const { StdioClientTransport } = require("./dist/cjs/client/stdio.js");
const { StreamableHTTPClientTransport } = require("./dist/cjs/client/streamableHttp.js");
const { LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } = require("./dist/cjs/types.js");
const sdkVersion = require("./package.json").version;

const desktop = await startDesktop(binary, "TypeScript SDK client");
if (!desktop) process.exit(0);
const env = { ...serverEnv(), ...desktop };
const token = `ts-sdk-${process.pid}`;
const url = await startHttp(binary, [], env, token);

const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
const text = (value) => JSON.stringify(value);

/** The checks over one transport; `connect` makes the SDK's transport. */
function checksOver(name, connect) {
  const title = `deskpilot ts ${name} ${process.pid}`;
  const client = new Client({ name: "deskpilot-ts-sdk-check", version: "1.0.0" });
  const logs = [];
  const updates = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params));
  const tools = new Map();
  let windowId;

  /** A tool call that must succeed; the SDK validates its structuredContent when the tool declares an outputSchema. */
  async function call(tool, args) {
    const result = await client.callTool({ name: tool, arguments: args });
    check(!result.isError, () => `${tool} failed: ${text(result).slice(0, 1500)}`);
    return result;
  }

  /** `call`, and its structuredContent must come with a declared outputSchema (or nothing was validated). */
  async function validated(tool, args) {
    const result = await call(tool, args);
    if (result.structuredContent !== undefined) {
      check(tools.get(tool)?.outputSchema, `${tool} answers with structuredContent but declares no outputSchema`);
    }
    return result;
  }

  return [
    [
      `${name}: initialize (deskpilot with resources.subscribe, prompts, logging, completions)`,
      async () => {
        await client.connect(connect());
        check(client.getServerVersion()?.name === "deskpilot", () => text(client.getServerVersion()));
        const caps = client.getServerCapabilities();
        check(caps?.resources?.subscribe && caps.prompts && caps.logging && caps.completions, () => `capabilities: ${text(caps)}`);
      },
    ],
    [
      `${name}: tools/list (names, output schemas the SDK compiles)`,
      async () => {
        // listTools compiles each outputSchema with the SDK's validator (Ajv); a schema it
        // cannot compile fails here.
        for (const tool of (await client.listTools()).tools) tools.set(tool.name, tool);
        const bad = [...tools.keys()].filter((n) => !/^[A-Za-z0-9_.-]{1,64}$/.test(n));
        check(bad.length === 0, `tool names outside [A-Za-z0-9_.-]{1,64}: ${bad}`);
        const declared = [...tools.values()].filter((t) => t.outputSchema).map((t) => t.name);
        check(declared.length > 0, "no tool declares an outputSchema");
      },
    ],
    [
      `${name}: tool results validated against their outputSchema (status, list_windows, screenshot, app_skill, shell_exec)`,
      async () => {
        const status = await validated("status", {});
        check(status.structuredContent?.platform === "x11", () => text(status.structuredContent));
        await validated("list_windows", {});
        await validated("screenshot", { max_width: 320 });
        await validated("app_skill", { action: "list" });
        const echoed = await validated("shell_exec", { command: "echo ts-$((6*7))" });
        check(text(echoed).includes("ts-42"), () => text(echoed));
      },
    ],
    [
      `${name}: no log message before logging/setLevel; after setLevel debug a screenshot logs (a deskpilot logger, a level)`,
      async () => {
        // The screenshots above logged too, before any level was set: a client hears nothing then.
        check(logs.length === 0, () => `messages before logging/setLevel: ${text(logs).slice(0, 500)}`);
        await client.setLoggingLevel("debug");
        await call("screenshot", { max_width: 320 });
        const message = await waitFor("notifications/message", 10_000, () => logs.find((m) => m.logger));
        // Only deskpilot's own crates' events are forwarded (never a library's, which may carry payloads).
        check(typeof message.logger === "string" && message.logger.startsWith("deskpilot"), () => text(message));
        check(LEVELS.includes(message.level), () => `level: ${text(message)}`);
        check(message.data !== undefined, () => `no data: ${text(message)}`);
      },
    ],
    [
      `${name}: resources/subscribe deskpilot://windows, a window opens, notifications/resources/updated names it`,
      async () => {
        // The window is launched even when the subscription is refused, for the checks after this one.
        const subscribed = await client.subscribeResource({ uri: "deskpilot://windows" }).catch((e) => e);
        const launched = await call("window", { action: "launch", command: "xterm", args: ["-T", title] });
        const window = launched.structuredContent?.window;
        check(window?.title === title, () => `no window titled ${title}: ${text(launched)}`);
        windowId = window.id;
        if (subscribed instanceof Error) throw subscribed;
        await waitFor("notifications/resources/updated for deskpilot://windows", 15_000, () =>
          updates.some((u) => u.uri === "deskpilot://windows"),
        );
        const other = updates.filter((u) => u.uri !== "deskpilot://windows");
        check(other.length === 0, () => `updates for URIs not subscribed: ${text(other)}`);
      },
    ],
    [
      `${name}: resources/read deskpilot://windows names the new window`,
      async () => {
        const { contents } = await client.readResource({ uri: "deskpilot://windows" });
        check(contents[0]?.uri === "deskpilot://windows", () => text(contents));
        check(contents.some((c) => c.text?.includes(title)), () => `${title} not in ${text(contents)}`);
      },
    ],
    [
      `${name}: resources/read deskpilot://screenshot/{id} gives the screenshot's image`,
      async () => {
        const shot = await call("screenshot", { window_id: windowId });
        const id = shot.structuredContent?.screenshot_id;
        check(Number.isInteger(id), () => `no screenshot_id: ${text(shot.structuredContent)}`);
        const uri = `deskpilot://screenshot/${id}`;
        const { contents } = await client.readResource({ uri });
        const image = contents.find((c) => c.blob);
        check(image?.uri === uri && image.mimeType?.startsWith("image/"), () => text(contents).slice(0, 500));
        check(Buffer.from(image.blob, "base64").length > 1000, "the image has under 1000 bytes");
      },
    ],
    [
      `${name}: completion/complete fills the window prompt's argument; prompts/get names the window`,
      async () => {
        const { prompts } = await client.listPrompts();
        const prompt = prompts.find(
          (p) => /inspect/i.test(p.name) && (p.arguments ?? []).some((a) => /window/i.test(a.name)),
        );
        check(prompt, () => `no inspect-a-window prompt (a name with "inspect", a window argument) in ${text(prompts)}`);
        const argument = prompt.arguments.find((a) => /window/i.test(a.name)).name;
        const { completion } = await client.complete({
          ref: { type: "ref/prompt", name: prompt.name },
          argument: { name: argument, value: title.slice(0, -4) },
        });
        check(completion.values.includes(title), () => `${title} not among ${text(completion)}`);
        const got = await client.getPrompt({ name: prompt.name, arguments: { [argument]: title } });
        check(text(got.messages).includes(title), () => `${title} not in ${text(got).slice(0, 1500)}`);
        const embedded = got.messages.some((m) => m.content.type === "image" || m.content.resource?.blob);
        check(embedded, () => `no screenshot embedded: ${text(got).slice(0, 1500)}`);
      },
    ],
    [
      `${name}: close`,
      async () => {
        await client.close();
      },
    ],
  ];
}

const checks = [
  ...checksOver("stdio", () => {
    const transport = new StdioClientTransport({ command: binary, args: ["serve"], env, stderr: "pipe" });
    keepLog("serve (stdio)", transport.stderr);
    return transport;
  }),
  ...checksOver(
    "http",
    () =>
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
  ),
];

await run(`TypeScript SDK ${sdkVersion} client`, checks);
process.exit(0);
