import { configure } from '@testing-library/react';

// findBy* and waitFor give up after one second by default: on a busy CI machine a render that
// takes milliseconds here can take longer than that. They return as soon as the element appears,
// so a longer limit costs nothing when the test passes.
configure({ asyncUtilTimeout: 30_000 });
