(options) => {
  // The page's accessibility tree, computed in the page: the nodes of
  // `Accessibility.getFullAXTree` that snapshot.rs's Renderer reads (nodeId, parentId, role,
  // name, properties, childIds, backendDOMNodeId, value), without asking the browser's
  // accessibility engine. Run in an isolated world; see snapshot_walker.md for the contract.
  // `backendDOMNodeId` is the walker's own id of the element, stable while the element lives;
  // `window[Symbol.for('deskpilot.node')](id)` gives the element back.
  const t0 = performance.now();
  const opts = options || {};
  const dropRepeatedText = opts.dropRepeatedText !== false;
  const maxValue = opts.maxValue || 1000;

  // Ids: element (or document) -> number, kept on this world's window across snapshots.
  const STATE = Symbol.for('deskpilot.walker');
  let st = window[STATE];
  if (!st) {
    // `epoch` names this world's numbering: ids restart after a navigation (a new document, a
    // new world), so a ref table keyed by (frame, id) must also key by epoch.
    st = { ids: new WeakMap(), refs: new Map(), next: 0, epoch: Math.random().toString(36).slice(2, 10) };
    window[STATE] = st;
    window[Symbol.for('deskpilot.node')] = (id) => {
      const r = st.refs.get(id);
      const e = r && r.deref();
      return e && e.isConnected ? e : null;
    };
  }
  const idOf = (o) => {
    let id = st.ids.get(o);
    if (id === undefined) {
      id = ++st.next;
      st.ids.set(o, id);
      st.refs.set(id, new WeakRef(o));
    }
    return id;
  };

  const out = [];
  const remote = [];
  let texts = 0;

  // Computed style, read once per element and walk.
  const styles = new Map();
  const style = (el) => {
    let s = styles.get(el);
    if (s === undefined) {
      const cs = el.ownerDocument.defaultView.getComputedStyle(el);
      s = { display: cs.display, visibility: cs.visibility };
      styles.set(el, s);
    }
    return s;
  };
  const inline = (d) => d.startsWith('inline') || d === 'contents';

  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title', 'base', 'datalist', 'param', 'source', 'track']);
  const LEAF = new Set(['img', 'svg', 'input', 'textarea', 'select', 'video', 'audio', 'canvas', 'object', 'embed', 'iframe', 'frame', 'progress', 'meter', 'hr', 'br', 'wbr', 'math']);
  const ARIA_ROLES = new Set(('alert alertdialog application article banner blockquote button caption cell checkbox code ' +
    'columnheader combobox complementary contentinfo definition deletion dialog directory document emphasis feed figure ' +
    'form generic grid gridcell group heading img insertion link list listbox listitem log main mark marquee math menu ' +
    'menubar menuitem menuitemcheckbox menuitemradio meter navigation none note option paragraph presentation progressbar ' +
    'radio radiogroup region row rowgroup rowheader scrollbar search searchbox separator slider spinbutton status strong ' +
    'subscript superscript switch tab table tablist tabpanel term textbox time timer toolbar tooltip tree treegrid treeitem').split(' '));
  // ARIA roles Chromium reports under another name.
  const CHROME_ROLE = { img: 'image', directory: 'list' };
  // Roles whose name comes from their content (Chromium adds term, summary, and rows in grids).
  const FROM_CONTENT = new Set(['button', 'cell', 'checkbox', 'columnheader', 'gridcell', 'heading', 'link', 'menuitem',
    'menuitemcheckbox', 'menuitemradio', 'option', 'radio', 'rowheader', 'switch', 'tab', 'tooltip', 'treeitem', 'term',
    'DisclosureTriangle']);
  const WRAPPERS = new Set(['generic', 'group', 'paragraph', 'LabelText', 'strong', 'emphasis', 'mark', 'rowgroup']);
  // snapshot.rs's INTERACTIVE: roles that get a ref.
  const INTERACTIVE = new Set(['button', 'link', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox', 'listbox', 'option',
    'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'switch', 'slider', 'spinbutton', 'treeitem']);
  const CHECKABLE = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio']);
  const SELECTABLE = new Set(['option', 'tab', 'gridcell', 'row', 'treeitem', 'columnheader', 'rowheader']);
  const RANGE = new Set(['slider', 'spinbutton', 'progressbar', 'meter', 'scrollbar']);
  const TEXTBOX = new Set(['textbox', 'searchbox']);
  const PRESENTATIONAL = new Set(['none', 'presentation']);
  const SECTIONING = new Set(['article', 'aside', 'main', 'nav', 'section']);
  const GLOBAL_ARIA = ['aria-label', 'aria-labelledby', 'aria-describedby', 'aria-live', 'aria-owns', 'aria-controls', 'aria-details', 'aria-keyshortcuts', 'aria-roledescription'];

  // Whitespace collapsed and trimmed (the replace only when there is more than single spaces).
  const UNFLAT = /[\t\n\v\f\r\u00a0\u00ad\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]|  /;
  const flat = (s) => (UNFLAT.test(s) ? s.replace(/[\s\u200b\u00ad]+/g, ' ') : s).trim();
  const FILLED = /[^\s\u200b\u00ad]/;
  const filled = (s) => !!s && FILLED.test(s);
  const idRefs = (el, attr) => {
    const v = el.getAttribute(attr);
    if (!v) return [];
    const root = el.getRootNode();
    const res = [];
    for (const id of v.split(/\s+/)) {
      if (!id) continue;
      const e = root.getElementById ? root.getElementById(id) : null;
      if (e && !res.includes(e)) res.push(e);
    }
    return res;
  };
  // Children in the flat tree: an open shadow root instead of the light children, a slot's
  // assigned nodes (or its fallback content).
  const kidsOf = (el) => {
    if (el.localName === 'slot') {
      const a = el.assignedNodes();
      if (a.length) return a;
    }
    return (el.shadowRoot || el).childNodes;
  };

  const explicitRole = (el) => {
    const r = el.getAttribute('role');
    if (!r) return null;
    for (const t of r.trim().toLowerCase().split(/\s+/)) {
      if (ARIA_ROLES.has(t) || t.startsWith('doc-') || t.startsWith('graphics-')) return t;
    }
    return null;
  };
  const focusable = (el, tag, disabled) => {
    if (disabled) return false;
    if (el.hasAttribute('tabindex')) return true;
    if (tag === 'a' || tag === 'area') return el.hasAttribute('href');
    if (tag === 'dialog') return true;
    if (tag === 'iframe' || tag === 'frame') return false;
    if (el.tabIndex >= 0) return tag !== 'input' || el.type !== 'hidden';
    return el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable);
  };
  const hasGlobalAria = (el) => GLOBAL_ARIA.some((a) => el.hasAttribute(a));
  const scopedToSection = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      if (SECTIONING.has(p.localName)) return true;
      const r = p.getAttribute('role');
      if (r && /\b(article|complementary|main|navigation|region)\b/.test(r)) return true;
    }
    return false;
  };
  const thRole = (el) => {
    const scope = (el.getAttribute('scope') || '').toLowerCase();
    if (scope === 'col' || scope === 'colgroup') return 'columnheader';
    if (scope === 'row' || scope === 'rowgroup') return 'rowheader';
    const row = el.parentElement;
    if (!row || row.localName !== 'tr') return 'columnheader';
    if (row.parentElement && row.parentElement.localName === 'thead') return 'columnheader';
    for (const c of row.children) if (c.localName === 'td') return 'rowheader';
    return 'columnheader';
  };
  const inGrid = (el) => {
    const t = el.closest('table,[role=grid],[role=treegrid],[role=table]');
    if (!t) return false;
    const r = explicitRole(t);
    return r === 'grid' || r === 'treegrid';
  };
  const inputRole = (el) => {
    const type = (el.getAttribute('type') || 'text').toLowerCase();
    switch (type) {
      case 'hidden': return null;
      case 'checkbox': return 'checkbox';
      case 'radio': return 'radio';
      case 'button': case 'submit': case 'reset': case 'image': case 'file': return 'button';
      case 'range': return 'slider';
      case 'number': return 'spinbutton';
      case 'color': return 'ColorWell';
      case 'date': return 'Date';
      case 'datetime-local': case 'month': case 'week': return 'DateTime';
      case 'time': return 'InputTime';
      case 'search': return el.hasAttribute('list') ? 'combobox' : 'searchbox';
      default: return el.hasAttribute('list') && idRefs(el, 'list').some((d) => d.localName === 'datalist') ? 'combobox' : 'textbox';
    }
  };
  // The role HTML gives `el` (Chromium's names for the ones ARIA has none for).
  const implicitRole = (el, tag) => {
    switch (tag) {
      case 'a': case 'area': return el.hasAttribute('href') ? 'link' : 'generic';
      case 'article': return 'article';
      case 'aside': return 'complementary';
      case 'blockquote': return 'blockquote';
      case 'button': return 'button';
      case 'caption': return 'caption';
      case 'code': return 'code';
      case 'dd': return 'definition';
      case 'del': case 's': return 'deletion';
      case 'details': return 'group';
      case 'dfn': case 'dt': return 'term';
      case 'dialog': return 'dialog';
      case 'dl': return 'DescriptionList';
      case 'em': return 'emphasis';
      case 'fieldset': case 'optgroup': case 'hgroup': case 'address': return 'group';
      case 'figcaption': return 'Figcaption';
      case 'figure': return 'figure';
      case 'footer': return scopedToSection(el) ? 'sectionfooter' : 'contentinfo';
      case 'form': return 'form';
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'header': return scopedToSection(el) ? 'sectionheader' : 'banner';
      case 'hr': return 'separator';
      case 'iframe': case 'frame': return 'Iframe';
      case 'img': return el.getAttribute('alt') === '' && !el.hasAttribute('title') && !hasGlobalAria(el) && !el.hasAttribute('tabindex') ? 'none' : 'image';
      case 'input': return inputRole(el);
      case 'ins': return 'insertion';
      case 'label': return 'LabelText';
      case 'legend': return 'Legend';
      case 'li': return 'listitem';
      case 'main': return 'main';
      case 'mark': return 'mark';
      case 'math': return 'math';
      case 'menu': case 'ol': case 'ul': return 'list';
      case 'meter': return 'meter';
      case 'nav': return 'navigation';
      case 'option': return 'option';
      case 'output': return 'status';
      case 'p': return 'paragraph';
      case 'progress': return 'progressbar';
      case 'search': return 'search';
      case 'section': return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') || el.hasAttribute('title') ? 'region' : 'generic';
      case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'strong': return 'strong';
      case 'sub': return 'subscript';
      case 'sup': return 'superscript';
      case 'summary': return 'DisclosureTriangle';
      case 'svg': return 'image';
      case 'table': return 'table';
      case 'thead': case 'tfoot': return 'rowgroup';
      case 'tbody': return 'none';
      case 'td': return inGrid(el) ? 'gridcell' : 'cell';
      case 'th': return thRole(el);
      case 'textarea': return 'textbox';
      case 'time': return 'time';
      case 'tr': return 'row';
      case 'abbr': return 'Abbr';
      case 'canvas': return 'Canvas';
      case 'video': return 'Video';
      case 'audio': return 'Audio';
      case 'ruby': return 'Ruby';
      default: return 'generic';
    }
  };
  // Items of a list or cells of a table whose container is presentational are too.
  const INHERITS_PRESENTATION = { li: ['ul', 'ol', 'menu'], tr: ['table', 'tbody', 'thead', 'tfoot'], td: ['tr'], th: ['tr'], tbody: ['table'], thead: ['table'], tfoot: ['table'], dt: ['dl'], dd: ['dl'] };
  const roleOf = (el, tag) => {
    const explicit = explicitRole(el);
    if (explicit && !PRESENTATIONAL.has(explicit)) return CHROME_ROLE[explicit] || explicit;
    const implicit = implicitRole(el, tag);
    if (explicit) {
      // role=none yields to focus and global ARIA attributes.
      if (focusable(el, tag, false) || hasGlobalAria(el)) return implicit;
      return 'none';
    }
    const parents = INHERITS_PRESENTATION[tag];
    if (parents) {
      for (let c = el, p = el.parentElement; p && (INHERITS_PRESENTATION[c.localName] || []).includes(p.localName); c = p, p = p.parentElement) {
        const r = explicitRole(p);
        if (r && PRESENTATIONAL.has(r)) return 'none';
        if (r) break;
      }
    }
    return implicit;
  };

  // CSS generated content counts in names; only looked up where a style sheet has ::before
  // or ::after rules (or cannot be read).
  const pseudoRoots = new Map();
  const rulesHavePseudo = (rules, budget) => {
    for (const r of rules) {
      if (--budget.n < 0) return true;
      if (r.selectorText && /:(before|after)/i.test(r.selectorText)) return true;
      if (r.styleSheet && sheetHasPseudo(r.styleSheet, budget)) return true;
      if (r.cssRules && r.cssRules.length && rulesHavePseudo(r.cssRules, budget)) return true;
    }
    return false;
  };
  const sheetHasPseudo = (sheet, budget) => {
    let rules;
    try {
      rules = sheet.cssRules;
    } catch (e) {
      return true;
    }
    return rulesHavePseudo(rules, budget);
  };
  const hasPseudo = (el) => {
    const root = el.getRootNode();
    let v = pseudoRoots.get(root);
    if (v === undefined) {
      const budget = { n: 50000 };
      const sheets = [...(root.styleSheets || []), ...(root.adoptedStyleSheets || [])];
      v = sheets.some((s) => sheetHasPseudo(s, budget));
      pseudoRoots.set(root, v);
    }
    return v;
  };
  const pseudoText = (el, which) => {
    if (!hasPseudo(el)) return '';
    const cs = el.ownerDocument.defaultView.getComputedStyle(el, which);
    const c = cs.content;
    if (!c || c === 'none' || c === 'normal' || cs.display === 'none') return '';
    let t = '';
    const slash = c.lastIndexOf(' / ');
    const src = slash >= 0 ? c.slice(slash + 3) : c;
    src.replace(/"((?:[^"\\]|\\.)*)"|attr\(\s*([\w-]+)\s*\)/g, (m, s, a) => {
      t += s !== undefined ? s.replace(/\\(.)/g, '$1') : el.getAttribute(a) || '';
      return m;
    });
    return t && cs.display !== 'inline' ? ' ' + t + ' ' : t;
  };

  // Hidden for a name computation (its ancestors already known shown).
  const hiddenHere = (el) => {
    if (SKIP.has(el.localName)) return true;
    if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert')) return true;
    const s = style(el);
    return s.display === 'none' || (s.visibility !== 'visible' && s.display !== 'contents');
  };
  const selectText = (el) => {
    const o = el.selectedOptions && el.selectedOptions.length ? el.selectedOptions[0] : el.options && el.options[0];
    return o ? o.label || o.text : '';
  };
  const rangeValue = (el) => {
    if (el.hasAttribute('aria-valuetext')) return el.getAttribute('aria-valuetext');
    if (el.hasAttribute('aria-valuenow')) return el.getAttribute('aria-valuenow');
    return 'value' in el ? String(el.value) : '';
  };

  // The text of `el`'s content, for a name from content or a referenced label.
  const contentText = (el, visited, hidden) => {
    let t = pseudoText(el, '::before');
    const kids = kidsOf(el);
    for (let i = 0; i < kids.length; i++) {
      const c = kids[i];
      if (c.nodeType === 3) {
        t += c.data;
      } else if (c.nodeType === 1) {
        if (!hidden && hiddenHere(c)) continue;
        if (c.localName === 'br') {
          t += ' ';
          continue;
        }
        const s = style(c).display;
        const part = textAlternative(c, visited, hidden, false);
        t += inline(s) ? part : ' ' + part + ' ';
      }
    }
    return t + pseudoText(el, '::after');
  };
  // accname's text alternative of `el` met inside another name computation (a descendant,
  // a label, an aria-labelledby target); `hidden`: inside a hidden referenced node.
  const textAlternative = (el, visited, hidden, inLabelledBy) => {
    if (visited.has(el)) return '';
    visited.add(el);
    const tag = el.localName;
    if (SKIP.has(tag)) return '';
    if (!inLabelledBy && el.hasAttribute('aria-labelledby')) {
      const t = idRefs(el, 'aria-labelledby').map((r) => textAlternative(r, visited, hidden || hiddenHere(r), true)).join(' ');
      if (filled(t)) return t;
    }
    const role = roleOf(el, tag);
    // An embedded control is its value.
    if (TEXTBOX.has(role)) return tag === 'input' || tag === 'textarea' ? el.value : el.textContent;
    if (role === 'combobox' || role === 'listbox') {
      if (tag === 'select') return selectText(el);
      if (tag === 'input') return el.value;
      const sel = el.querySelector('[role=option][aria-selected=true]');
      return sel ? textAlternative(sel, visited, hidden, false) : '';
    }
    if (RANGE.has(role)) return rangeValue(el);
    const label = el.getAttribute('aria-label');
    if (filled(label)) return label;
    const n = nativeName(el, tag, role, visited, hidden);
    if (filled(n)) return n;
    if (role !== 'image') {
      const t = contentText(el, visited, hidden);
      if (filled(t)) return t;
    }
    return el.getAttribute('title') || '';
  };
  const labelsText = (el, visited) => {
    const labels = el.labels;
    if (!labels || !labels.length) return null;
    const t = [...labels].map((l) => textAlternative(l, visited, hiddenHere(l), false)).join(' ');
    return filled(t) ? t : null;
  };
  const childOf = (el, tag) => {
    for (const c of el.children) if (c.localName === tag) return c;
    return null;
  };
  // Names HTML gives (labels, alt, legend, caption, value of an input button…); null for none.
  const nativeName = (el, tag, role, visited, hidden) => {
    switch (tag) {
      case 'input': {
        const type = el.type;
        if (type === 'button' || type === 'submit' || type === 'reset') {
          return labelsText(el, visited) || el.value || (type === 'submit' ? 'Submit' : type === 'reset' ? 'Reset' : el.getAttribute('title'));
        }
        if (type === 'image') return labelsText(el, visited) || el.getAttribute('alt') || el.getAttribute('title') || 'Submit';
        const l = labelsText(el, visited);
        if (l) return l;
        if (el.getAttribute('title')) return el.getAttribute('title');
        return el.getAttribute('placeholder');
      }
      case 'textarea': case 'select': case 'meter': case 'progress': case 'output': case 'button':
        return labelsText(el, visited) || (tag === 'textarea' && !el.getAttribute('title') ? el.getAttribute('placeholder') : null);
      case 'img': case 'area':
        return el.getAttribute('alt') || el.getAttribute('title');
      case 'fieldset': {
        const l = childOf(el, 'legend');
        return l ? textAlternative(l, visited, hidden, false) : null;
      }
      case 'table': {
        const c = childOf(el, 'caption');
        return c ? textAlternative(c, visited, hidden, false) : el.getAttribute('summary');
      }
      case 'optgroup':
        return el.getAttribute('label');
      case 'option':
        return el.label || el.text;
      case 'svg': {
        const t = childOf(el, 'title');
        return t ? t.textContent : null;
      }
      default:
        return null;
    }
  };
  // The accessible name of a node the walk keeps.
  const nameOf = (el, tag, role) => {
    if (role === 'none' || role === 'generic' && !el.hasAttribute('aria-label') && !el.hasAttribute('aria-labelledby')) return '';
    const visited = new Set([el]);
    if (el.hasAttribute('aria-labelledby')) {
      const t = idRefs(el, 'aria-labelledby').map((r) => (r === el ? textAlternative(el, new Set(), false, true) : textAlternative(r, visited, hiddenHere(r), true))).join(' ');
      const f = flat(t);
      if (f) return f;
    }
    const label = el.getAttribute('aria-label');
    if (filled(label)) return flat(label);
    const n = nativeName(el, tag, role, visited, false);
    if (filled(n)) return flat(n);
    if (FROM_CONTENT.has(role) || (role === 'row' && inGrid(el))) {
      const t = flat(contentText(el, visited, false));
      if (t) return t;
    }
    if (tag === 'iframe' || tag === 'frame' || role !== 'LabelText') {
      const title = el.getAttribute('title');
      if (filled(title)) return flat(title);
    }
    return '';
  };

  const prop = (props, name, value) => props.push({ name, value: { value } });

  // One node of the walk. Appends the nodes that stand in `el`'s place (itself, or its
  // children when it is left out) to `kids`; returns whether it is inline-level content.
  const walk = (node, ctx, kids) => {
    if (node.nodeType === 3) {
      if (!ctx.shown || ctx.mute) return false;
      const text = flat(node.data);
      if (!text) return false;
      if (ctx.repeats && ctx.repeats.includes(text)) return true;
      const n = { nodeId: 't' + ++texts, role: { value: 'StaticText' }, name: { value: text } };
      out.push(n);
      kids.push(n);
      return true;
    }
    if (node.nodeType !== 1) return false;
    const el = node;
    const tag = el.localName;
    if (SKIP.has(tag)) return false;
    if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert')) return false;
    const s = style(el);
    if (s.display === 'none') return false;
    if (ctx.modal && !ctx.inModal) {
      if (el === ctx.modal) ctx = { ...ctx, inModal: true };
      else if (!el.contains(ctx.modal)) return false;
    }
    const shown = s.visibility === 'visible';
    const transparentTag = tag === 'html' || tag === 'body' || tag === 'slot';
    let role = transparentTag ? 'none' : roleOf(el, tag);
    if (role === null) return false;
    const ariaDisabled = ctx.ariaDisabled || el.getAttribute('aria-disabled') === 'true';
    let disabled = ariaDisabled;
    if (!disabled && (tag === 'button' || tag === 'input' || tag === 'select' || tag === 'textarea' || tag === 'option' || tag === 'optgroup' || tag === 'fieldset')) disabled = el.matches(':disabled');
    const canFocus = focusable(el, tag, disabled);
    const editable = el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable);
    if (role === 'generic' && (canFocus || editable || el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby'))) role = 'generic!';
    // Left out, children kept: presentational and hidden elements, display: contents wrappers,
    // labels of checkboxes (Chromium names the box with them and drops their text).
    let keep = shown && role !== 'none' && !(s.display === 'contents' && role === 'generic');
    let childCtx = ctx;
    if (ariaDisabled !== ctx.ariaDisabled || shown !== ctx.shown) childCtx = { ...ctx, ariaDisabled, shown };
    if (role === 'LabelText' && keep) {
      const control = el.control;
      if (control && (control.type === 'checkbox' || control.type === 'radio')) {
        keep = false;
        childCtx = { ...childCtx, mute: true };
      }
    }
    if (!keep) {
      let inl = false;
      if (!LEAF.has(tag)) {
        const list = kidsOf(el);
        for (let i = 0; i < list.length; i++) if (walk(list[i], childCtx, kids)) inl = true;
      }
      return inl || inline(s.display);
    }
    if (role === 'generic!') role = 'generic';
    const id = idOf(el);
    const n = { nodeId: String(id), role: { value: role }, backendDOMNodeId: id };
    const name = nameOf(el, tag, role);
    if (name) n.name = { value: name };
    const props = [];
    if (canFocus) prop(props, 'focusable', true);
    if (disabled) prop(props, 'disabled', true);
    const aria = (a) => el.getAttribute(a);
    if (CHECKABLE.has(role)) {
      let c;
      if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) c = el.indeterminate && el.type === 'checkbox' ? 'mixed' : String(el.checked);
      else c = aria('aria-checked') === 'true' ? 'true' : aria('aria-checked') === 'mixed' ? 'mixed' : 'false';
      prop(props, 'checked', c);
    }
    if (role === 'button' && el.hasAttribute('aria-pressed')) {
      const p = aria('aria-pressed');
      prop(props, 'pressed', p === 'true' || p === 'mixed' ? p : 'false');
    }
    if (tag === 'summary' && el.parentElement && el.parentElement.localName === 'details') prop(props, 'expanded', el.parentElement.open);
    else if (el.hasAttribute('aria-expanded')) prop(props, 'expanded', aria('aria-expanded') === 'true');
    else if (tag === 'select' && role === 'combobox') prop(props, 'expanded', false);
    if (tag === 'option') prop(props, 'selected', el.selected);
    else if (SELECTABLE.has(role) && el.hasAttribute('aria-selected')) prop(props, 'selected', aria('aria-selected') === 'true');
    if (role === 'heading') {
      const l = parseInt(aria('aria-level'), 10);
      prop(props, 'level', l > 0 ? l : /^h[1-6]$/.test(tag) ? +tag[1] : 2);
    } else if (el.hasAttribute('aria-level')) {
      const l = parseInt(aria('aria-level'), 10);
      if (l > 0) prop(props, 'level', l);
    }
    if (el.required || aria('aria-required') === 'true') prop(props, 'required', true);
    if (el.readOnly === true || aria('aria-readonly') === 'true') prop(props, 'readonly', true);
    // A password field says so and shows no value: not its mask, not its length.
    const secret = tag === 'input' && String(el.type).toLowerCase() === 'password';
    if (secret) prop(props, 'protected', true);
    if (props.length) n.properties = props;
    // Values: what a field holds (a password never), a select's choice, a range's number.
    let value;
    if (tag === 'input' || tag === 'textarea') {
      if (RANGE.has(role)) value = el.hasAttribute('aria-valuenow') ? Number(aria('aria-valuenow')) : Number(el.value);
      else if (el.type === 'file') value = el.files && el.files.length > 1 ? el.files.length + ' files' : el.files && el.files.length ? el.files[0].name : 'No file chosen';
      else if (role !== 'button' && role !== 'checkbox' && role !== 'radio' && !secret && el.value) value = el.value;
    } else if (tag === 'select') {
      if (role === 'combobox') value = selectText(el);
    } else if (RANGE.has(role)) {
      const v = tag === 'progress' || tag === 'meter' ? el.value : Number(aria('aria-valuenow'));
      if (!Number.isNaN(v)) value = v;
    } else if (editable || TEXTBOX.has(role)) {
      const v = flat(el.textContent);
      if (v) value = v;
    }
    if (typeof value === 'string' && value.length > maxValue) value = value.slice(0, maxValue);
    if (value !== undefined && value !== '') n.value = { value };

    const children = [];
    let inlineKids = false;
    if (tag === 'select') {
      selectChildren(el, role, children);
    } else if (tag === 'iframe' || tag === 'frame') {
      let doc = null;
      try {
        doc = el.contentDocument;
      } catch (e) {
        doc = null;
      }
      if (doc && doc.documentElement) children.push(documentNode(doc, childCtx));
      else remote.push({ id, src: el.src || '' });
    } else if (!LEAF.has(tag)) {
      let c = childCtx;
      // Text that only repeats the name of the control above it is left out (the renderer
      // drops it); nameless wrappers pass that name on, as the renderer does. Only under
      // controls: a heading or cell left without children would look like a repeated leaf.
      const control = canFocus || INTERACTIVE.has(role);
      const repeats = !dropRepeatedText ? null : name ? (control && FROM_CONTENT.has(role) ? name : null) : WRAPPERS.has(role) ? c.repeats : null;
      if (repeats !== c.repeats) c = { ...c, repeats };
      if (tag === 'details' && !el.open) {
        const summary = childOf(el, 'summary');
        if (summary) walk(summary, c, children);
      } else if (el.getAttribute('hidden') !== 'until-found') {
        const list = kidsOf(el);
        for (let i = 0; i < list.length; i++) if (walk(list[i], c, children)) inlineKids = true;
      }
    }
    // A nameless generic block is kept, as Chromium keeps it, only around inline content.
    if (role === 'generic' && !name && !canFocus && !editable && (inline(s.display) || !inlineKids) && !el.shadowRoot) {
      for (const k of children) kids.push(k);
      return inline(s.display);
    }
    if (children.length) {
      n.childIds = children.map((k) => k.nodeId);
      for (const k of children) k.parentId = n.nodeId;
    }
    out.push(n);
    kids.push(n);
    return inline(s.display);
  };
  const selectChildren = (el, role, children) => {
    let into = children;
    if (role === 'combobox') {
      into = [];
    }
    const option = (o) => {
      const id = idOf(o);
      const props = [];
      const dis = o.disabled || (o.parentElement && o.parentElement.localName === 'optgroup' && o.parentElement.disabled);
      if (!dis) prop(props, 'focusable', true);
      else prop(props, 'disabled', true);
      prop(props, 'selected', o.selected);
      const n = { nodeId: String(id), role: { value: 'option' }, name: { value: flat(o.label || o.text) }, properties: props, backendDOMNodeId: id };
      out.push(n);
      return n;
    };
    for (const c of el.children) {
      if (c.localName === 'option') {
        if (!c.hidden) into.push(option(c));
      } else if (c.localName === 'optgroup' && !c.hidden) {
        const id = idOf(c);
        const g = { nodeId: String(id), role: { value: 'group' }, name: { value: flat(c.label || '') }, backendDOMNodeId: id, childIds: [] };
        out.push(g);
        for (const o of c.children) {
          if (o.localName !== 'option' || o.hidden) continue;
          const n = option(o);
          n.parentId = g.nodeId;
          g.childIds.push(n.nodeId);
        }
        into.push(g);
      }
    }
    if (role === 'combobox') {
      // Chromium: combobox > MenuListPopup > options, with an ignored node between them when
      // the select is in a label.
      const popup = { nodeId: 'p' + idOf(el), role: { value: 'MenuListPopup' } };
      let holder = popup;
      if (el.closest('label')) {
        holder = { nodeId: 'q' + idOf(el), ignored: true, role: { value: 'none' }, parentId: popup.nodeId };
        popup.childIds = [holder.nodeId];
        out.push(holder);
      }
      holder.childIds = into.map((k) => k.nodeId);
      for (const k of into) k.parentId = holder.nodeId;
      out.push(popup);
      children.push(popup);
    }
  };
  const documentNode = (doc, ctx) => {
    const id = idOf(doc);
    let modal = null;
    try {
      modal = doc.querySelector(':modal');
    } catch (e) {
      modal = null;
    }
    const c = { shown: true, ariaDisabled: false, mute: false, repeats: null, modal, inModal: false };
    const n = { nodeId: String(id), role: { value: 'RootWebArea' }, backendDOMNodeId: id, properties: [{ name: 'focusable', value: { value: true } }] };
    if (doc.title) n.name = { value: flat(doc.title) };
    const children = [];
    if (doc.documentElement) walk(doc.documentElement, c, children);
    // The body as Chromium has it: an ignored node (the renderer does not fold the document
    // into its only control when there is one).
    const body = { nodeId: 'b' + id, ignored: true, role: { value: 'none' }, parentId: n.nodeId, childIds: children.map((k) => k.nodeId) };
    for (const k of children) k.parentId = body.nodeId;
    n.childIds = [body.nodeId];
    out.push(body);
    out.push(n);
    return n;
  };

  const root = documentNode(document, null);
  // The root first, as the browser lists it; the rest in any order.
  out.pop();
  out.unshift(root);
  // Forget elements that are gone.
  if (st.refs.size > 4 * out.length + 1000) {
    for (const [id, r] of st.refs) if (r.deref() === undefined) st.refs.delete(id);
  }
  const result = { nodes: out, remote, epoch: st.epoch, ms: performance.now() - t0 };
  return opts.json ? JSON.stringify(result) : result;
}
