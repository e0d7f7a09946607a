import type { Rule } from '@filebrowser/contract';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RuleChecker } from './rules.js';

const deny = (path: string): Rule => ({ regex: false, allow: false, path, regexp: null });
const allow = (path: string): Rule => ({ regex: false, allow: true, path, regexp: null });
const denyRe = (raw: string): Rule => ({ regex: true, allow: false, path: '', regexp: { raw } });
const allowRe = (raw: string): Rule => ({ regex: true, allow: true, path: '', regexp: { raw } });

describe('RuleChecker', () => {
  it('allows everything without rules', () => {
    const c = new RuleChecker([], [], false);
    expect(c.hasRules).toBe(false);
    expect(c.check('/')).toBe(true);
    expect(c.check('/anything/at/all')).toBe(true);
  });

  it('matches non-regex rules on segment boundaries only', () => {
    const c = new RuleChecker([deny('/admin')], [], false);
    expect(c.check('/admin')).toBe(false);
    expect(c.check('/admin/')).toBe(false);
    expect(c.check('/admin/secret.txt')).toBe(false);
    expect(c.check('/admin_backup')).toBe(true);
    expect(c.check('/admin_backup/x')).toBe(true);
    expect(c.check('/administrator')).toBe(true);
    expect(c.check('/x/admin')).toBe(true);
  });

  it('treats a rule path with a trailing slash or without a leading slash as the folder', () => {
    const c = new RuleChecker([deny('/docs/'), deny('priv')], [], false);
    expect(c.check('/docs')).toBe(false);
    expect(c.check('/docs/a')).toBe(false);
    expect(c.check('/docsx')).toBe(true);
    expect(c.check('/priv/a')).toBe(false);
  });

  it('reads rule paths as paths: empty and "." segments name nothing of their own', () => {
    for (const written of ['/a//b', 'a/./b/', '//a/b//', './a/b']) {
      const c = new RuleChecker([deny(written)], [], false);
      expect(c.check('/a/b/x'), written).toBe(false);
      expect(c.check('/a/bc'), written).toBe(true);
    }
    expect(new RuleChecker([deny('/./')], [], false).check('/a')).toBe(false);
  });

  it('lets an empty or "/" rule path match everything', () => {
    expect(new RuleChecker([deny('')], [], false).check('/a')).toBe(false);
    expect(new RuleChecker([deny('/')], [], false).check('/a/b')).toBe(false);
    expect(new RuleChecker([deny('/')], [], false).check('/')).toBe(false);
  });

  it('applies global rules first, then the user rules, last match wins', () => {
    const c = new RuleChecker([deny('/shared')], [allow('/shared/public')], false);
    expect(c.check('/shared/x')).toBe(false);
    expect(c.check('/shared/public/x')).toBe(true);
    const reverse = new RuleChecker([allow('/shared/public')], [deny('/shared')], false);
    expect(reverse.check('/shared/public/x')).toBe(false);
  });

  it('searches regex rules unanchored on the virtual path', () => {
    const c = new RuleChecker([denyRe('\\.secret$')], [], false);
    expect(c.check('/a/b.secret')).toBe(false);
    expect(c.check('/a/b.secret.txt')).toBe(true);
    const anywhere = new RuleChecker([denyRe('tmp')], [], false);
    expect(anywhere.check('/x/atmpz/y')).toBe(false);
  });

  it('understands a leading (?i) flag in regex rules', () => {
    const c = new RuleChecker([denyRe('(?i)\\.JPG$')], [], false);
    expect(c.check('/a.jpg')).toBe(false);
    expect(c.check('/a.JpG')).toBe(false);
  });

  it('never crashes on an invalid regex, failing closed', () => {
    const reported: string[] = [];
    const onInvalid = (_r: Rule, reason: string) => reported.push(reason);
    const denying = new RuleChecker([denyRe('([')], [], false, { onInvalid });
    expect(denying.check('/anything')).toBe(false);
    const allowing = new RuleChecker([deny('/x'), allowRe('(?<')], [], false, { onInvalid });
    expect(allowing.check('/x/y')).toBe(false);
    expect(allowing.check('/y')).toBe(true);
    const nullPattern = new RuleChecker([{ regex: true, allow: false, path: '', regexp: null }], [], false, {
      onInvalid,
    });
    expect(nullPattern.check('/a')).toBe(false);
    expect(reported).toHaveLength(3);
  });

  it('hides dotfiles by the last segment only, and only for users who ask', () => {
    const hiding = new RuleChecker([], [], true);
    expect(hiding.check('/.env')).toBe(false);
    expect(hiding.check('/a/.git')).toBe(false);
    expect(hiding.check('/.git/config')).toBe(true);
    expect(hiding.check('/')).toBe(true);
    expect(hiding.allowedByRules('/.env')).toBe(true);
    expect(new RuleChecker([], [], false).check('/.env')).toBe(true);
  });

  it('folds case for non-regex rules only on a case-insensitive root', () => {
    const folded = new RuleChecker([deny('/Admin'), denyRe('Secret')], [], false, { caseInsensitive: true });
    expect(folded.check('/ADMIN/x')).toBe(false);
    expect(folded.check('/secret')).toBe(true);
    const exact = new RuleChecker([deny('/Admin')], [], false);
    expect(exact.check('/admin')).toBe(true);
  });

  it('compares rules and paths in NFC, whichever form either is written in', () => {
    const nfc = 'Caf\u00e9';
    const nfd = 'Cafe\u0301';
    for (const [rule, stored] of [
      [nfc, nfd],
      [nfd, nfc],
    ] as const) {
      const c = new RuleChecker([deny('/' + rule)], [], false);
      expect(c.check('/' + stored)).toBe(false);
      expect(c.check(`/${stored}/inner/x.txt`)).toBe(false);
      expect(c.checkChild('/', stored)).toBe(false);
      expect(c.check(`/${stored}s`)).toBe(true);
      const re = new RuleChecker([denyRe(`^/${rule}/`)], [], false);
      expect(re.check(`/${stored}/x`)).toBe(false);
      const reopened = new RuleChecker([deny('/')], [allow('/' + rule)], false);
      expect(reopened.check(`/${stored}/x`)).toBe(true);
      expect(reopened.check('/Cafe/x')).toBe(false);
    }
    const folded = new RuleChecker([deny('/CAF\u00c9')], [], false, { caseInsensitive: true });
    expect(folded.check('/cafe\u0301/x')).toBe(false);
  });

  it('never matches a sibling that merely shares a prefix (property)', () => {
    const seg = fc.stringMatching(/^[a-zA-Z0-9_.-]{1,8}$/).filter((s) => s !== '.' && s !== '..');
    fc.assert(
      fc.property(
        fc.array(seg, { minLength: 1, maxLength: 4 }),
        seg,
        fc.array(seg, { maxLength: 3 }),
        (base, suffix, rest) => {
          const rulePath = '/' + base.join('/');
          const c = new RuleChecker([deny(rulePath)], [], false);
          const sibling = rulePath + suffix + (rest.length ? '/' + rest.join('/') : '');
          const inside = rulePath + (rest.length ? '/' + rest.join('/') : '');
          expect(c.check(sibling)).toBe(true);
          expect(c.check(inside)).toBe(false);
        },
      ),
    );
  });
});
