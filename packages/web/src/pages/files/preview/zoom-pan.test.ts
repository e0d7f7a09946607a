import { describe, expect, it } from 'vitest';
import {
  actualSizeView,
  clampScale,
  clampView,
  FITTED,
  fitSize,
  MAX_SCALE,
  MIN_SCALE,
  panBy,
  toggleZoom,
  wheelFactor,
  zoomAt,
} from './zoom-pan';

const viewport = { width: 1000, height: 800 };
// A landscape photo fitted to the viewer's width.
const image = { width: 1000, height: 600 };
const centre = { x: 0, y: 0 };

describe('clampScale', () => {
  it('keeps the scale between fitting the screen and 8 times that', () => {
    expect(clampScale(0.2)).toBe(MIN_SCALE);
    expect(clampScale(3)).toBe(3);
    expect(clampScale(50)).toBe(MAX_SCALE);
    expect(clampScale(Number.NaN)).toBe(MIN_SCALE);
    expect(clampScale(Number.POSITIVE_INFINITY)).toBe(MIN_SCALE);
  });
});

describe('clampView', () => {
  it('keeps a fitted image centred', () => {
    expect(clampView({ scale: 1, x: 120, y: -40 }, image, viewport)).toEqual(FITTED);
  });

  it('lets a zoomed image move until its edge meets the viewer edge', () => {
    // At 2x the image is 2000 x 1200: 500 px of room each side horizontally, 200 vertically.
    expect(clampView({ scale: 2, x: 900, y: -900 }, image, viewport)).toEqual({ scale: 2, x: 500, y: -200 });
    expect(clampView({ scale: 2, x: -100, y: 50 }, image, viewport)).toEqual({ scale: 2, x: -100, y: 50 });
  });

  it('centres an axis that still fits after zooming', () => {
    // 1.2x: 1200 x 720, taller room is none since 720 < 800.
    expect(clampView({ scale: 1.2, x: 0, y: 60 }, image, viewport).y).toBe(0);
  });
});

describe('zoomAt', () => {
  it('keeps the point under the pointer in place', () => {
    const at = { x: 200, y: 100 };
    const view = zoomAt(FITTED, 2, at, image, viewport);
    expect(view.scale).toBe(2);
    // The image point under (200, 100) was (200, 100) at 1x; at 2x it must still be on screen there.
    expect(view.x + 2 * 200).toBe(200);
    expect(view.y + 2 * 100).toBe(100);
  });

  it('zooms about the centre without moving', () => {
    expect(zoomAt(FITTED, 3, centre, image, viewport)).toEqual({ scale: 3, x: 0, y: 0 });
  });

  it('stops at the limits', () => {
    expect(zoomAt({ scale: 6, x: 0, y: 0 }, 4, centre, image, viewport).scale).toBe(MAX_SCALE);
    expect(zoomAt({ scale: 2, x: 300, y: 100 }, 0.1, centre, image, viewport)).toEqual(FITTED);
  });
});

describe('panBy', () => {
  it('moves a zoomed image within its room', () => {
    const zoomed = { scale: 2, x: 0, y: 0 };
    expect(panBy(zoomed, 120, -30, image, viewport)).toEqual({ scale: 2, x: 120, y: -30 });
    expect(panBy(zoomed, 5000, 5000, image, viewport)).toEqual({ scale: 2, x: 500, y: 200 });
  });

  it('does not move a fitted image', () => {
    expect(panBy(FITTED, 120, 80, image, viewport)).toEqual(FITTED);
  });
});

describe('toggleZoom', () => {
  it('zooms a fitted image in at the point', () => {
    expect(toggleZoom(FITTED, centre, image, viewport)).toEqual({ scale: 2, x: 0, y: 0 });
  });

  it('resets a zoomed image', () => {
    expect(toggleZoom({ scale: 5, x: 40, y: 10 }, { x: 300, y: 0 }, image, viewport)).toEqual(FITTED);
  });
});

describe('wheelFactor', () => {
  it('zooms in when scrolling up and out when scrolling down', () => {
    expect(wheelFactor(-100, 0, false)).toBeGreaterThan(1);
    expect(wheelFactor(100, 0, false)).toBeLessThan(1);
    expect(wheelFactor(100, 0, false) * wheelFactor(-100, 0, false)).toBeCloseTo(1);
  });

  it('treats line and page deltas like their pixel sizes', () => {
    expect(wheelFactor(3, 1, false)).toBeCloseTo(wheelFactor(48, 0, false));
    expect(wheelFactor(1, 2, false)).toBeCloseTo(wheelFactor(400, 0, false));
  });

  it('is more sensitive for a touchpad pinch', () => {
    expect(wheelFactor(-10, 0, true)).toBeGreaterThan(wheelFactor(-10, 0, false));
  });
});

describe('fitSize', () => {
  it('shrinks a large image to fit the viewer, keeping its shape', () => {
    expect(fitSize({ width: 4000, height: 3000 }, viewport)).toEqual({ width: 1000, height: 750 });
    expect(fitSize({ width: 1000, height: 4000 }, viewport)).toEqual({ width: 200, height: 800 });
  });

  it('never enlarges a small image', () => {
    expect(fitSize({ width: 64, height: 48 }, viewport)).toEqual({ width: 64, height: 48 });
  });

  it('gives nothing for an image without size', () => {
    expect(fitSize({ width: 0, height: 0 }, viewport)).toEqual({ width: 0, height: 0 });
  });
});

describe('actualSizeView', () => {
  it("shows the original's pixels one to one, centred", () => {
    expect(actualSizeView({ width: 3000, height: 1800 }, image, viewport)).toEqual({ scale: 3, x: 0, y: 0 });
  });

  it('stays within the zoom limits', () => {
    expect(actualSizeView({ width: 20000, height: 12000 }, image, viewport).scale).toBe(MAX_SCALE);
    // An image no bigger than the screen is already at full size when fitted.
    expect(actualSizeView({ width: 500, height: 300 }, { width: 500, height: 300 }, viewport)).toEqual(
      FITTED,
    );
  });

  it('is fitted while sizes are unknown', () => {
    expect(actualSizeView({ width: 0, height: 0 }, image, viewport)).toEqual(FITTED);
  });
});
