// The MCP Inspector's CLI (a client nobody here wrote) against the `deskpilot` profile, over
// stdio and over Streamable HTTP: it lists tools (with its schema portability lint, --strict),
// resources, resource templates and prompts, calls tools, reads a resource and gets a prompt.
// Both servers run on one private desktop, where the Inspector first launches an xterm through
// deskpilot's own `window` tool, so what comes back can be checked against a window that exists.
//
// Usage: node inspector.mjs /path/to/deskpilot   (Node >= 22.19, the Inspector's floor)
// Environment: DESKPILOT_INSPECTOR, the Inspector launcher script (scripts/test installs it).

import { spawn } from "node:child_process";
import { join } from "node:path";
import { tmpdir } from "node:os";

import { check, run, serverEnv, startDesktop, startHttp } from "./lib.mjs";

const binary = process.argv[2];
const launcher = process.env.DESKPILOT_INSPECTOR;
if (!binary || !launcher) {
  console.error("usage: DESKPILOT_INSPECTOR=…/launcher/build/index.js node inspector.mjs DESKPILOT");
  process.exit(2);
}

const desktop = await startDesktop(binary, "MCP Inspector CLI");
if (!desktop) process.exit(0);
const env = { ...serverEnv(), ...desktop };
const token = `inspector-${process.pid}`;
const url = await startHttp(binary, [], env, token);
const title = `deskpilot inspector ${process.pid}`;

// The Inspector gives a stdio server only a default environment (PATH, HOME, …); the desktop's
// and the private directories' variables are passed with -e, as a client's config would.
const passed = Object.keys(desktop).concat(["DESKPILOT_MEMORY_DIR", "DESKPILOT_SKILLS_DIR", "DESKPILOT_CURSOR"]);
const transports = {
  stdio: [...passed.flatMap((k) => ["-e", `${k}=${env[k]}`]), "--", binary, "serve"],
  http: ["--transport", "http", "--header", `Authorization: Bearer ${token}`, "--", url],
};

/** One Inspector CLI run (60 s deadline); resolves with its `result`, fails with its error. */
function inspect(transport, args) {
  const argv = [launcher, "--cli", "--format", "json", "-q", ...args, ...transports[transport]];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, {
      env: { ...process.env, MCP_CATALOG_PATH: join(tmpdir(), `deskpilot-inspector-${process.pid}.json`) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (err += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      const said = `inspector ${args.join(" ")} over ${transport} → ${code ?? signal}\nstdout: ${out.slice(0, 2000)}\nstderr: ${err.slice(-2000)}`;
      let parsed;
      try {
        parsed = JSON.parse(out);
      } catch {
        return reject(new Error(said));
      }
      if (code !== 0 || !parsed.result) return reject(new Error(said));
      resolve(parsed.result);
    });
  });
}

const text = (result) => JSON.stringify(result);
let windowId;

const checks = [
  [
    "stdio: tools/call window launch (an xterm on the shared desktop)",
    async () => {
      const launched = await inspect("stdio", [
        "--method", "tools/call", "--tool-name", "window",
        "--tool-args-json", JSON.stringify({ action: "launch", command: "xterm", args: ["-T", title] }),
      ]);
      check(!launched.isError, () => `launch failed: ${text(launched)}`);
      const window = launched.structuredContent?.window;
      check(window?.title === title, () => `no window titled ${title}: ${text(launched)}`);
      windowId = window.id;
    },
  ],
];

for (const t of Object.keys(transports)) {
  checks.push(
    [
      `${t}: tools/list --strict`,
      async () => {
        const { tools } = await inspect(t, ["--method", "tools/list", "--strict"]);
        const names = tools.map((tool) => tool.name);
        for (const want of ["screenshot", "list_windows", "window", "status", "app_skill"]) {
          check(names.includes(want), `${want} missing from ${names}`);
        }
        const bad = names.filter((n) => !/^[A-Za-z0-9_.-]{1,64}$/.test(n));
        check(bad.length === 0, `tool names outside [A-Za-z0-9_.-]{1,64}: ${bad}`);
      },
    ],
    [
      `${t}: tools/call list_windows names the xterm`,
      async () => {
        const listed = await inspect(t, [
          "--method", "tools/call", "--tool-name", "list_windows", "--tool-args-json", JSON.stringify({ filter: title }),
        ]);
        const windows = listed.structuredContent?.windows ?? [];
        check(windows.some((w) => w.title === title && w.id === windowId), () => `no ${title} (${windowId}): ${text(listed)}`);
      },
    ],
    [
      `${t}: resources/list has deskpilot://windows`,
      async () => {
        const { resources } = await inspect(t, ["--method", "resources/list"]);
        check(resources.some((r) => r.uri === "deskpilot://windows"), () => `no deskpilot://windows in ${text(resources)}`);
      },
    ],
    [
      `${t}: resources/templates/list has the screenshot, window and skill templates`,
      async () => {
        const { resourceTemplates } = await inspect(t, ["--method", "resources/templates/list"]);
        const templates = resourceTemplates.map((r) => r.uriTemplate);
        for (const want of [
          "deskpilot://screenshot/{id}",
          "deskpilot://window/{window}/tree",
          "deskpilot://window/{window}/outline",
          "deskpilot://skill/{app}",
        ]) {
          check(templates.includes(want), `${want} missing from ${templates}`);
        }
      },
    ],
    [
      `${t}: resources/read deskpilot://windows names the xterm`,
      async () => {
        const { contents } = await inspect(t, ["--method", "resources/read", "--uri", "deskpilot://windows"]);
        check(contents?.[0]?.uri === "deskpilot://windows", () => `contents: ${text(contents)}`);
        check(contents.some((c) => c.text?.includes(title)), () => `${title} not in ${text(contents)}`);
      },
    ],
    [
      `${t}: prompts/list and prompts/get of the window prompt name the xterm`,
      async () => {
        const { prompts } = await inspect(t, ["--method", "prompts/list"]);
        const prompt = windowPrompt(prompts);
        const argument = prompt.arguments.find((a) => /window/i.test(a.name)).name;
        const got = await inspect(t, [
          "--method", "prompts/get", "--prompt-name", prompt.name, "--prompt-args", `${argument}=${title}`,
        ]);
        check(got.messages?.length > 0, () => `no messages: ${text(got)}`);
        check(text(got.messages).includes(title), () => `${title} not in the prompt: ${text(got).slice(0, 2000)}`);
      },
    ],
  );
}

/** The prompt that inspects a window: its name says so and it takes a window argument. */
function windowPrompt(prompts) {
  const found = prompts.find(
    (p) => /inspect/i.test(p.name) && (p.arguments ?? []).some((a) => /window/i.test(a.name)),
  );
  check(found, () => `no inspect-a-window prompt (a name with "inspect", a window argument) in ${text(prompts)}`);
  return found;
}

await run("MCP Inspector CLI", checks);
process.exit(0);
