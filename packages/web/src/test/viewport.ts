/**
 * Gives every element a layout size for the test's duration: the test DOM lays nothing out, so a
 * virtual list would otherwise see a viewport of 0 px and show no rows at all.
 */
export function withViewport(width = 800, height = 400): () => void {
  const proto = HTMLElement.prototype;
  const sizes = { clientWidth: width, clientHeight: height, offsetWidth: width, offsetHeight: height };
  const saved = Object.keys(sizes).map((key) => [key, Object.getOwnPropertyDescriptor(proto, key)] as const);
  for (const [key, size] of Object.entries(sizes)) {
    Object.defineProperty(proto, key, { configurable: true, get: () => size });
  }
  return () => {
    for (const [key, descriptor] of saved) {
      if (descriptor) Object.defineProperty(proto, key, descriptor);
      else delete (proto as unknown as Record<string, unknown>)[key];
    }
  };
}
