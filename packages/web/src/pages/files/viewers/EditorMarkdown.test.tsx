// @vitest-environment jsdom
// The rendered view goes through DOMPurify, which does not support happy-dom (see markdown.test.ts).
import { cleanup, screen, within } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { editorShown, renderEditor, textFile, typeAtEnd } from '../../../test/render-editor';
import { press, pressedViews } from '../../../test/view-switch';

const readme = textFile(
  '/docs/readme.md',
  '# Guide\n\n<img src="x" onerror="alert(1)"><script>alert(2)</script>[go](javascript:alert(3))\n',
);
const rendered = () => screen.getByRole('article', { name: 'readme.md, rendered' });

describe('Editor with a Markdown file', () => {
  beforeAll(() => {
    // jsdom lays nothing out and lacks these; CodeMirror asks them when it measures text.
    Range.prototype.getClientRects ??= () => [] as unknown as DOMRectList;
    Range.prototype.getBoundingClientRect ??= () => new DOMRect();
  });
  afterEach(cleanup);

  it('opens source and rendered side by side for an editor, the rendering following the typing', async () => {
    const view = await renderEditor(readme, { download: true, modify: true });
    expect(pressedViews()).toEqual(['Source and rendered side by side']);
    expect(editorShown(view)).toBe(true);
    expect(within(rendered()).getByRole('heading', { level: 1 }).textContent).toBe('Guide');

    typeAtEnd(view, '\n## More\n');
    expect(await within(rendered()).findByRole('heading', { level: 2 })).toBeTruthy();
  });

  it('renders the file sanitised: no script, handler or script link reaches the page', async () => {
    await renderEditor(readme, { download: true, modify: true });
    const article = rendered();
    expect(article.querySelector('script')).toBeNull();
    expect(article.querySelector('[onerror]')).toBeNull();
    const attributes = [...article.querySelectorAll('*')].flatMap((element) => [...element.attributes]);
    expect(attributes.filter(({ name, value }) => name.startsWith('on') || /script:/i.test(value))).toEqual(
      [],
    );
    // The refused link is left as the text it was written as.
    expect(article.textContent).toContain('[go](javascript:alert(3))');
  });

  it('switches between rendered only, source only and both', async () => {
    const view = await renderEditor(readme, { download: true, modify: true });
    press('Rendered');
    expect(editorShown(view)).toBe(false);
    expect(rendered()).toBeTruthy();

    press('Source');
    expect(editorShown(view)).toBe(true);
    expect(screen.queryByRole('article')).toBeNull();

    press('Source and rendered side by side');
    expect(editorShown(view)).toBe(true);
    expect(rendered()).toBeTruthy();
  });

  it('opens rendered only for a reader who may not modify it', async () => {
    const view = await renderEditor(readme, { download: true });
    expect(pressedViews()).toEqual(['Rendered']);
    expect(editorShown(view)).toBe(false);
    expect(within(rendered()).getByRole('heading', { level: 1 }).textContent).toBe('Guide');
  });
});
