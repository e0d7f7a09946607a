/**
 * The readable page of the API document: plain HTML and one same-origin script, so that it works
 * offline and under the CSP every answer carries (`default-src 'self'`, inline styles only). The
 * script builds the page with text nodes, never markup from the document.
 */
export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API</title>
</head>
<body style="font-family: system-ui, sans-serif; margin: 0 auto; max-width: 70em; padding: 1em; line-height: 1.4">
<h1 id="title">API</h1>
<p id="description"></p>
<p><a href="openapi.json">openapi.json</a></p>
<main id="operations"><p>Loading…</p></main>
<script src="docs/render.js"></script>
</body>
</html>
`;

export const DOCS_SCRIPT = `'use strict';
// Kept on the window so that whoever loaded the page (a test) can wait for it to be drawn.
window.apiDocsDrawn = (async () => {
  const el = (tag, style, text) => {
    const e = document.createElement(tag);
    if (style) e.setAttribute('style', style);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const pre = (value) =>
    el('pre', 'background:#f4f4f4;padding:.5em;overflow:auto;font-size:.85em', JSON.stringify(value, null, 2));
  const main = document.getElementById('operations');
  let doc;
  try {
    const res = await fetch('openapi.json', { credentials: 'same-origin' });
    doc = await res.json();
  } catch (err) {
    main.textContent = 'The document could not be loaded: ' + err;
    return;
  }
  document.title = doc.info.title;
  document.getElementById('title').textContent = doc.info.title + ' ' + doc.info.version;
  document.getElementById('description').textContent = doc.info.description || '';
  main.textContent = '';
  const byTag = new Map();
  for (const [path, item] of Object.entries(doc.paths)) {
    const ops = Object.entries(item).filter(([k]) => !k.startsWith('x-'));
    ops.push(...Object.entries(item['x-additionalOperations'] || {}));
    for (const [method, op] of ops) {
      const tag = (op.tags && op.tags[0]) || 'other';
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push([method.toUpperCase(), path, op]);
    }
  }
  for (const [tag, ops] of [...byTag].sort(([a], [b]) => a.localeCompare(b))) {
    main.append(el('h2', 'border-bottom:1px solid #ccc', tag));
    for (const [method, path, op] of ops) {
      const d = el('details', 'margin:.3em 0');
      const s = el('summary', 'cursor:pointer');
      s.append(el('code', 'font-weight:bold;display:inline-block;min-width:6em', method), el('code', '', path));
      if (op.summary) s.append(el('span', 'color:#555', ' — ' + op.summary));
      d.append(s);
      if (op.parameters) {
        d.append(el('h4', '', 'Parameters'));
        const ul = el('ul');
        for (const p of op.parameters) {
          ul.append(el('li', '', p.in + ' ' + p.name + (p.required ? ' (required)' : '') +
            ': ' + JSON.stringify(p.schema) + (p.description ? ' — ' + p.description : '')));
        }
        d.append(ul);
      }
      if (op.requestBody) {
        d.append(el('h4', '', 'Body' + (op.requestBody.description ? ': ' + op.requestBody.description : '')));
        for (const [type, c] of Object.entries(op.requestBody.content)) {
          d.append(el('div', '', type));
          if (c.schema) d.append(pre(c.schema));
        }
      }
      d.append(el('h4', '', 'Responses'));
      for (const [code, r] of Object.entries(op.responses)) {
        d.append(el('div', 'margin-top:.4em', code + ' ' + r.description +
          (r.content ? ' [' + Object.keys(r.content).join(', ') + ']' : '')));
        for (const c of Object.values(r.content || {})) if (c.schema) d.append(pre(c.schema));
      }
      main.append(d);
    }
  }
})();
`;
