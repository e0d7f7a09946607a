import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import type { AxeResults, Result } from 'axe-core';

const require = createRequire(import.meta.url);
// The engine's source text, injected into the page as it is: no wrapper library between us and axe.
const AXE_SOURCE = (require('axe-core') as { source: string }).source;

/** WCAG 2.1 level A and AA: what the issue asks the app to meet. */
export const WCAG_21_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

function describeViolation(violation: Result): string {
  // The first check's message carries the measured values (contrast ratio, colours, name).
  const targets = violation.nodes
    .map(
      (node) => `    ${node.target.join(' ')}: ${[...node.any, ...node.all, ...node.none][0]?.message ?? ''}`,
    )
    .join('\n');
  return `  ${violation.id} (${violation.impact ?? 'n/a'}): ${violation.help}\n${targets}`;
}

/**
 * Runs axe-core on the page as it is now (open prompts included) and fails with every violation's
 * id, targets and help text, so a failure says what to fix without opening a report.
 */
export async function expectNoAxeViolations(page: Page, label: string): Promise<void> {
  // Evaluated through the DevTools protocol rather than added as a <script>: the app's CSP forbids
  // inline scripts, and the check must not need a weaker policy than the one users get.
  // A prompt fading in is measured at its final colours: wait for finite animations to end.
  await page.evaluate(() =>
    Promise.all(
      document
        .getAnimations()
        .filter((animation) => animation.effect?.getComputedTiming().iterations !== Infinity)
        .map((animation) => animation.finished.catch(() => undefined)),
    ),
  );
  const injected = await page.evaluate(() => 'axe' in window);
  if (!injected) await page.evaluate(AXE_SOURCE);
  const results = await page.evaluate(
    (tags) =>
      (
        window as unknown as { axe: { run: (context: Document, options: object) => Promise<AxeResults> } }
      ).axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] }),
    [...WCAG_21_AA, 'best-practice'],
  );
  if (results.violations.length === 0) return;
  throw new Error(
    `axe found ${results.violations.length} WCAG 2.1 AA violation(s) on ${label}:\n` +
      results.violations.map(describeViolation).join('\n'),
  );
}
