/**
 * How many runs each fuzz property makes: 10,000 in `npm test`, as many as `FB_FUZZ_RUNS` says
 * under `npm run fuzz`. Every fuzz file takes its count (and its time limit) from here, so one
 * variable turns every property up at once.
 */
export function runs(normal = 10_000): number {
  const asked = Number(process.env.FB_FUZZ_RUNS);
  return Number.isInteger(asked) && asked > 0 ? asked : normal;
}

/**
 * A time limit for a property of `count` runs that take about `msPerRun` each on a busy machine:
 * the suite's 30 s is meant for single tests, not for a long `npm run fuzz`.
 */
export function timeLimit(count: number, msPerRun: number): number {
  return Math.max(30_000, Math.ceil(count * msPerRun * 4));
}
