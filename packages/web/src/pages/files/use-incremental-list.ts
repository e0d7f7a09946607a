import { useEffect, useRef, useState, type RefObject } from 'react';

export const FIRST_RENDER_COUNT = 50;

/**
 * Renders a long list in steps: the first 50 entries, then 50 more whenever the sentinel element
 * after the list scrolls near the viewport.
 */
export function useIncrementalList<T>(items: T[]): {
  visible: T[];
  sentinel: RefObject<HTMLDivElement | null>;
} {
  const [count, setCount] = useState(FIRST_RENDER_COUNT);
  const [source, setSource] = useState(items);
  const sentinel = useRef<HTMLDivElement | null>(null);

  // A new listing starts again from the top.
  if (source !== items) {
    setSource(items);
    setCount(FIRST_RENDER_COUNT);
  }

  // Without an observer there is no way to know when to add more: render everything.
  const hasMore = typeof IntersectionObserver !== 'undefined' && count < items.length;
  useEffect(() => {
    const element = sentinel.current;
    if (!hasMore || !element) return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((entry) => entry.isIntersecting))
          setCount((current) => current + FIRST_RENDER_COUNT);
      },
      { rootMargin: '0px 0px 25% 0px' },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [hasMore, count]);

  return { visible: hasMore ? items.slice(0, count) : items, sentinel };
}
