/** Zoom limits of the image viewer: never smaller than fitting the screen, at most 8 times that. */
export const MIN_SCALE = 1;
export const MAX_SCALE = 8;
/** The factor of the zoom buttons and of a double click. */
export const STEP_FACTOR = 2;

/**
 * How the image sits in the viewer: its scale over the fitted size, and the offset of its centre
 * from the viewer's centre in screen pixels (as in `translate(x, y) scale(s)` about the centre).
 */
export interface View {
  scale: number;
  x: number;
  y: number;
}

export interface Size {
  width: number;
  height: number;
}

/** A screen point relative to the viewer's centre. */
export interface Point {
  x: number;
  y: number;
}

export const FITTED: View = { scale: 1, x: 0, y: 0 };

export function clampScale(scale: number): number {
  if (!Number.isFinite(scale)) return MIN_SCALE;
  return Math.min(MAX_SCALE, Math.max(MIN_SCALE, scale));
}

function clampAxis(offset: number, scaled: number, viewport: number): number {
  // An image narrower than the viewer stays centred; a wider one may move until an edge
  // reaches the viewer's edge, never further, so it cannot be lost off screen.
  const room = Math.max(0, (scaled - viewport) / 2);
  // "+ 0" turns -0 into 0.
  return Math.min(room, Math.max(-room, offset)) + 0;
}

/** Keeps the scale within its limits and the image over the viewer. */
export function clampView(view: View, image: Size, viewport: Size): View {
  const scale = clampScale(view.scale);
  return {
    scale,
    x: clampAxis(view.x, image.width * scale, viewport.width),
    y: clampAxis(view.y, image.height * scale, viewport.height),
  };
}

/** Zooms by `factor` keeping the image point under `at` where it is on screen. */
export function zoomAt(view: View, factor: number, at: Point, image: Size, viewport: Size): View {
  const scale = clampScale(view.scale * factor);
  const ratio = scale / view.scale;
  return clampView(
    { scale, x: at.x - (at.x - view.x) * ratio, y: at.y - (at.y - view.y) * ratio },
    image,
    viewport,
  );
}

export function panBy(view: View, dx: number, dy: number, image: Size, viewport: Size): View {
  return clampView({ scale: view.scale, x: view.x + dx, y: view.y + dy }, image, viewport);
}

/** The zoom factor of one wheel event; pinching on a touchpad arrives as a wheel with Ctrl held. */
export function wheelFactor(deltaY: number, deltaMode: number, pinch: boolean): number {
  const pixels = deltaMode === 1 ? deltaY * 16 : deltaMode === 2 ? deltaY * 400 : deltaY;
  return Math.exp(-pixels * (pinch ? 0.01 : 0.0015));
}

/** A double click (or tap) zooms in at that point; on a zoomed image it goes back to fitting. */
export function toggleZoom(view: View, at: Point, image: Size, viewport: Size): View {
  if (view.scale > MIN_SCALE) return FITTED;
  return zoomAt(view, STEP_FACTOR, at, image, viewport);
}

export function isZoomed(view: View): boolean {
  return view.scale > MIN_SCALE;
}

/**
 * The size an image is drawn at before zooming: the whole image inside the viewer, never
 * enlarged past its own pixels (a small icon stays small and sharp).
 */
export function fitSize(natural: Size, viewport: Size): Size {
  if (natural.width <= 0 || natural.height <= 0) return { width: 0, height: 0 };
  const ratio = Math.min(1, viewport.width / natural.width, viewport.height / natural.height);
  return { width: natural.width * ratio, height: natural.height * ratio };
}

/**
 * "Full size": the original's pixels one to one on screen (as far as the zoom limits allow),
 * centred. `image` is the fitted size the image is drawn at.
 */
export function actualSizeView(original: Size, image: Size, viewport: Size): View {
  if (original.width <= 0 || image.width <= 0) return FITTED;
  return clampView({ scale: original.width / image.width, x: 0, y: 0 }, image, viewport);
}
