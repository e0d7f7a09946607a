import type { Rule } from '@filebrowser/contract';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { RuleChecker, ruleForm } from '../src/files/access/rules.js';
import { compileRulePattern } from '../src/rules/validate.js';
import { runs, timeLimit } from './fuzz-runs.js';

/*
 * Fuzzing the rule matcher against a reference written from the contract:
 * global rules then the user's, the last matching rule decides, default allow; a path rule covers
 * its folder and everything below it, segment by segment; a regex rule searches the path; a
 * broken regex fails closed; dotfiles are hidden by their last segment; and everything is
 * compared in NFC (case-folded for path rules on a case-insensitive root).
 */

const count = runs();

/** Names whose composed and decomposed forms differ, a few case pairs, and plain ones. */
const NAMES = [
  'a',
  'b',
  'ab',
  'A',
  '.x',
  'Caf\u00e9',
  'Cafe\u0301',
  'CAF\u00c9',
  'CAFE\u0301',
  '\u00c5',
  'A\u030a',
  '\u212b',
  '\ud55c',
  '\u1112\u1161\u11ab',
  '\u03a3',
  '\u03c3',
  '\u03c2',
  'e\u0301\u0323',
  'e\u0323\u0301',
];
const name = fc.constantFrom(...NAMES);

const rulePath = fc
  .tuple(
    fc.constantFrom('', '/'),
    fc.array(fc.tuple(name, fc.constantFrom('/', '/', '//', '/./')), { maxLength: 3 }),
    fc.constantFrom('', '/', '//'),
  )
  .map(([lead, parts, trail]) => lead + parts.map(([n, sep], i) => (i === 0 ? n : sep + n)).join('') + trail);

const PATTERNS = [
  '^/a(/|$)',
  'b$',
  '(?i)caf\u00e9',
  'Cafe\u0301',
  'Caf\u00e9/',
  '\\.x$',
  '^/A',
  '(?i)^/a',
  '\u212b',
  '\u00c5/',
  '\ud55c',
  '\u1112\u1161',
  '\u03a3',
  '/\\.',
  '(',
  '[',
  '',
];

const rule: fc.Arbitrary<Rule> = fc.oneof(
  fc.record({
    regex: fc.constant(false),
    allow: fc.boolean(),
    path: rulePath,
    regexp: fc.constant(null),
  }),
  fc.record({
    regex: fc.constant(true),
    allow: fc.boolean(),
    path: fc.constant(''),
    regexp: fc.oneof(fc.constant(null), fc.record({ raw: fc.constantFrom(...PATTERNS) })),
  }),
);

const virtualPath = fc
  .tuple(fc.array(name, { maxLength: 4 }), fc.boolean())
  .map(([segs, trail]) => '/' + segs.join('/') + (trail && segs.length > 0 ? '/' : ''));

/** The contract, written out plainly: no shared code with the matcher but the regex dialect. */
function reference(
  globalRules: readonly Rule[],
  userRules: readonly Rule[],
  p: string,
  opts: { hideDotfiles: boolean; caseInsensitive: boolean; rulesOnly?: boolean },
): boolean {
  const key = (s: string) => (opts.caseInsensitive ? s.normalize('NFC').toLowerCase() : s.normalize('NFC'));
  const pathSegments = key(p)
    .split('/')
    .filter((s) => s !== '');
  if (!opts.rulesOnly && opts.hideDotfiles) {
    const last = p
      .split('/')
      .filter((s) => s !== '')
      .at(-1);
    if (last?.startsWith('.')) return false;
  }
  let allowed = true;
  for (const r of [...globalRules, ...userRules]) {
    let matched: boolean;
    if (r.regex) {
      let re: RegExp | undefined;
      try {
        re = r.regexp?.raw ? compileRulePattern(r.regexp.raw.normalize('NFC')) : undefined;
      } catch {
        re = undefined;
      }
      matched = re ? re.test(p.normalize('NFC')) : !r.allow;
    } else {
      const ruleSegments = key(r.path)
        .split('/')
        .filter((s) => s !== '' && s !== '.');
      matched = ruleSegments.every((s, i) => pathSegments[i] === s);
    }
    if (matched) allowed = r.allow;
  }
  return allowed;
}

