import { describe, expect, it } from 'vitest';
import { DEFAULT_STARTUP, readStartupSettings, startup, STARTUP_ELEMENT_ID } from './startup';

function page(json: string | null): Document {
  const doc = document.implementation.createHTMLDocument('x');
  if (json !== null) {
    const block = doc.createElement('script');
    block.id = STARTUP_ELEMENT_ID;
    block.type = 'application/json';
    block.textContent = json;
    doc.head.appendChild(block);
  }
  return doc;
}

describe('start-up settings', () => {
  it('reads the JSON data block the server puts in the page', () => {
    const settings = readStartupSettings(
      page(JSON.stringify({ ...DEFAULT_STARTUP, Name: 'Family <files>', BaseURL: '/fb/', Signup: true })),
    );
    expect(settings).toMatchObject({ Name: 'Family <files>', BaseURL: '/fb', Signup: true });
  });

  it('falls back to the defaults without a block or with an unreadable one', () => {
    expect(readStartupSettings(page(null))).toEqual(DEFAULT_STARTUP);
    expect(readStartupSettings(page('{oops'))).toEqual(DEFAULT_STARTUP);
  });

  it("is published as window.FileBrowser, File Browser's global", () => {
    expect(window.FileBrowser).toBe(startup);
  });
});
