// Loaded into every test file's process by `npm test` (NODE_OPTIONS --import): at exit it appends
// the file's wall time since its process started, and its own CPU time (not its children's, such
// as Chromium), to the file TEST_FILE_TIMES names as "wall ms<TAB>cpu ms<TAB>file" lines, so the
// run can print its slowest files. A process that is not a test file writes nothing.
import fs from 'node:fs';

const file = process.argv.find((arg) => arg.endsWith('.test.ts'));
const out = process.env.TEST_FILE_TIMES;
if (file && out) {
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    fs.appendFileSync(out, `${Math.round(performance.now())}\t${Math.round((user + system) / 1000)}\t${file}\n`);
  });
}
