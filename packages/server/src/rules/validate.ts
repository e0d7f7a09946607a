import type { Rule } from '@filebrowser/contract';
import { badRequest } from '../errors.js';

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
      new RegExp(raw, 'u');
    } catch {
      throw badRequest(`${where} rule ${i + 1} has an invalid regular expression: ${raw}`);
    }
  });
}
