// Time and size of a page's accessibility snapshot three ways, p50/p95 of `--runs` runs (10):
// the walker (in an isolated world over CDP, its result as one JSON string), Chromium's
// Accessibility.getFullAXTree (every frame) and playwright's ariaSnapshot (default on body,
// and page.ariaSnapshot({mode: 'ai'}) when this playwright has it).
//
//   node crates/browser/tests/js/walker_bench.mjs [large.html huge.html] [--runs 10]
//
// Each tool gets its own fresh page, so one's caches (the browser's accessibility tree once
// enabled) do not help or hurt another; the first (cold) run is reported apart.

import { launch, serve, isolatedWorld, runWalker, axFrames, stats, WALKER } from './harness.mjs';

const args = process.argv.slice(2);
const ri = args.indexOf('--runs');
const runs = ri >= 0 ? Number(args[ri + 1]) : 10;
const files = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--runs');

const { server, port } = await serve();
const browser = await launch();
const rows = [];

async function fresh(file) {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${port}/${file}`, { waitUntil: 'load' });
  const cdp = await page.context().newCDPSession(page);
  return { page, cdp };
}

async function measure(file, tool, once) {
  const { page, cdp } = await fresh(file);
  const ms = [];
  const inPage = [];
  let bytes = 0;
  let cold = 0;
  for (let i = 0; i <= runs; i++) {
    const r = await once(page, cdp);
    if (i === 0) cold = r.ms;
    else {
      ms.push(r.ms);
      if (r.inPage !== undefined) inPage.push(r.inPage);
    }
    bytes = r.bytes;
  }
  await page.close();
  const s = stats(ms);
  const ip = inPage.length ? stats(inPage) : null;
  rows.push({
    page: file,
    tool,
    'p50 ms': +s.p50.toFixed(1),
    'p95 ms': +s.p95.toFixed(1),
    'cold ms': +cold.toFixed(1),
    'in-page p50 ms': ip ? +ip.p50.toFixed(1) : '',
    bytes,
  });
}

try {
  for (const file of files.length ? files : ['large.html', 'huge.html']) {
    await measure(file, 'walker', async (page, cdp) => {
      page.ctx ??= await isolatedWorld(cdp);
      const r = await runWalker(cdp, page.ctx);
      return { ms: r.wallMs, inPage: r.result.ms, bytes: r.bytes };
    });
    await measure(file, 'walker (full text)', async (page, cdp) => {
      page.ctx ??= await isolatedWorld(cdp);
      const r = await runWalker(cdp, page.ctx, { dropRepeatedText: false });
      return { ms: r.wallMs, inPage: r.result.ms, bytes: r.bytes };
    });
    await measure(file, 'walker (returned by value, not as a string)', async (page, cdp) => {
      page.ctx ??= await isolatedWorld(cdp);
      const expression = `(${WALKER.trim()})({})`;
      const t = performance.now();
      const r = await cdp.send('Runtime.evaluate', { expression, contextId: page.ctx, returnByValue: true });
      return { ms: performance.now() - t, inPage: r.result.value.ms, bytes: Buffer.byteLength(JSON.stringify(r.result.value)) };
    });
    await measure(file, 'getFullAXTree', async (page, cdp) => {
      const t = performance.now();
      const frames = await axFrames(cdp);
      const ms = performance.now() - t;
      const bytes = frames.reduce((b, f) => b + Buffer.byteLength(JSON.stringify({ nodes: f.nodes })), 0);
      return { ms, bytes };
    });
    await measure(file, 'playwright ariaSnapshot (body)', async (page) => {
      const t = performance.now();
      const text = await page.locator('body').ariaSnapshot();
      return { ms: performance.now() - t, bytes: Buffer.byteLength(text) };
    });
    await measure(file, "playwright ariaSnapshot (mode 'ai')", async (page) => {
      if (typeof page.ariaSnapshot !== 'function') return { ms: NaN, bytes: 0 };
      const t = performance.now();
      const text = await page.ariaSnapshot({ mode: 'ai' });
      return { ms: performance.now() - t, bytes: Buffer.byteLength(text) };
    });
  }
} finally {
  await browser.close();
  server.close();
}
console.table(rows);
