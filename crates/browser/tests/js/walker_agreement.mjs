// Agreement of the in-page walker (crates/browser/src/js/snapshot_walker.js) with Chromium's
// Accessibility.getFullAXTree on every fixture page.
//
//   node crates/browser/tests/js/walker_agreement.mjs [page.html …] [--verbose]
//
// For each page: the walker runs in an isolated world (as deskpilot would run it); each node
// it would give a ref (snapshot.rs: an INTERACTIVE role, or focusable) is resolved back to its
// DOM node (walker id -> element -> DOM.describeNode -> backendNodeId, the path deskpilot's
// actions would take) and compared with the getFullAXTree node of that DOM node: role, name
// and what the Renderer prints (flags, value). Then both are rendered with a port of the
// Renderer and the lines compared. Exit status 1 on a disagreement that is not listed as
// intended below.

import { launch, serve, pages, isolatedWorld, runWalker, backendOf, axFrames, render, isInteractive, printed } from './harness.mjs';

// Differences on purpose, by page and key (`missing|extra|role|name|printed` + backend's
// role and name); each has its reason in snapshot_walker.md.
const INTENDED = [
  // <input type=date>: Chromium exposes the spin fields and the picker button of its
  // user-agent shadow DOM, which a page script cannot see.
  { page: 'aria.html', kind: 'missing', role: 'spinbutton', name: /^(Month|Day|Year) / },
  { page: 'aria.html', kind: 'missing', role: 'button', name: /^Show date picker/ },
];

const args = process.argv.slice(2);
const verbose = args.includes('--verbose');
const only = args.filter((a) => !a.startsWith('--'));
const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();

const { server, port } = await serve();
const browser = await launch();
let failed = 0;
const summary = [];
try {
  for (const file of only.length ? only : pages()) {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/${file}`, { waitUntil: 'load' });
    await page.waitForTimeout(300); // frames that load late (a cross-site one)
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('DOM.enable');
    await cdp.send('Page.enable');
    const ctx = await isolatedWorld(cdp);
    const { result } = await runWalker(cdp, ctx);

    // The walker's ref-bearing nodes, by backend node id.
    const walker = new Map();
    const wanted = result.nodes.filter(isInteractive);
    const backends = await Promise.all(wanted.map((n) => backendOf(cdp, ctx, n.backendDOMNodeId)));
    let unresolved = 0;
    wanted.forEach((n, i) => (backends[i] ? walker.set(backends[i], n) : unresolved++));

    const frames = await axFrames(cdp);
    const ax = new Map();
    for (const f of frames) for (const n of f.nodes) if (!n.ignored && isInteractive(n) && n.backendDOMNodeId) ax.set(n.backendDOMNodeId, n);

    const problems = [];
    const add = (kind, n, detail) => {
      const role = n.role?.value;
      const name = norm(n.name?.value);
      const intended = INTENDED.some((i) => i.page === file && i.kind === kind && i.role === role && i.name.test(name));
      problems.push({ kind, role, name, detail, intended });
    };
    for (const [b, a] of ax) {
      const w = walker.get(b);
      if (!w) {
        add('missing', a, '');
        continue;
      }
      if (a.role.value !== w.role.value) add('role', a, `walker: ${w.role.value}`);
      else if (norm(a.name?.value) !== norm(w.name?.value)) add('name', a, `walker: "${norm(w.name?.value)}"`);
      else if (printed(a) !== printed(w)) add('printed', a, `chromium:${printed(a) || ' -'} walker:${printed(w) || ' -'}`);
    }
    for (const [b, w] of walker) if (!ax.has(b)) add('extra', w, '');

    // Whole snapshots, refs left out: lines one has and the other lacks.
    const strip = (t) => t.replace(/ \[ref=e\d+\]/g, '');
    const axFull = render(frames).text;
    const wFull = render([{ frame: 'top', owner: null, nodes: result.nodes }]).text;
    const axText = strip(axFull).split('\n');
    const wText = strip(wFull).split('\n');
    const count = (lines) => lines.reduce((m, l) => m.set(l, (m.get(l) || 0) + 1), new Map());
    const ca = count(axText);
    const cw = count(wText);
    const onlyAx = [];
    const onlyW = [];
    for (const [l, k] of ca) for (let i = (cw.get(l) || 0); i < k; i++) onlyAx.push(l);
    for (const [l, k] of cw) for (let i = (ca.get(l) || 0); i < k; i++) onlyW.push(l);

    // Ids survive a second snapshot, and one taken after the page changed (a node added at the
    // top of the body): every element keeps its id.
    const again = (await runWalker(cdp, ctx)).result;
    const ids = (r) => new Map(r.nodes.filter((n) => n.backendDOMNodeId).map((n) => [n.backendDOMNodeId, `${n.role.value} ${n.name?.value ?? ''}`]));
    const before = ids(result);
    const same = (m) => [...before].every(([id, v]) => m.get(id) === v);
    let stable = same(ids(again));
    await cdp.send('Runtime.evaluate', { expression: "document.body.prepend(Object.assign(document.createElement('button'), {textContent: 'Added later'}))" });
    const changed = (await runWalker(cdp, ctx)).result;
    stable = stable && same(ids(changed)) && changed.nodes.some((n) => n.name?.value === 'Added later' && !before.has(n.backendDOMNodeId));
    if (!stable) failed++;

    const bad = problems.filter((p) => !p.intended);
    failed += bad.length + unresolved;
    summary.push({
      page: file,
      refs_chromium: ax.size,
      refs_walker: walker.size,
      disagree: bad.length,
      intended: problems.length - bad.length,
      unresolved,
      remote_frames: result.remote.length,
      lines_chromium: axText.length - 1,
      lines_walker: wText.length - 1,
      lines_only_chromium: onlyAx.length,
      lines_only_walker: onlyW.length,
      same_text: axFull === wFull,
      stable_ids: stable,
    });
    for (const p of problems) {
      if (p.intended && !verbose) continue;
      console.log(`${file}: ${p.intended ? '(intended) ' : ''}${p.kind} ${p.role} "${p.name}" ${p.detail}`);
    }
    if (verbose) {
      for (const l of onlyAx.slice(0, 40)) console.log(`${file}: only chromium renders: ${l.trim()}`);
      for (const l of onlyW.slice(0, 40)) console.log(`${file}: only walker renders:   ${l.trim()}`);
    }
    await page.close();
  }
} finally {
  await browser.close();
  server.close();
}
console.table(summary);
console.log(failed ? `${failed} disagreement(s)` : 'walker agrees with getFullAXTree on every ref-bearing node');
process.exit(failed ? 1 : 0);
