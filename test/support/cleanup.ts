import { after } from 'node:test';

// Things to close when the test file ends (apps, servers, the database), last opened first.
// One root-level `after`, registered when this module is imported, so it belongs to the file
// and not to whichever suite happened to be running when the resource was opened.

const closers: Array<() => Promise<void> | void> = [];

after(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

export function closeAtEnd(fn: () => Promise<void> | void) {
  closers.push(fn);
}
