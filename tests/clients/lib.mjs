// What the client checks under tests/clients/ share: a `deskpilot serve --http` process on
// loopback, private memory and skill directories, polls with deadlines, and a runner that
// prints every check's outcome and fails the run (exit 1, the servers' last stderr lines
// beside the errors) when any failed.
//
// Nothing here knows a client library: each check file drives its own client.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Environment for a deskpilot server: private memory and skill directories, no cursor overlay. */
export function serverEnv() {
  const dir = mkdtempSync(join(tmpdir(), "deskpilot-client-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  return {
    ...process.env,
    DESKPILOT_MEMORY_DIR: join(dir, "memory"),
    DESKPILOT_SKILLS_DIR: join(dir, "skills"),
    DESKPILOT_CURSOR: "off",
  };
}

/**
 * A private desktop (`deskpilot desktop`: Xvfb, a window manager, D-Bus, the AT-SPI bus) for
 * the servers a check starts; resolves with its environment (DISPLAY, the buses, XDG dirs).
 * It stops when this process exits. When none can start, CI=true fails the run; elsewhere it
 * resolves with `null` and the caller skips, saying so.
 */
export async function startDesktop(binary, what) {
  const child = spawn(binary, ["desktop"], { stdio: ["ignore", "pipe", "pipe"] });
  process.on("exit", () => child.kill("SIGINT"));
  let out = "";
  let err = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => (err += chunk));
  child.stdout.setEncoding("utf8");
  const up = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), 60_000);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (/^# desktop .* is up/m.test(out)) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    child.on("exit", () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  if (!up) {
    const why = `${out}${err}`.trim() || "(no output within 60 s)";
    if (process.env.CI === "true") {
      console.error(`${what}: CI=true and the desktop could not start:\n${why}`);
      process.exit(1);
    }
    console.error(`SKIP ${what}: the desktop could not start:\n${why}`);
    return null;
  }
  const env = {};
  for (const [, key, value] of out.matchAll(/^export ([A-Z_][A-Z0-9_]*)='(.*)'$/gm)) {
    env[key] = value.replaceAll("'\\''", "'");
  }
  return env;
}

/** Every server started here, with its last stderr lines, for failure messages. */
const servers = [];

/**
 * Starts `binary serve --http 127.0.0.1:0 ...args` with bearer `token`; resolves with its
 * `/mcp` URL once it prints it (30 s deadline). The server is stopped when this process exits.
 */
export async function startHttp(binary, args, env, token) {
  const child = spawn(binary, ["serve", "--http", "127.0.0.1:0", ...args], {
    env: { ...env, DESKPILOT_TOKEN: token },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const lines = [];
  servers.push({ name: ["serve --http", ...args].join(" "), lines });
  process.on("exit", () => child.kill("SIGTERM"));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error("serve --http printed no address within 30 s")),
      30_000,
    );
    let partial = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop();
      for (const line of parts) {
        lines.push(line);
        if (lines.length > 400) lines.shift();
        const found = / at (http:\/\/\S+\/mcp)$/.exec(line);
        if (found) {
          clearTimeout(timer);
          resolve(found[1]);
        }
      }
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      lines.push(`(exited: ${code ?? signal})`);
      reject(new Error(`serve --http exited (${code ?? signal}) before printing its address`));
    });
  });
}

/** Keeps the last stderr lines of a server started by a client library (stdio), for failures. */
export function keepLog(name, stream) {
  const lines = [];
  servers.push({ name, lines });
  let partial = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop();
    lines.push(...parts);
    if (lines.length > 400) lines.splice(0, lines.length - 400);
  });
}

/** Polls `probe` until it returns a truthy value or `ms` pass; then fails naming `what`. */
export async function waitFor(what, ms, probe) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`no ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Fails with `message` unless `ok`. */
export function check(ok, message) {
  if (!ok) throw new Error(typeof message === "function" ? message() : message);
}

/**
 * Runs `checks` (`[name, async fn]`, in order; a later one may use what an earlier one found)
 * and prints `ok`/`FAILED` for each. A failure does not stop the others, so one run names every
 * check that fails; then the servers' last stderr lines are printed and the process exits 1.
 */
export async function run(title, checks) {
  const failed = [];
  for (const [name, fn] of checks) {
    try {
      await fn();
      console.error(`ok      ${title}: ${name}`);
    } catch (e) {
      failed.push(name);
      console.error(`FAILED  ${title}: ${name}\n        ${String(e?.message ?? e).replaceAll("\n", "\n        ")}`);
    }
  }
  if (failed.length === 0) {
    console.error(`${title}: all ${checks.length} checks passed`);
    return;
  }
  for (const { name, lines } of servers) {
    console.error(`--- last stderr lines of ${name}:\n${lines.slice(-30).join("\n")}`);
  }
  console.error(`${title}: ${failed.length} of ${checks.length} checks failed: ${failed.join("; ")}`);
  process.exit(1);
}
