/**
 * Records how many `expect` calls each test made (vitest's own per-test counter) in the test's
 * meta, so the durations reporter can print the suite's assertion total next to its test count.
 */
import { afterEach, expect } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    assertions?: number;
  }
}

afterEach((context) => {
  context.task.meta.assertions = expect.getState().assertionCalls;
});
