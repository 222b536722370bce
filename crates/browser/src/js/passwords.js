// () => ({boxes: [[left, top, right, bottom], …], opaque: n}): every password field showing in
// this frame's viewport — `<input type=password>`, or an input masked by
// `-webkit-text-security` — in shadow roots and same-origin frames too, in this viewport's CSS
// pixels, clipped to it and to every frame it is in. `opaque`: frames of another origin it
// could not look into (the caller looks into those through their own frames).
() => {
  const boxes = [];
  let opaque = 0;
  const clip = (a, b) => [Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.min(a[3], b[3])];
  const some = (b) => b[2] > b[0] && b[3] > b[1];
  const secret = (el) => {
    if (String(el.type).toLowerCase() === 'password') return true;
    const view = el.ownerDocument.defaultView;
    const s = view && view.getComputedStyle(el);
    return !!s && !!s.webkitTextSecurity && s.webkitTextSecurity !== 'none';
  };
  const visit = (root, dx, dy, view) => {
    const doc = root.ownerDocument || root;
    const walker = doc.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let el = walker.nextNode(); el; el = walker.nextNode()) {
      if (el.shadowRoot) visit(el.shadowRoot, dx, dy, view);
      const tag = el.tagName;
      if (tag === 'INPUT') {
        if (!secret(el)) continue;
        for (const r of el.getClientRects()) {
          const b = clip([r.left + dx, r.top + dy, r.right + dx, r.bottom + dy], view);
          if (some(b)) boxes.push(b);
        }
      } else if (tag === 'IFRAME' || tag === 'FRAME') {
        const r = el.getBoundingClientRect();
        const s = doc.defaultView.getComputedStyle(el);
        const x = r.left + dx + el.clientLeft + (parseFloat(s.paddingLeft) || 0);
        const y = r.top + dy + el.clientTop + (parseFloat(s.paddingTop) || 0);
        const w = el.clientWidth - (parseFloat(s.paddingLeft) || 0) - (parseFloat(s.paddingRight) || 0);
        const h = el.clientHeight - (parseFloat(s.paddingTop) || 0) - (parseFloat(s.paddingBottom) || 0);
        const inner = clip([x, y, x + w, y + h], view);
        if (!some(inner)) continue;
        let child = null;
        try {
          child = el.contentDocument;
        } catch (e) {
          child = null;
        }
        if (child && child.documentElement) visit(child, x, y, inner);
        else opaque++;
      }
    }
  };
  visit(document, 0, 0, [0, 0, innerWidth, innerHeight]);
  return { boxes, opaque };
}
