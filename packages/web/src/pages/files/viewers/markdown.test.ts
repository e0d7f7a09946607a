// @vitest-environment jsdom
// DOMPurify does not support happy-dom (it strips or passes markup wrongly there, see
// cure53/DOMPurify#1457); jsdom is the DOM it is tested against, as browsers are in use.
import { describe, expect, it } from 'vitest';
import { isMarkdownName, renderMarkdown } from './markdown';

/** The rendered HTML, parsed inert: a template neither runs scripts nor loads anything. */
function render(source: string, path = '/docs/readme.md'): DocumentFragment & { innerHTML: string } {
  const template = document.createElement('template');
  template.innerHTML = renderMarkdown(source, path);
  return Object.assign(template.content, { innerHTML: template.innerHTML });
}

const HOSTILE = `# Title

<script>alert(1)</script>
<img src="x.png" onerror="alert(2)">
<a href="javascript:alert(3)">click</a>
[md link](javascript:alert(4))
[encoded](jav&#x09;ascript:alert(5))
<iframe src="https://evil.example/"></iframe>
<style>body { display: none }</style>
<div style="position:fixed;inset:0" onclick="alert(6)" onmouseover="alert(7)">cover</div>
<svg><script>alert(8)</script></svg>
<form action="https://evil.example/"><input name="password"></form>
<object data="x.swf"></object><embed src="x.swf">
<base href="https://evil.example/">
<meta http-equiv="refresh" content="0;url=https://evil.example/">
<a href="vbscript:msgbox(9)">vb</a>
<a href="data:text/html,<script>alert(10)</script>">data</a>
`;

