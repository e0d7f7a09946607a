import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * docs/security.md maps every class of File Browser's advisories to the tests that prove our
 * defence. A renamed or deleted test would leave the page promising what nothing checks, so the
 * page is read here and every citation must still name a real test.
 */

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const DOC = fs.readFileSync(path.join(REPO, 'docs/security.md'), 'utf8');

interface Citation {
  file: string;
  name: string;
  line: number;
}

/** `file.test.ts` › `test name`, as the page writes them. */
const CITATION = /`([^`\s]+\.test\.tsx?)` › `([^`]+)`/g;

function citationsIn(text: string, firstLine = 1): Citation[] {
  return text
    .split('\n')
    .flatMap((line, i) =>
      [...line.matchAll(CITATION)].map((m) => ({ file: m[1]!, name: m[2]!, line: firstLine + i })),
    );
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether `source` has a test or describe block titled `name`: the name as a whole string
 * literal (any quote; template titles are cited as written) right after an opening parenthesis,
 * as in `it('…'`, `describe.each(…)('…'` or `it(\n  \`…\``.
 */
function hasTitle(source: string, name: string): boolean {
  return ["'", '"', '`'].some((q) => new RegExp(`\\(\\s*${q}${escapeRegExp(name)}${q}`).test(source));
}

const citations = citationsIn(DOC);

/** The advisory table: `### class` sections of the advisories chapter, with their first line. */
function advisoryClasses(): { heading: string; body: string; firstLine: number }[] {
  const start = DOC.indexOf("\n## File Browser's advisories");
  expect(start, 'the advisories chapter').toBeGreaterThan(0);
  const next = DOC.indexOf('\n## ', start + 1);
  const chapter = DOC.slice(start, next === -1 ? undefined : next);
  const chapterLine = DOC.slice(0, start).split('\n').length + 1;
  const parts = chapter.split(/^### /m).slice(1);
  let offset = chapter.split(/^### /m)[0]!.split('\n').length - 1;
  return parts.map((part) => {
    const heading = part.slice(0, part.indexOf('\n'));
    const firstLine = chapterLine + offset;
    offset += part.split('\n').length - 1;
    return { heading, body: part, firstLine };
  });
}

describe('docs/security.md', () => {
  it('writes every citation so that it can be checked', () => {
    // A "›" outside the citation form would be a citation this test silently skips.
    const arrows = DOC.split('\n').reduce((n, line) => n + (line.match(/›/g)?.length ?? 0), 0);
    expect(citations.length).toBe(arrows);
    expect(citations.length).toBeGreaterThan(80);
  });

  it('cites only test files that exist, by the exact titles of their tests', () => {
    const sources = new Map<string, string | undefined>();
    const wrong: string[] = [];
    for (const c of citations) {
      if (!sources.has(c.file)) {
        const full = path.join(REPO, c.file);
        sources.set(c.file, fs.existsSync(full) ? fs.readFileSync(full, 'utf8') : undefined);
      }
      const source = sources.get(c.file);
      if (source === undefined) wrong.push(`line ${c.line}: ${c.file} does not exist`);
      else if (!hasTitle(source, c.name)) wrong.push(`line ${c.line}: ${c.file} has no test "${c.name}"`);
    }
    expect(wrong).toEqual([]);
  });

  it('cites at least one test for every advisory class, and a test or "no test" on every row', () => {
    const classes = advisoryClasses();
    expect(classes.length).toBeGreaterThanOrEqual(13);
    const wrong: string[] = [];
    for (const { heading, body, firstLine } of classes) {
      if (citationsIn(body).length === 0) wrong.push(`"${heading}" cites no test`);
      body.split('\n').forEach((line, i) => {
        const row = line.startsWith('| ') && !line.startsWith('| id(s)') && !line.startsWith('| ---');
        if (row && citationsIn(line).length === 0 && !line.includes('**no test**')) {
          wrong.push(`line ${firstLine + i} ("${heading}") neither cites a test nor says **no test**`);
        }
      });
    }
    expect(wrong).toEqual([]);
  });

  it('has no citation still waiting for its branch to be merged', () => {
    // Once the branch is in, the marker is no longer true: remove it.
    const waiting = DOC.split('\n').flatMap((line, i) =>
      [...line.matchAll(/\(lands with (sec-[\w-]+)/gi)].map((m) => `line ${i + 1}: ${m[1]}`),
    );
    expect(waiting).toEqual([]);
  });
});
