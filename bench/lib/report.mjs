// Turns measurements into rows (ratio, target, verdict), prints the table, writes the JSON.
import fs from 'node:fs';
import path from 'node:path';
import { Skipped, Unavailable } from './outcome.mjs';

/**
 * Ratio targets compare ours / reference; a value target is an absolute bound on ours
 * (only the first-result latency and memory rows have one, as the architecture states).
 * @typedef {{ kind: 'min-ratio' | 'max-ratio', value: number } | { kind: 'max-value', value: number, unit: string }} Target
 */

/**
 * @typedef {{ value: number, unit: string, samples: number[], detail?: string, cpuSeconds: number | null,
 *   cpuSamples: (number | null)[] }} Figures CPU seconds: of our server for ours, of the reference
 *   server or tool for a reference
 */

/**
 * @typedef {object} RowResult
 * @property {string} id
 * @property {string} title
 * @property {Figures | null} ours
 * @property {Figures & { tool: string } | null} reference
 * @property {Figures & { tool: string, ratio: number | null } | null} [second] a second
 *   reference shown beside the first (for information: the verdict is on the first)
 * @property {number | null} ratio ours / reference
 * @property {Target} target
 * @property {'pass' | 'fail' | 'skipped' | 'unavailable' | 'error'} status
 * @property {string} [reason] why there is no verdict
 * @property {string[]} notes
 */

/**
 * @param {import('./measure.mjs').Side | null} side
 */
function sideFigures(side) {
  if (!side || side instanceof Error) return null;
  return {
    value: side.value,
    unit: side.unit,
    samples: side.samples,
    detail: side.detail,
    cpuSeconds: side.cpuSeconds ?? null,
    cpuSamples: side.cpuSamples ?? [],
  };
}

/**
 * @param {{ id: string, title: string, target: Target, ours: import('./measure.mjs').Side,
 *   reference?: import('./measure.mjs').Side | null, referenceTool?: string,
 *   second?: import('./measure.mjs').Side | null, secondTool?: string, notes?: string[] }} input
 * @returns {RowResult}
 */
export function evaluate(input) {
  const { id, title, target, ours, reference = null, referenceTool = '', notes = [] } = input;
  const refFigures = sideFigures(reference);
  const secondFigures = sideFigures(input.second ?? null);
  const oursFigures = sideFigures(ours);
  /** @type {RowResult} */
  const row = {
    id,
    title,
    ours: oursFigures,
    reference: refFigures ? { ...refFigures, tool: referenceTool } : null,
    ratio: null,
    target,
    status: 'error',
    notes: [...notes],
  };
  if (input.second !== undefined) {
    const ratio = oursFigures && secondFigures?.value ? oursFigures.value / secondFigures.value : null;
    row.second = secondFigures ? { ...secondFigures, tool: input.secondTool ?? '', ratio } : null;
    if (input.second instanceof Error) row.notes.push(`${input.secondTool}: ${input.second.message}`);
  }
  if (reference instanceof Error && !(ours instanceof Error)) {
    row.notes.push(`reference: ${reference.message}`);
  }
  if (ours instanceof Error) {
    row.status = ours instanceof Unavailable ? 'unavailable' : 'error';
    row.reason = ours instanceof Unavailable ? ours.message : `error: ${ours.message}`;
    return row;
  }
  if (row.ours && row.reference && row.reference.value > 0) row.ratio = row.ours.value / row.reference.value;
  if (target.kind === 'max-value') {
    row.status = ours.value < target.value ? 'pass' : 'fail';
    return row;
  }
  if (reference instanceof Error || reference === null) {
    row.status = reference instanceof Skipped ? 'skipped' : 'error';
    row.reason = reference instanceof Skipped ? reference.message : `reference error: ${reference?.message}`;
    row.notes = row.notes.filter((n) => !n.startsWith('reference: '));
    return row;
  }
  if (row.ratio === null) {
    row.reason = 'reference measured zero';
    return row;
  }
  const ok = target.kind === 'min-ratio' ? row.ratio >= target.value : row.ratio <= target.value;
  row.status = ok ? 'pass' : 'fail';
  return row;
}

/** @param {number} n */
export function fmtNumber(n) {
  const abs = Math.abs(n);
  if (abs >= 1000) return Math.round(n).toLocaleString('en-US');
  if (abs >= 100) return n.toFixed(0);
  if (abs >= 10) return n.toFixed(1);
  if (abs >= 1) return n.toFixed(2);
  return n.toPrecision(2);
}

/** @param {{ value: number, unit: string } | null} m */
function fmtMeasure(m) {
  return m ? `${fmtNumber(m.value)} ${m.unit}` : '-';
}

/** @param {Target} t */
export function fmtTarget(t) {
  if (t.kind === 'max-value') return `< ${t.value} ${t.unit}`;
  return t.kind === 'min-ratio' ? `>= ${t.value}x` : `<= ${t.value}x`;
}

/** @param {RowResult} r */
function fmtVerdict(r) {
  if (r.status === 'pass') return 'pass';
  if (r.status === 'fail') return 'FAIL';
  return r.reason ?? r.status;
}

/**
 * @param {RowResult[]} rows
 * @returns {string}
 */
export function formatTable(rows) {
  const head = ['row', 'ours', 'reference', 'ratio', 'target', 'result'];
  const body = rows.flatMap((r) => {
    const line = [
      r.title,
      fmtMeasure(r.ours),
      r.reference ? `${fmtMeasure(r.reference)} (${r.reference.tool})` : '-',
      r.ratio === null ? '-' : `${r.ratio.toFixed(2)}x`,
      fmtTarget(r.target),
      fmtVerdict(r),
    ];
    if (!r.second) return [line];
    // The second reference on a line of its own, under the first, without a verdict.
    const { second } = r;
    const ratio = second.ratio === null ? '-' : `${second.ratio.toFixed(2)}x`;
    return [line, ['', '', `${fmtMeasure(second)} (${second.tool})`, ratio, '', '(information)']];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((line) => (line[i] ?? '').length)));
  const line = (/** @type {string[]} */ cells) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const out = [line(head), widths.map((w) => '-'.repeat(w)).join('  ')];
  for (const cells of body) out.push(line(cells));
  const notes = rows.flatMap((r) => r.notes.map((n) => `  ${r.id}: ${n}`));
  if (notes.length) out.push('', 'notes:', ...notes);
  return out.join('\n');
}

/**
 * @param {string} file
 * @param {object} data
 */
export async function writeJson(file, data) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let text = JSON.stringify(data, null, 2) + '\n';
  try {
    // formatted like the rest of the repository, so `prettier --check .` accepts the file
    const prettier = await import('prettier');
    const config = (await prettier.resolveConfig(file)) ?? {};
    text = await prettier.format(text, { ...config, filepath: file });
  } catch {
    // prettier is a dev dependency: plain JSON is fine without it
  }
  fs.writeFileSync(file, text);
}