describe('renderMarkdown', () => {
  it('renders Markdown', () => {
    const host = render('# Hello\n\nSome *text* and `code`.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n');
    expect(host.querySelector('h1')?.textContent).toBe('Hello');
    expect(host.querySelector('em')?.textContent).toBe('text');
    expect(host.querySelector('code')?.textContent).toBe('code');
    expect(host.querySelectorAll('td')).toHaveLength(2);
  });

  it('lets no script, event handler, script link, frame, style, form or redirect through', () => {
    const host = render(HOSTILE);
    for (const tag of [
      'script',
      'iframe',
      'style',
      'svg',
      'form',
      'input',
      'object',
      'embed',
      'base',
      'meta',
    ]) {
      expect(host.querySelector(tag), tag).toBeNull();
    }
    const attributes = [...host.querySelectorAll('*')].flatMap((element) => [...element.attributes]);
    expect(attributes.filter(({ name }) => name.startsWith('on') || name === 'style')).toEqual([]);
    // Markdown links markdown-it refused stay as plain text; no attribute carries code.
    expect(attributes.filter(({ value }) => /alert|script:/i.test(value))).toEqual([]);
    for (const anchor of host.querySelectorAll('a')) {
      const href = anchor.getAttribute('href') ?? '';
      expect(href, anchor.textContent ?? '').not.toMatch(/^\s*(javascript|vbscript|data):/i);
    }
    // What is harmless stays.
    expect(host.querySelector('h1')?.textContent).toBe('Title');
    expect(host.textContent).toContain('cover');
  });

  it('opens links in a new tab without opener or referrer; in-page anchors stay', () => {
    const host = render('[site](https://example.com/) [next](other.md) [top](#title)');
    const [site, next, top] = [...host.querySelectorAll('a')];
    for (const link of [site!, next!]) {
      expect(link.getAttribute('target')).toBe('_blank');
      expect(link.getAttribute('rel')).toBe('noopener noreferrer');
    }
    expect(site!.getAttribute('href')).toBe('https://example.com/');
    expect(top!.getAttribute('target')).toBeNull();
  });

  it('loads images beside the file through the raw endpoint, and inline data images', () => {
    const host = render(
      '![a](pics/a%20b.png) ![up](../logo.png?x=1) ![dot](data:image/png;base64,iVBORw0KGgo=)',
      '/docs/guide/readme.md',
    );
    const sources = [...host.querySelectorAll('img')].map((image) => image.getAttribute('src'));
    expect(sources).toEqual([
      '/api/raw/docs/guide/pics/a%20b.png?inline=true',
      '/api/raw/docs/logo.png?inline=true',
      'data:image/png;base64,iVBORw0KGgo=',
    ]);
  });

  it('does not load images from other sites, nor script data', () => {
    const host = render(
      '![tracker](https://evil.example/pixel.gif) <img src="//evil.example/p.gif" alt="p"> ' +
        '<img srcset="https://evil.example/s.png 2x" alt="s"> <img src="data:image/svg+xml;base64,PHN2Zz4=" alt="svg">',
    );
    const images = [...host.querySelectorAll('img')];
    expect(images).toHaveLength(4);
    for (const image of images) {
      expect(image.getAttribute('src')).toBeNull();
      expect(image.getAttribute('srcset')).toBeNull();
    }
    expect(images.map((image) => image.getAttribute('alt'))).toEqual(['tracker', 'p', 's', 'svg']);
  });

  it('keeps same-origin images', () => {
    const own = `${window.location.origin}/static/logo.png`;
    const host = render(`![own](${own})`);
    expect(host.querySelector('img')?.getAttribute('src')).toBe(own);
  });

  it('keeps a path from the root only when the browser resolves it to this origin', () => {
    const host = render(
      [
        '<img src="/static/logo.png" alt="own">',
        // Browsers read a backslash as a slash: these are //evil.example/… to them.
        '<img src="/\\evil.example/x.png" alt="backslash">',
        '![md](/\\evil.example/y.png)',
        '<img src="/&#9;/evil.example/tab.png" alt="tab">',
        '<img src="\\\\evil.example/z.png" alt="two backslashes">',
        '<img src=" //evil.example/space.png" alt="space">',
      ].join(' '),
    );
    const sources = [...host.querySelectorAll('img')].map((image) => image.getAttribute('src'));
    // Whatever is kept, the browser fetches it from this origin.
    for (const src of sources) {
      if (src !== null) expect(new URL(src, window.location.href).origin).toBe(window.location.origin);
    }
    expect(sources[0]).toBe(`${window.location.origin}/static/logo.png`);
    expect([sources[1], sources[3]]).toEqual([null, null]);
    // markdown-it escapes the backslash of a Markdown image: a path on this server.
    expect(sources[2]).toBe(`${window.location.origin}/%5Cevil.example/y.png`);
  });

  it('loads no media, poster or background from another host', () => {
    const host = render(
      [
        '<video src="https://evil.example/v.mp4" poster="/\\evil.example/p.png"></video>',
        '<audio src="//evil.example/a.mp3"></audio>',
        '<video><source src="https://evil.example/s.mp4"><track src="/\\evil.example/t.vtt"></video>',
        '<picture><source srcset="https://evil.example/p.avif"><img src="pics/a.png" alt="a"></picture>',
        '<table background="https://evil.example/bg.png"><tr><td>x</td></tr></table>',
      ].join('\n'),
    );
    expect(host.innerHTML).not.toContain('evil.example');
    // What is beside the file still loads.
    expect(host.querySelector('img')?.getAttribute('src')).toBe('/api/raw/docs/pics/a.png?inline=true');
  });

  it('treats a link written /\\host as a link to another site: a new tab without opener or referrer', () => {
    const host = render('[x](/\\evil.example/page) <a href="/\\evil.example/other">y</a>');
    for (const link of host.querySelectorAll('a')) {
      expect(link.getAttribute('target')).toBe('_blank');
      expect(link.getAttribute('rel')).toBe('noopener noreferrer');
    }
  });
});

describe('isMarkdownName', () => {
  it('knows the usual Markdown extensions', () => {
    expect(['README.md', 'a.markdown', 'b.MD', 'c.mdown', 'd.mkd'].every(isMarkdownName)).toBe(true);
    expect(['a.mdx', 'md', 'a.txt'].some(isMarkdownName)).toBe(false);
  });
});
