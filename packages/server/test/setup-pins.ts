import { afterAll, expect } from 'vitest';
import { openPinCount } from '../src/files/access/anchor.js';

// Every pinned folder or file a test file's apps opened is closed by the time the file ends: a pin
// left open is a descriptor the server leaks (and that Node would close on garbage collection).
afterAll(() => {
  expect(openPinCount(), 'pinned handles still open after the test file').toBe(0);
});
