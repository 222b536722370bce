// Shared by walker_agreement.mjs and walker_bench.mjs: playwright-core (never downloads a
// browser), the fixture site, the walker run as deskpilot would run it (an isolated world over
// CDP), and a JavaScript port of snapshot.rs's Renderer to compare whole snapshots.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '../../../..');
export const WALKER = fs.readFileSync(path.join(repo, 'crates/browser/src/js/snapshot_walker.js'), 'utf8');

/** playwright-core: $DESKPILOT_PLAYWRIGHT_CORE, else the one scripts/test or scripts/bench installed. */
export function playwright() {
  const require = createRequire(import.meta.url);
  const candidates = [
    process.env.DESKPILOT_PLAYWRIGHT_CORE,
    path.join(repo, 'target/test-node/node_modules/playwright-core'),
    path.join(repo, 'target/bench-node/node_modules/playwright-core'),
    '/work/main/target/test-node/node_modules/playwright-core',
    '/work/main/target/bench-node/node_modules/playwright-core',
  ].filter(Boolean);
  for (const c of candidates) {
    if (fs.existsSync(path.join(c, 'package.json'))) return require(c);
  }
  throw new Error('no playwright-core; set DESKPILOT_PLAYWRIGHT_CORE (tried ' + candidates.join(', ') + ')');
}

export async function launch() {
  const { chromium } = playwright();
  return chromium.launch({
    executablePath: process.env.DESKPILOT_CHROMIUM || '/usr/bin/chromium',
    headless: true,
  });
}

/** fixtures/web (as the e2e tests serve it: `/frame`, `/second`, …) and this folder's pages. */
export function serve() {
  const dirs = [path.join(repo, 'fixtures/web'), here];
  const server = http.createServer((req, res) => {
    let p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (p === '/slow') return res.end('slow done');
    if (p === '/') p = '/index';
    for (const dir of dirs) {
      let f = path.join(dir, path.normalize(p));
      if (!fs.existsSync(f) && fs.existsSync(f + '.html')) f += '.html';
      if (f.endsWith('.html') && fs.existsSync(f) && fs.statSync(f).isFile()) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return res.end(fs.readFileSync(f));
      }
    }
    res.writeHead(404);
    res.end('missing');
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, port: server.address().port })));
}

/** The pages to check: every fixtures/web/*.html, then this folder's. */
export function pages() {
  const list = (d) => fs.readdirSync(d).filter((f) => f.endsWith('.html')).sort();
  return [...list(path.join(repo, 'fixtures/web')), ...list(here)];
}

/** An isolated world in the page's main frame, as deskpilot would make it; its context id. */
export async function isolatedWorld(cdp) {
  const { frameTree } = await cdp.send('Page.getFrameTree');
  const { executionContextId } = await cdp.send('Page.createIsolatedWorld', {
    frameId: frameTree.frame.id,
    worldName: 'deskpilot',
    grantUniveralAccess: false,
  });
  return executionContextId;
}

/** Runs the walker in context `ctx`: `{ result, wallMs, bytes }` (bytes: its JSON). */
export async function runWalker(cdp, ctx, opts = {}) {
  const expression = `(${WALKER.trim()})(${JSON.stringify({ ...opts, json: true })})`;
  const t = performance.now();
  const r = await cdp.send('Runtime.evaluate', { expression, contextId: ctx, returnByValue: true });
  const wallMs = performance.now() - t;
  if (r.exceptionDetails) throw new Error('walker threw: ' + (r.exceptionDetails.exception?.description || r.exceptionDetails.text));
  const json = r.result.value;
  return { result: JSON.parse(json), wallMs, bytes: Buffer.byteLength(json) };
}

/** The element of walker id `id`, as a DOM backend node id (what deskpilot's actions take). */
export async function backendOf(cdp, ctx, id) {
  const r = await cdp.send('Runtime.evaluate', {
    expression: `window[Symbol.for('deskpilot.node')](${Number(id)})`,
    contextId: ctx,
  });
  if (!r.result.objectId) return null;
  const d = await cdp.send('DOM.describeNode', { objectId: r.result.objectId });
  await cdp.send('Runtime.releaseObject', { objectId: r.result.objectId });
  return d.node.backendNodeId;
}

/** Every same-session frame's getFullAXTree, as snapshot.rs's FrameTree list. */
export async function axFrames(cdp) {
  const { frameTree } = await cdp.send('Page.getFrameTree');
  const ids = [];
  const collect = (t) => {
    ids.push(t.frame.id);
    for (const c of t.childFrames || []) collect(c);
  };
  collect(frameTree);
  const frames = [];
  for (const [i, frame] of ids.entries()) {
    let nodes;
    try {
      nodes = (await cdp.send('Accessibility.getFullAXTree', { frameId: frame })).nodes;
    } catch (e) {
      continue; // an out-of-process frame: another session's
    }
    let owner = null;
    if (i > 0) {
      try {
        owner = (await cdp.send('DOM.getFrameOwner', { frameId: frame })).backendNodeId;
      } catch (e) {
        owner = null;
      }
    }
    frames.push({ frame, owner, nodes });
  }
  return frames;
}

// ---- A port of crates/browser/src/snapshot.rs's Renderer (render, is_interactive, …). ----

