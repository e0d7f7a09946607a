/**
 * One thing per store, made the first time it is asked for: what every request on one database
 * must share in this process (a ledger, a journal, a queue of turns), while a second store (a
 * test's second instance) gets its own. Forgotten with the store.
 */
export function oncePerStore<T>(): (store: object, make: () => T) => T {
  const made = new WeakMap<object, T>();
  return (store, make) => {
    let found = made.get(store);
    if (found === undefined) {
      found = make();
      made.set(store, found);
    }
    return found;
  };
}
