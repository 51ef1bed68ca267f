// Runs a TypeScript module in a worker thread: Node 20 does not apply `--import tsx` to worker
// entry files, so this plain module registers tsx's loader there, then imports the real entry
// (workerData.entry, a file URL). Started through startModuleWorker (module-worker.ts).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
