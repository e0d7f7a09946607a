import type { Rule } from '@filebrowser/contract';
import { badRequest } from '../errors.js';

/**
 * A regex rule's pattern as JavaScript runs it. File Browser used Go's RE2, whose leading inline
 * flags such as `(?i)` are common in its rules and have no JavaScript syntax: they become flags.
 * Everything else is JavaScript (unicode mode) syntax. The rule matcher (src/files/rules.ts) and
 * the validator both compile through here, so what is saved is what is applied.
 */
export function compileRulePattern(raw: string): RegExp {
  let flags = 'u';
  let source = raw;
  const inline = /^\(\?([ims]+)\)/.exec(source);
  if (inline?.[1]) {
    flags += [...new Set(inline[1])].join('');
    source = source.slice(inline[0].length);
  }
  return new RegExp(source, flags);
}

/**
 * Refuses rule lists that could not be applied: a regex rule whose pattern does not compile,
 * or that has no pattern. The old server accepted these and crashed on first use.
 */
export function validateRules(rules: Rule[] | null | undefined, where: string): void {
  (rules ?? []).forEach((rule, i) => {
    if (!rule.regex) return;
    const raw = rule.regexp?.raw ?? '';
    if (!raw) throw badRequest(`${where} rule ${i + 1} is a regular expression rule without a pattern`);
    try {
      compileRulePattern(raw);
    } catch {
      throw badRequest(`${where} rule ${i + 1} has an invalid regular expression: ${raw}`);
    }
  });
}