export const INTERACTIVE = ['button', 'link', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox', 'listbox', 'option',
  'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'switch', 'slider', 'spinbutton', 'treeitem', 'textField', 'popUpButton'];
const WRAPPERS = ['generic', 'none', 'presentation', 'group', 'LineBreak', 'paragraph', 'LabelText', 'strong', 'emphasis', 'mark', 'rowgroup', 'Section'];

const roleOf = (n) => n?.role?.value ?? '';
const nameOf = (n) => (n?.name?.value ?? '').trim();
export const property = (n, name) => {
  const p = (n.properties || []).find((p) => p.name === name);
  return p ? p.value?.value : undefined;
};
export function isInteractive(n) {
  const role = roleOf(n);
  return INTERACTIVE.includes(role) || (property(n, 'focusable') === true && !['RootWebArea', 'WebArea', 'Iframe'].includes(role));
}
const skippedOutright = (n) => n.ignored === true || ['InlineTextBox', 'ListMarker'].includes(roleOf(n)) || (roleOf(n) === 'image' && !nameOf(n));
/** The flags and value the Renderer prints for a node. */
export function printed(n) {
  let s = '';
  for (const f of ['checked', 'disabled', 'expanded', 'selected', 'pressed']) {
    const v = property(n, f);
    if (v === true || v === 'true') s += ` [${f}]`;
  }
  const v = n.value?.value;
  if (isPassword(n)) s += ' [password]';
  else if (typeof v === 'string' && v) s += ` value="${[...v].slice(0, 120).join('')}"`;
  return s;
}
/** A password field: the walker's `protected`, or Chromium's value of mask characters. */
export const isPassword = (n) => property(n, 'protected') === true || (typeof n.value?.value === 'string' && /^[•●]+$/.test(n.value.value));

export function render(frames, maxLines = Infinity) {
  const refs = new Map();
  let next = 0;
  const out = { text: '', targets: [], lines: 0, omitted: 0 };
  const frameUnder = (b) => frames.find((f) => f.owner === b);
  const renderFrame = (frame, depth) => {
    const index = new Map(frame.nodes.filter((n) => typeof n.nodeId === 'string').map((n) => [n.nodeId, n]));
    for (const root of frame.nodes.filter((n) => typeof n.parentId !== 'string' || !index.has(n.parentId))) node(frame, index, root, depth, '', '');
  };
  const children = (index, n) => (n.childIds || []).map((id) => index.get(id)).filter(Boolean);
  const line = (frame, n) => {
    const role = roleOf(n);
    const name = nameOf(n);
    if (role === 'StaticText') return `text: "${name}"`;
    let l = role + (name ? ` "${name}"` : '') + printed(n);
    if (isInteractive(n) && typeof n.backendDOMNodeId === 'number') {
      const key = frame.frame + ' ' + n.backendDOMNodeId;
      if (!refs.has(key)) refs.set(key, 'e' + ++next);
      const r = refs.get(key);
      l += ` [ref=${r}]`;
      out.targets.push({ ref: r, frame: frame.frame, backend: n.backendDOMNodeId, role, name });
    }
    return l;
  };
  const emit = (depth, l) => {
    if (out.lines >= maxLines) return void out.omitted++;
    out.text += '  '.repeat(depth) + '- ' + l + '\n';
    out.lines++;
  };
  const inlineRow = (frame, index, row) => {
    const cells = children(index, row);
    if (!cells.length) return null;
    const parts = [];
    for (const cell of cells) {
      if (!['cell', 'gridcell', 'columnheader', 'rowheader'].includes(roleOf(cell))) return null;
      const name = nameOf(cell);
      const inner = children(index, cell).filter((c) => !skippedOutright(c));
      if (inner.every((c) => roleOf(c) === 'StaticText' && name.includes(nameOf(c)))) {
        parts.push([null, `"${name}"`]);
        continue;
      }
      if (inner.length !== 1) return null;
      const control = inner[0];
      if (!isInteractive(control) || !children(index, control).every((g) => skippedOutright(g) || roleOf(g) === 'StaticText')) return null;
      parts.push([control, '']);
    }
    let l = 'row:';
    parts.forEach(([c, t], i) => {
      l += i === 0 ? ' ' : ' | ';
      l += c ? line(frame, c) : t;
    });
    return l;
  };
  const node = (frame, index, n, depth, parentName, prefix) => {
    const role = roleOf(n);
    const name = nameOf(n);
    const kids = children(index, n);
    const repeats = name && parentName.includes(name) && !isInteractive(n) && kids.every(skippedOutright);
    const skip = skippedOutright(n) || (role === 'RootWebArea' && depth > 0) || (WRAPPERS.includes(role) && !name) || (role === 'StaticText' && !name) || repeats;
    let nextDepth = depth;
    let ownName = parentName;
    if (!skip) {
      const visible = kids.filter((c) => !skippedOutright(c));
      if (!isInteractive(n) && visible.length === 1 && isInteractive(visible[0]) && (!name || nameOf(visible[0]) === name)) {
        return node(frame, index, visible[0], depth, parentName, `${prefix}${role} > `);
      }
      if (role === 'row' && !name) {
        const l = inlineRow(frame, index, n);
        if (l !== null) return emit(depth, prefix + l);
      }
      emit(depth, prefix + line(frame, n));
      if (isPassword(n)) return;
      nextDepth = depth + 1;
      ownName = name;
    }
    const siblingNames = kids.filter((c) => roleOf(c) !== 'StaticText').map(nameOf).filter(Boolean);
    for (const c of kids) {
      if (roleOf(c) === 'StaticText' && siblingNames.includes(nameOf(c))) continue;
      node(frame, index, c, nextDepth, ownName, skip ? prefix : '');
    }
    if (role === 'Iframe' && typeof n.backendDOMNodeId === 'number') {
      const inner = frameUnder(n.backendDOMNodeId);
      if (inner) renderFrame(inner, nextDepth);
    }
  };
  const top = frames.find((f) => f.owner === null);
  if (top) renderFrame(top, 0);
  return out;
}

export function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * (s.length - 1) + 0.5))];
  return { p50: q(0.5), p95: q(0.95), min: s[0], max: s[s.length - 1], n: s.length };
}
