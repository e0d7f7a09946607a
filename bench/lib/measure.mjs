// Repeated measurements of "ours" and "reference", alternated so that a machine that slows
// down (thermal, a neighbour) affects both sides alike; the median sample of each side is kept.
import { wasInterrupted } from './cleanup.mjs';
import { startCpuMeter } from './cpu.mjs';

/**
 * @typedef {object} Measure
 * @property {number} value
 * @property {string} unit e.g. "req/s", "MiB/s", "s", "ms", "img/s", "MB"
 * @property {string} [detail] free text for the JSON and the notes
 * @property {Record<string, number | null>} [extra] secondary figures (e.g. first result time)
 * @property {import('./cpu.mjs').CpuFigures} [cpu] CPU seconds each process spent during the
 *   sample (set by measureBoth)
 */

/**
 * @typedef {object} Summary
 * @property {number} value median value
 * @property {string} unit
 * @property {string} [detail] detail of the median sample
 * @property {number | null} [cpuSeconds] CPU seconds the measured side (our server, or the
 *   reference) spent in the median sample
 * @property {(number | null)[]} [cpuSamples] the same for every kept sample, in run order
 * @property {number[]} samples all kept values, in run order
 * @property {Measure[]} measures all kept samples
 */

/** @typedef {Summary | Error} Side */

/** @typedef {'reference' | 'second' | 'ours'} SideName */

/**
 * @param {SideName} side
 * @param {import('./cpu.mjs').CpuFigures} cpu
 */
const cpuOfSide = (side, cpu) => (side === 'ours' ? cpu.server : cpu.reference);

/**
 * @param {SideName} side
 * @param {Measure[]} list
 * @returns {Summary}
 */
function summarize(side, list) {
  const sorted = [...list].sort((a, b) => a.value - b.value);
  const mid = /** @type {Measure} */ (sorted[Math.floor((sorted.length - 1) / 2)]);
  return {
    value: mid.value,
    unit: mid.unit,
    detail: mid.detail,
    cpuSeconds: mid.cpu ? cpuOfSide(side, mid.cpu) : null,
    cpuSamples: list.map((m) => (m.cpu ? cpuOfSide(side, m.cpu) : null)),
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
 * Runs reference (then the second reference, when there is one) then ours, `reps` times. A side
 * that throws stops being measured and is reported as that error (e.g. Unavailable, Skipped).
 * With warmup, one extra unrecorded round runs first. Every sample records the CPU seconds our
 * server and the reference spent meanwhile, and its detail ends with the measured side's.
 * @param {{ reps: number, warmup?: boolean, reference: (i: number) => Promise<Measure>,
 *   second?: (i: number) => Promise<Measure>, ours: (i: number) => Promise<Measure> }} plan
 * @returns {Promise<{ reference: Side, second: Side | null, ours: Side }>}
 */
export async function measureBoth(plan) {
  /** @type {SideName[]} */
  const order = plan.second ? ['reference', 'second', 'ours'] : ['reference', 'ours'];
  /** @type {Record<SideName, { kept: Measure[], error: Error | null }>} */
  const state = {
    reference: { kept: [], error: null },
    second: { kept: [], error: null },
    ours: { kept: [], error: null },
  };
  const rounds = plan.reps + (plan.warmup ? 1 : 0);
  for (let i = 0; i < rounds && !wasInterrupted(); i++) {
    for (const side of order) {
      const st = state[side];
      const run = plan[side];
      if (st.error || !run) continue;
      try {
        const stop = startCpuMeter();
        const m = await run(i);
        m.cpu = stop();
        const cpu = cpuOfSide(side, m.cpu);
        if (cpu !== null) {
          const who = side === 'ours' ? 'server' : 'reference';
          // The harness is the client of every request: its CPU shows when the client is the limit.
          m.detail = `${m.detail ? `${m.detail}, ` : ''}${who} CPU ${cpu.toFixed(2)} s (harness ${m.cpu.harness.toFixed(2)} s)`;
        }
        // Every sample with its clock time, to line samples up with what the machine did meanwhile
        // (e.g. /proc/meminfo's Dirty and Writeback sampled beside the run).
        if (process.env.BENCH_SAMPLE_LOG) {
          const warm = plan.warmup && i === 0 ? ' (warm-up)' : '';
          console.error(
            `bench: sample ${new Date().toISOString()} ${side} ${i}${warm}: ${m.value.toFixed(1)} ${m.unit}, ` +
              `CPU server ${m.cpu.server} s, reference ${m.cpu.reference} s, harness ${m.cpu.harness} s`,
          );
        }
        if (!plan.warmup || i > 0) st.kept.push(m);
      } catch (err) {
        st.error = err instanceof Error ? err : new Error(String(err));
      }
    }
  }
  /** @param {SideName} name */
  const side = (name) => {
    const st = state[name];
    return st.error ?? (st.kept.length ? summarize(name, st.kept) : new Error('interrupted'));
  };
  return { reference: side('reference'), second: plan.second ? side('second') : null, ours: side('ours') };
}
