// Repeated measurements of "ours" and "reference", alternated so that a machine that slows
// down (thermal, a neighbour) affects both sides alike; the median sample of each side is kept.
import { wasInterrupted } from './cleanup.mjs';

/**
 * @typedef {object} Measure
 * @property {number} value
 * @property {string} unit e.g. "req/s", "MiB/s", "s", "ms", "img/s", "MB"
 * @property {string} [detail] free text for the JSON and the notes
 * @property {Record<string, number | null>} [extra] secondary figures (e.g. first result time)
 */

/**
 * @typedef {object} Summary
 * @property {number} value median value
 * @property {string} unit
 * @property {string} [detail] detail of the median sample
 * @property {number[]} samples all kept values, in run order
 * @property {Measure[]} measures all kept samples
 */

/** @typedef {Summary | Error} Side */

/**
 * @param {Measure[]} list
 * @returns {Summary}
 */
function summarize(list) {
  const sorted = [...list].sort((a, b) => a.value - b.value);
  const mid = /** @type {Measure} */ (sorted[Math.floor((sorted.length - 1) / 2)]);
  return {
    value: mid.value,
    unit: mid.unit,
    detail: mid.detail,
    samples: list.map((m) => m.value),
    measures: list,
  };
}

/**
 * Median of a secondary figure across samples.
 * @param {Summary} s
 * @param {string} key
 * @returns {number | null}
 */
export function medianExtra(s, key) {
  const values = s.measures
    .map((m) => m.extra?.[key])
    .filter((v) => typeof v === 'number')
    .sort((a, b) => /** @type {number} */ (a) - /** @type {number} */ (b));
  return values.length ? /** @type {number} */ (values[Math.floor((values.length - 1) / 2)]) : null;
}

/**
 * Runs reference then ours, `reps` times. A side that throws stops being measured and is
 * reported as that error (e.g. Unavailable, Skipped). With warmup, one extra unrecorded round
 * runs first.
 * @param {{ reps: number, warmup?: boolean, reference: (i: number) => Promise<Measure>,
 *   ours: (i: number) => Promise<Measure> }} plan
 * @returns {Promise<{ reference: Side, ours: Side }>}
 */
export async function measureBoth(plan) {
  /** @type {Record<'reference' | 'ours', { kept: Measure[], error: Error | null }>} */
  const state = { reference: { kept: [], error: null }, ours: { kept: [], error: null } };
  const rounds = plan.reps + (plan.warmup ? 1 : 0);
  for (let i = 0; i < rounds && !wasInterrupted(); i++) {
    for (const side of /** @type {const} */ (['reference', 'ours'])) {
      const st = state[side];
      if (st.error) continue;
      try {
        const m = await plan[side](i);
        if (!plan.warmup || i > 0) st.kept.push(m);
      } catch (err) {
        st.error = err instanceof Error ? err : new Error(String(err));
      }
    }
  }
  /** @param {{ kept: Measure[], error: Error | null }} st */
  const side = (st) => st.error ?? (st.kept.length ? summarize(st.kept) : new Error('interrupted'));
  return { reference: side(state.reference), ours: side(state.ours) };
}
