import type { Rule } from '@filebrowser/contract';
import { compileRulePattern } from '../../rules/validate.js';
import { isStagingName } from './staging-names.js';

/**
 * The one form rules and paths are compared in. A name may be stored decomposed (NFD: macOS,
 * files copied from it, some clients) or composed (NFC: what browsers and most keyboards send),
 * and `Café` must name the same folder in a rule either way, so both sides are put in NFC.
 */
export function ruleForm(text: string): string {
  // Every code point below U+0300 is already NFC and combines with nothing before it, so the
  // common case (ASCII and Latin-1 names) skips the normaliser.
  return BEYOND_LATIN.test(text) ? text.normalize('NFC') : text;
}

const BEYOND_LATIN = /[\u0300-\uffff]/;

/** One rule, ready to test virtual paths (already in `ruleForm`). */
interface CompiledRule {
  allow: boolean;
  matches(virtualPath: string): boolean;
}

export interface RuleOptions {
  /** The served root is case-insensitive: non-regex rules compare lower-cased (regex rules never fold). */
  caseInsensitive?: boolean;
  /** Told about a rule that cannot be applied as written (an invalid regex). */
  onInvalid?: (rule: Rule, reason: string) => void;
}

function compileRule(rule: Rule, opts: RuleOptions): CompiledRule {
  if (rule.regex) {
    const raw = rule.regexp?.raw ?? '';
    let re: RegExp | undefined;
    try {
      // Literal text in a pattern meets paths in the same form (escapes like \u0301 are kept).
      if (raw) re = compileRulePattern(ruleForm(raw));
    } catch (err) {
      opts.onInvalid?.(rule, (err as Error).message);
    }
    if (!re) {
      if (raw === '') opts.onInvalid?.(rule, 'empty pattern');
      // Fail closed: a broken deny rule denies everything, a broken allow rule grants nothing.
      return { allow: rule.allow, matches: () => !rule.allow };
    }
    const compiled = re;
    return { allow: rule.allow, matches: (p) => compiled.test(p) };
  }
  const fold = opts.caseInsensitive ? (s: string) => s.toLowerCase() : (s: string) => s;
  // Rule paths are segment-aligned: "/admin" matches "/admin" and "/admin/x", never "/admin_backup".
  // Empty and "." segments are dropped as request paths drop them: "/a//b/" and "a/./b" name
  // /a/b, where compared as written they would name nothing and a deny rule would fail open.
  const segments = fold(ruleForm(rule.path))
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  if (segments.length === 0) return { allow: rule.allow, matches: () => true };
  const base = '/' + segments.join('/');
  const prefix = base + '/';
  return {
    allow: rule.allow,
    matches: (p) => {
      const v = fold(p);
      return v === base || v.startsWith(prefix);
    },
  };
}

/**
 * The user's view filter: global rules, then the user's own; the last matching rule wins and the
 * default is allow (contract 1.7). `check` adds the per-user hidden-dotfile filter.
 */
export class RuleChecker {
  private readonly rules: CompiledRule[];
  private fingerprintText: string | undefined;

  constructor(
    private readonly globalRules: readonly Rule[],
    private readonly userRules: readonly Rule[],
    private readonly hideDotfiles: boolean,
    private readonly opts: RuleOptions = {},
  ) {
    this.rules = [...globalRules, ...userRules].map((r) => compileRule(r, opts));
  }

  /** Text that is equal for two checkers exactly when they decide every path alike by construction. */
  get fingerprint(): string {
    this.fingerprintText ??= JSON.stringify([
      this.globalRules,
      this.userRules,
      this.hideDotfiles,
      this.opts.caseInsensitive === true,
    ]);
    return this.fingerprintText;
  }

  /** True when any rule exists: recursive operations then check every descendant. */
  get hasRules(): boolean {
    return this.rules.length > 0;
  }

  /** Rules only (File Browser's CheckRules). */
  allowedByRules(virtualPath: string): boolean {
    if (this.rules.length === 0) return true;
    const subject = ruleForm(virtualPath);
    let allowed = true;
    for (const rule of this.rules) {
      if (rule.matches(subject)) allowed = rule.allow;
    }
    return allowed;
  }

  /**
   * `check(dirPrefix + name)` for an entry of a folder (`dirPrefix` ends with `/`), without
   * building the path when no rule needs it.
   */
  checkChild(dirPrefix: string, name: string): boolean {
    if (isStagingName(name)) return false;
    if (this.hideDotfiles && isDotName(name)) return false;
    return this.rules.length === 0 || this.allowedByRules(dirPrefix + name);
  }

  /**
   * Staging files (any segment), hidden dotfiles (last segment only, as File Browser does), then
   * rules (File Browser's Check).
   */
  check(virtualPath: string): boolean {
    const name = lastSegment(virtualPath);
    // The server's staging files are in nobody's view, whatever the rules say: nor is anything
    // inside one (a folder another write is putting in place).
    if (virtualPath.includes('.fb-') && virtualPath.split('/').some(isStagingName)) return false;
    if (this.hideDotfiles && isDotName(name)) return false;
    return this.allowedByRules(virtualPath);
  }
}

function lastSegment(virtualPath: string): string {
  const trimmed = virtualPath.replace(/\/+$/, '');
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

function isDotName(name: string): boolean {
  return name.startsWith('.');
}
