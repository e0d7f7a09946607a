/** The shell panel's size rules (product spec, business constants). */

/** Height of a newly opened panel, in em of the panel's font size. */
export const SHELL_DEFAULT_HEIGHT_EM = 25;
/** The smallest panel: one prompt line (2.25em), plus the divider that is dragged. */
export const SHELL_MIN_HEIGHT_EM = 2.25;
/** Room always left above the panel, so the header and the page stay reachable. */
export const SHELL_TOP_GAP_EM = 4;
/** Pointer moves while dragging are applied at most this often. */
export const SHELL_DRAG_THROTTLE_MS = 32;

export interface ShellMetrics {
  /** window.innerHeight, in pixels. */
  windowHeight: number;
  /** The panel's font size in pixels: what one em is. */
  fontSize: number;
  /** The divider's height in pixels. */
  dividerHeight: number;
}

/** The limits of the panel height in em: [2.25em + divider, window height - 4em]. */
export function shellHeightLimits({ windowHeight, fontSize, dividerHeight }: ShellMetrics): {
  min: number;
  max: number;
} {
  const min = SHELL_MIN_HEIGHT_EM + dividerHeight / fontSize;
  // A window too short for both limits keeps the smallest panel rather than none.
  const max = Math.max(min, windowHeight / fontSize - SHELL_TOP_GAP_EM);
  return { min, max };
}

/** `heightEm` held within the limits. */
export function clampShellHeight(heightEm: number, metrics: ShellMetrics): number {
  const { min, max } = shellHeightLimits(metrics);
  if (!Number.isFinite(heightEm)) return min;
  return Math.min(max, Math.max(min, heightEm));
}

/**
 * The panel height, in em, that puts its top edge (the divider) under a pointer at `clientY`:
 * the panel is anchored to the bottom of the window. Rounded to hundredths of an em.
 */
export function heightAtPointer(clientY: number, metrics: ShellMetrics): number {
  const wanted = (metrics.windowHeight - clientY) / metrics.fontSize;
  return Math.round(clampShellHeight(wanted, metrics) * 100) / 100;
}

/**
 * Calls `fn` at most once per `ms`: the first call runs at once, later ones within the interval
 * are folded into one trailing call with the latest arguments, so the final position of a drag is
 * never lost. `cancel` drops a pending trailing call.
 */
export function throttle<A extends unknown[]>(
  fn: (...args: A) => void,
  ms: number,
  now: () => number = () => Date.now(),
): ((...args: A) => void) & { cancel: () => void } {
  let last = -Infinity;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pending: A | undefined;
  const run = () => {
    timer = undefined;
    if (!pending) return;
    const args = pending;
    pending = undefined;
    last = now();
    fn(...args);
  };
  const throttled = (...args: A) => {
    pending = args;
    const wait = last + ms - now();
    if (wait <= 0) {
      if (timer !== undefined) clearTimeout(timer);
      run();
    } else {
      timer ??= setTimeout(run, wait);
    }
  };
  throttled.cancel = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    pending = undefined;
  };
  return throttled;
}