const quiet = { onInvalid: () => undefined };

/** `expect(actual).toBe(expected)` without its cost, for the inner loops of 10,000 runs. */
function same<T>(actual: T, expected: T, what: string): void {
  if (actual !== expected) throw new Error(`${what}: got ${String(actual)}, want ${String(expected)}`);
}

describe('fuzz: the rule matcher', () => {
  it(
    `decides like the reference for random rule sets, paths and normal forms (${count} rule sets)`,
    () => {
      fc.assert(
        fc.property(
          fc.array(rule, { maxLength: 4 }),
          fc.array(rule, { maxLength: 4 }),
          fc.boolean(),
          fc.boolean(),
          fc.array(virtualPath, { minLength: 1, maxLength: 6 }),
          (globalRules, userRules, hideDotfiles, caseInsensitive, paths) => {
            const c = new RuleChecker(globalRules, userRules, hideDotfiles, { ...quiet, caseInsensitive });
            const opts = { hideDotfiles, caseInsensitive };
            for (const p of paths) {
              for (const form of [p, p.normalize('NFC'), p.normalize('NFD')]) {
                same(c.check(form), reference(globalRules, userRules, form, opts), `check ${form}`);
                same(
                  c.allowedByRules(form),
                  reference(globalRules, userRules, form, { ...opts, rulesOnly: true }),
                  `allowedByRules ${form}`,
                );
              }
              // The same decision whichever form the path arrives in.
              same(c.check(p.normalize('NFD')), c.check(p.normalize('NFC')), `forms of ${p}`);
              const cut = p.replace(/\/+$/, '').lastIndexOf('/');
              if (p !== '/' && !p.endsWith('/')) {
                same(c.checkChild(p.slice(0, cut + 1), p.slice(cut + 1)), c.check(p), `checkChild ${p}`);
              }
            }
          },
        ),
        { numRuns: count },
      );
    },
    timeLimit(count, 1),
  );

  it(
    `lets a rule in either form cover a folder stored in the other, at any depth, never a sibling (${count} names)`,
    () => {
      const segment = fc
        .string({ unit: 'grapheme', minLength: 1, maxLength: 6 })
        .filter((s) => !s.includes('/') && s !== '.' && s !== '..');
      fc.assert(
        fc.property(
          fc.array(segment, { minLength: 1, maxLength: 3 }),
          fc.array(segment, { maxLength: 2 }),
          segment,
          fc.constantFrom<'NFC' | 'NFD'>('NFC', 'NFD'),
          fc.constantFrom<'NFC' | 'NFD'>('NFC', 'NFD'),
          (base, rest, suffix, ruleNorm, diskNorm) => {
            const rulePathText = ('/' + base.join('/')).normalize(ruleNorm);
            const c = new RuleChecker(
              [{ regex: false, allow: false, path: rulePathText, regexp: null }],
              [],
              false,
            );
            const inside = ('/' + [...base, ...rest].join('/')).normalize(diskNorm);
            same(c.check(inside), false, inside);
            // A sibling whose name merely starts with the rule's name stays visible.
            const sibling = ('/' + base.join('/') + suffix).normalize(diskNorm);
            same(c.check(sibling), true, sibling);
          },
        ),
        { numRuns: count },
      );
    },
    timeLimit(count, 1),
  );

  it(`puts any text in NFC, taking the short way only where it is already NFC (${count} strings)`, () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 24 }),
          fc.string({ unit: 'grapheme-composite', maxLength: 12 }),
          fc.string({
            unit: fc.integer({ min: 0, max: 0x400 }).map((n) => String.fromCharCode(n)),
            maxLength: 16,
          }),
        ),
        (text) => {
          same(ruleForm(text), text.normalize('NFC'), JSON.stringify(text));
        },
      ),
      { numRuns: count },
    );
  });
});
