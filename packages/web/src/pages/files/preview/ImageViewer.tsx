import { useCallback, useEffect, useRef, useState, type PointerEvent as ReactPointerEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../../components/Icon';
import {
  actualSizeView,
  clampView,
  fitSize,
  FITTED,
  isZoomed,
  MAX_SCALE,
  MIN_SCALE,
  panBy,
  STEP_FACTOR,
  toggleZoom,
  wheelFactor,
  zoomAt,
  type Point,
  type Size,
  type View,
} from './zoom-pan';
import { useWindowKeyDown } from '../../../hooks/use-window-key-down';

/** Spec 9: two taps within 300 ms are a double tap. */
const DOUBLE_TAP_MS = 300;
const DOUBLE_TAP_SLOP_PX = 30;
/** A horizontal swipe at least this long, on an image that is not zoomed, steps to the neighbour. */
const SWIPE_PX = 60;

interface ImageViewerProps {
  /** The screen-sized rendition. */
  src: string;
  /** The original file: shown when `src` fails, and swapped in for detail once zoomed. */
  original: string;
  alt: string;
  onSwipe?: (direction: 'previous' | 'next') => void;
  /** Shows the original at its own pixel size rather than fitted (the preview bar's toggle). */
  fullSize?: boolean;
  /** Told when the user leaves full size another way (back to fitting with 0 or the scale). */
  onFullSizeChange?: (fullSize: boolean) => void;
}

interface Gesture {
  pointers: Map<number, Point>;
  /** The view, pointer distance and midpoint when the current one- or two-finger gesture began. */
  startView: View;
  startDistance: number;
  startMid: Point;
  /** Where and when the first pointer went down, for taps and swipes. */
  downAt: Point;
  downTime: number;
  pinched: boolean;
  moved: boolean;
}

const distance = (a: Point, b: Point) => Math.hypot(a.x - b.x, a.y - b.y);
const midpoint = (a: Point, b: Point): Point => ({ x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 });

/**
 * An image fitted to the screen that zooms (wheel, pinch, double click or tap, buttons, + - 0 keys)
 * and pans (drag) while zoomed.
 */
export function ImageViewer({
  src,
  original,
  alt,
  onSwipe,
  fullSize = false,
  onFullSizeChange,
}: ImageViewerProps) {
  const { t } = useTranslation();
  const frame = useRef<HTMLDivElement>(null);
  const [current, setCurrent] = useState(src);
  const [status, setStatus] = useState<'loading' | 'ready' | 'failed'>('loading');
  // The first rendition's size fixes the drawn box, so swapping in the original keeps the view.
  const [natural, setNatural] = useState<Size | null>(null);
  const [viewport, setViewport] = useState<Size>({ width: 0, height: 0 });
  const [view, setView] = useState<View>(FITTED);
  const [moving, setMoving] = useState(false);
  const gesture = useRef<Gesture | null>(null);
  const lastTap = useRef<{ at: Point; time: number } | null>(null);
  const lastTouchToggle = useRef(0);
  // The original's own pixel size, known once it has been loaded.
  const [originalSize, setOriginalSize] = useState<Size | null>(null);

  const box = natural ? fitSize(natural, viewport) : null;
  const boxRef = useRef<Size | null>(box);
  boxRef.current = box;
  const viewportRef = useRef(viewport);
  viewportRef.current = viewport;

  useEffect(() => {
    const element = frame.current;
    if (!element) return;
    const measure = () => setViewport({ width: element.clientWidth, height: element.clientHeight });
    measure();
    if (typeof ResizeObserver === 'undefined') {
      window.addEventListener('resize', measure);
      return () => window.removeEventListener('resize', measure);
    }
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  // A resize (phone rotation) may leave the zoomed image off its limits.
  useEffect(() => {
    const size = boxRef.current;
    if (size) setView((v) => clampView(v, size, viewport));
  }, [box?.width, box?.height, viewport]);

  /** A point of the screen relative to the centre of the viewer. */
  const fromCentre = useCallback((clientX: number, clientY: number): Point => {
    const rect = frame.current?.getBoundingClientRect();
    if (!rect) return { x: 0, y: 0 };
    return { x: clientX - rect.left - rect.width / 2, y: clientY - rect.top - rect.height / 2 };
  }, []);

  const zoomBy = useCallback((factor: number, at: Point = { x: 0, y: 0 }) => {
    const size = boxRef.current;
    if (size) setView((v) => zoomAt(v, factor, at, size, viewportRef.current));
  }, []);

  // React's wheel listener is passive; this one must be able to keep the page from scrolling.
  useEffect(() => {
    const element = frame.current;
    if (!element) return;
    const onWheel = (event: WheelEvent) => {
      event.preventDefault();
      zoomBy(
        wheelFactor(event.deltaY, event.deltaMode, event.ctrlKey),
        fromCentre(event.clientX, event.clientY),
      );
    };
    element.addEventListener('wheel', onWheel, { passive: false });
    return () => element.removeEventListener('wheel', onWheel);
  }, [zoomBy, fromCentre]);

  const fit = useCallback(() => {
    setView(FITTED);
    onFullSizeChange?.(false);
  }, [onFullSizeChange]);

  // Full size needs the original's pixel size: the original replaces the rendition (decoded
  // first where the browser can, so the image never blanks) and its load tells the size.
  useEffect(() => {
    if (!fullSize || current === original || status !== 'ready') return;
    let active = true;
    const image = new Image();
    image.src = original;
    if (typeof image.decode !== 'function') {
      setCurrent(original);
      return;
    }
    image.decode().then(
      () => {
        if (!active) return;
        setOriginalSize({ width: image.naturalWidth, height: image.naturalHeight });
        setCurrent(original);
      },
      () => undefined,
    );
    return () => {
      active = false;
    };
  }, [fullSize, current, original, status]);

  const wasFullSize = useRef(fullSize);
  useEffect(() => {
    const size = boxRef.current;
    if (fullSize && originalSize && size) setView(actualSizeView(originalSize, size, viewportRef.current));
    else if (!fullSize && wasFullSize.current) setView(FITTED);
    wasFullSize.current = fullSize;
  }, [fullSize, originalSize, box?.width, box?.height]);

  useWindowKeyDown((event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (
      event.target instanceof HTMLElement &&
      event.target.closest('input, textarea, select, [role="dialog"]')
    ) {
      return;
    }
    if (event.key === '+' || event.key === '=') zoomBy(STEP_FACTOR);
    else if (event.key === '-') zoomBy(1 / STEP_FACTOR);
    else if (event.key === '0') fit();
    else return;
    event.preventDefault();
  });

  // Zoomed in, the screen-sized rendition runs out of pixels: fetch the original and swap it in
  // once it is decoded, so the image never blanks.
  const wantsOriginal = isZoomed(view) && current !== original && status === 'ready';
  useEffect(() => {
    if (!wantsOriginal) return;
    let active = true;
    const image = new Image();
    image.src = original;
    if (typeof image.decode !== 'function') return;
    image.decode().then(
      () => active && setCurrent(original),
      () => undefined,
    );
    return () => {
      active = false;
    };
  }, [wantsOriginal, original]);

  const toggleAt = (at: Point) => {
    const size = boxRef.current;
    if (size) setView((v) => toggleZoom(v, at, size, viewportRef.current));
  };

  const onPointerDown = (event: ReactPointerEvent<HTMLDivElement>) => {
    if (event.pointerType === 'mouse' && event.button !== 0) return;
    if (event.target instanceof Element && event.target.closest('button')) return;
    event.currentTarget.setPointerCapture(event.pointerId);
    const point = fromCentre(event.clientX, event.clientY);
    const g: Gesture = gesture.current ?? {
      pointers: new Map(),
      startView: view,
      startDistance: 0,
      startMid: point,
      downAt: point,
      downTime: event.timeStamp,
      pinched: false,
      moved: false,
    };
    g.pointers.set(event.pointerId, point);
    const [a, b] = [...g.pointers.values()];
    g.startView = view;
    if (a && b) {
      g.pinched = true;
      g.startDistance = distance(a, b);
      g.startMid = midpoint(a, b);
    } else {
      g.startMid = point;
    }
    gesture.current = g;
    setMoving(true);
  };

  const onPointerMove = (event: ReactPointerEvent<HTMLDivElement>) => {
    const g = gesture.current;
    const size = boxRef.current;
    if (!g || !size || !g.pointers.has(event.pointerId)) return;
    const point = fromCentre(event.clientX, event.clientY);
    g.pointers.set(event.pointerId, point);
    if (distance(point, g.downAt) > DOUBLE_TAP_SLOP_PX / 3) g.moved = true;
    const [a, b] = [...g.pointers.values()];
    if (a && b && g.startDistance > 0) {
      const mid = midpoint(a, b);
      const zoomed = zoomAt(g.startView, distance(a, b) / g.startDistance, g.startMid, size, viewport);
      setView(panBy(zoomed, mid.x - g.startMid.x, mid.y - g.startMid.y, size, viewport));
    } else if (a && isZoomed(g.startView)) {
      setView(panBy(g.startView, a.x - g.startMid.x, a.y - g.startMid.y, size, viewport));
    }
  };

  const onPointerEnd = (event: ReactPointerEvent<HTMLDivElement>) => {
    const g = gesture.current;
    if (!g || !g.pointers.has(event.pointerId)) return;
    const point = g.pointers.get(event.pointerId)!;
    g.pointers.delete(event.pointerId);
    const [rest] = [...g.pointers.values()];
    if (rest) {
      // One finger of a pinch lifted: the other one pans on from here.
      g.startView = view;
      g.startMid = rest;
      g.startDistance = 0;
      return;
    }
    gesture.current = null;
    setMoving(false);
    if (event.type === 'pointercancel' || g.pinched) return;

    const dx = point.x - g.downAt.x;
    const dy = point.y - g.downAt.y;
    const touch = event.pointerType !== 'mouse';
    if (touch && !isZoomed(view) && onSwipe && Math.abs(dx) >= SWIPE_PX && Math.abs(dx) > 2 * Math.abs(dy)) {
      onSwipe(dx < 0 ? 'next' : 'previous');
      return;
    }
    if (!touch || g.moved) return;
    // Touch and pen: the browser's double-tap zoom is off (touch-action: none), so taps are counted here.
    const tap = lastTap.current;
    if (tap && event.timeStamp - tap.time <= DOUBLE_TAP_MS && distance(tap.at, point) <= DOUBLE_TAP_SLOP_PX) {
      lastTap.current = null;
      lastTouchToggle.current = event.timeStamp;
      toggleAt(point);
    } else {
      lastTap.current = { at: point, time: event.timeStamp };
    }
  };

  const scaleText = `${Math.round(view.scale * 100)}%`;

  return (
    <div
      ref={frame}
      className={`image-viewer${isZoomed(view) ? ' image-viewer--zoomed' : ''}${moving ? ' image-viewer--moving' : ''}`}
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={onPointerEnd}
      onPointerCancel={onPointerEnd}
      onDoubleClick={(event) => {
        // A double tap was already handled from its pointer events.
        if (event.timeStamp - lastTouchToggle.current < 600) return;
        if (event.target instanceof Element && event.target.closest('button')) return;
        toggleAt(fromCentre(event.clientX, event.clientY));
      }}
    >
      {status !== 'failed' && (
        <img
          className="image-viewer__image"
          src={current}
          alt={alt}
          draggable={false}
          style={{
            width: box ? `${box.width}px` : undefined,
            height: box ? `${box.height}px` : undefined,
            visibility: box ? 'visible' : 'hidden',
            transform: `translate(${view.x}px, ${view.y}px) scale(${view.scale})`,
          }}
          onLoad={(event) => {
            const image = event.currentTarget;
            setNatural((known) => known ?? { width: image.naturalWidth, height: image.naturalHeight });
            if (current === original) {
              setOriginalSize({ width: image.naturalWidth, height: image.naturalHeight });
            }
            setStatus('ready');
          }}
          onError={() => {
            // The screen-sized rendition may not exist (e.g. a format the server cannot resize):
            // the original is the next best thing.
            if (current !== original) {
              setNatural(null);
              setCurrent(original);
            } else {
              setStatus('failed');
            }
          }}
        />
      )}
      {status === 'loading' && (
        <div className="preview__spinner" role="status" aria-label={t('common.loading')} />
      )}
      {status === 'failed' && (
        <div className="preview__message">
          <Icon name="broken_image" className="preview__big-icon" />
          <p>{t('preview.loadFailed')}</p>
        </div>
      )}
      {status === 'ready' && (
        <div className="image-viewer__controls">
          <button
            type="button"
            className="icon-button preview__button"
            aria-label={t('preview.zoomOut')}
            disabled={view.scale <= MIN_SCALE}
            onClick={() => zoomBy(1 / STEP_FACTOR)}
          >
            <Icon name="zoom_out" />
          </button>
          <button
            type="button"
            className="image-viewer__scale"
            // The shown scale starts the name: speech users say what they see (WCAG 2.5.3).
            aria-label={`${scaleText} ${t('preview.resetZoom')}`}
            title={t('preview.resetZoom')}
            onClick={fit}
          >
            {scaleText}
          </button>
          <button
            type="button"
            className="icon-button preview__button"
            aria-label={t('preview.zoomIn')}
            disabled={view.scale >= MAX_SCALE}
            onClick={() => zoomBy(STEP_FACTOR)}
          >
            <Icon name="zoom_in" />
          </button>
        </div>
      )}
    </div>
  );
}
