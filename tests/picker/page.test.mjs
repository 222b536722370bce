// The UI context control page in real headless Chromium, driven by Playwright (playwright-core,
// Debian's chromium as its executable): hover over a control shows its outline and name, a pick
// shows the preview, Approve sends it. Run by crates/cli/tests/e2e/context.rs under `node --test`
// with PAGE_URL (the page's address from the server's stderr), TARGET_X / TARGET_Y (the physical
// centre of the fixture's "Apply" button) and PLAYWRIGHT_CORE (the module's directory).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { chromium } = require(process.env.PLAYWRIGHT_CORE);
const url = process.env.PAGE_URL;
const target = { x: Number(process.env.TARGET_X), y: Number(process.env.TARGET_Y) };

test("hover, pick and approve a control on the live view", async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    await page.goto(url);
    const img = page.locator("#screen");
    await page.waitForFunction(() => {
      const i = document.getElementById("screen");
      return i.naturalWidth > 0 && i.src.startsWith("blob:");
    });
    // Where the physical point shows in the image element, by the view's own mapping.
    const at = await page.evaluate(async ({ x, y, token }) => {
      const r = await fetch("/api/screen", { headers: { "X-Pick-Token": token } });
      const ox = +r.headers.get("X-Origin-X"), oy = +r.headers.get("X-Origin-Y"), s = +r.headers.get("X-Scale");
      const i = document.getElementById("screen");
      const k = i.clientWidth / i.naturalWidth;
      return { x: (x - ox) * s * k, y: (y - oy) * s * k };
    }, { ...target, token: new URL(url).searchParams.get("t") });
    const box = await img.boundingBox();
    await page.mouse.move(box.x + at.x, box.y + at.y);
    // Hovering names the control and outlines it.
    await page.waitForFunction(() => document.getElementById("label").textContent.includes("Apply"));
    assert.match(await page.locator("#label").textContent(), /Button "Apply" · atspi/);
    assert.equal(await page.locator("#outline").isVisible(), true);
    const outline = await page.locator("#outline").boundingBox();
    assert.ok(outline.width > 10 && outline.height > 5, JSON.stringify(outline));
    // Pick it: the preview says what the agent will receive.
    await page.mouse.down();
    await page.mouse.up();
    await page.locator("#preview").waitFor({ state: "visible" });
    const md = await page.locator("#md").textContent();
    assert.match(md, /- Role: Button/);
    assert.match(md, /- Name: Apply/);
    assert.match(await page.locator("#json").textContent(), /"source": "atspi"/);
    await page.waitForFunction(() => document.getElementById("crop").naturalWidth > 0);
    // Approve: sent.
    await page.locator("#approve").click();
    await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("Sent to the agent"));
  } finally {
    await browser.close();
  }
});
