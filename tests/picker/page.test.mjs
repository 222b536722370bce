// The UI context control page in real headless Chromium, driven by Playwright (playwright-core,
// Debian's chromium as its executable). Run by crates/cli/tests/e2e/context.rs under `node --test`
// once per STEP, each while an agent's ui_context_pick waits:
//   control: hover over the fixture's button shows its outline and name, a click shows the
//            preview, Approve sends it (TARGET_X / TARGET_Y: the button's physical centre);
//   region:  a drag over REGION (x,y,w,h, physical) previews OCR'd text, Approve sends it;
//   cancel:  a pick, then Cancel: the agent gets nothing.
// PAGE_URL is the page's address from the server's stderr; PLAYWRIGHT_CORE the module's directory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { chromium } = require(process.env.PLAYWRIGHT_CORE);
const url = process.env.PAGE_URL;
const target = { x: Number(process.env.TARGET_X), y: Number(process.env.TARGET_Y) };

const step = process.env.STEP || "control";

/// Opens the page and returns helpers mapping physical points into the live view.
async function open(browser) {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await page.goto(url);
  await page.waitForFunction(() => {
    const i = document.getElementById("screen");
    return i.naturalWidth > 0 && i.src.startsWith("blob:");
  });
  // The mapping from the server's own headers and the image's decoded width, not the <img>, whose
  // natural size is 0 while the page swaps in a newer capture.
  const map = await page.evaluate(async (token) => {
    const r = await fetch("/api/screen", { headers: { "X-Pick-Token": token } });
    const bitmap = await createImageBitmap(await r.blob());
    return {
      ox: +r.headers.get("X-Origin-X"), oy: +r.headers.get("X-Origin-Y"), s: +r.headers.get("X-Scale"),
      k: document.getElementById("screen").clientWidth / bitmap.width,
    };
  }, new URL(url).searchParams.get("t"));
  assert.ok(Object.values(map).every(Number.isFinite) && map.k > 0, JSON.stringify(map));
  const box = await page.locator("#screen").boundingBox();
  const at = (x, y) => ({ x: box.x + (x - map.ox) * map.s * map.k, y: box.y + (y - map.oy) * map.s * map.k });
  return { page, at };
}

test(`control page: ${step}`, async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox"],
  });
  try {
    const { page, at } = await open(browser);
    if (step === "control" || step === "cancel") {
      const p = at(target.x, target.y);
      await page.mouse.move(p.x, p.y);
      // Hovering names the control and outlines it.
      await page.waitForFunction(() => document.getElementById("label").textContent.includes("Apply"));
      assert.match(await page.locator("#label").textContent(), /Button "Apply" · atspi/);
      assert.equal(await page.locator("#outline").isVisible(), true);
      const outline = await page.locator("#outline").boundingBox();
      assert.ok(outline.width > 10 && outline.height > 5, JSON.stringify(outline));
      await page.mouse.down();
      await page.mouse.up();
      await page.locator("#preview").waitFor({ state: "visible" });
      const md = await page.locator("#md").textContent();
      assert.match(md, /- Role: Button/);
      assert.match(md, /- Name: Apply/);
      assert.match(await page.locator("#json").textContent(), /"source": "atspi"/);
    } else if (step === "region") {
      const [x, y, w, h] = process.env.REGION.split(",").map(Number);
      await page.locator('input[value="region"]').check();
      const a = at(x, y), b = at(x + w, y + h);
      await page.mouse.move(a.x, a.y);
      await page.mouse.down();
      await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2);
      assert.equal(await page.locator("#drag").isVisible(), true, "the dragged box shows");
      await page.mouse.move(b.x, b.y);
      await page.mouse.up();
      await page.locator("#preview").waitFor({ state: "visible" });
      const md = await page.locator("#md").textContent();
      assert.match(md, /# UI context: region/);
      assert.match(md, /source `ocr`/);
      assert.match(md, new RegExp(process.env.EXPECT_TEXT));
    }
    await page.waitForFunction(() => document.getElementById("crop").naturalWidth > 0);
    if (step === "cancel") {
      await page.locator("#cancel").click();
      await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("Cancelled"));
    } else {
      await page.locator("#approve").click();
      await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("Sent to the agent"));
    }
  } finally {
    await browser.close();
  }
});
