// Starts highs-worker.ts in a worker thread when trainplan runs from TypeScript sources (tsx,
// vitest, bin/trainplan.js). On Node 20 a worker does not inherit the tsx loader, and
// `execArgv: ['--import', 'tsx']` does not apply it to the worker's own entry file
// (ERR_UNKNOWN_FILE_EXTENSION ".ts"), so this plain-JS entry registers tsx in the worker first.
import { workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
const { register } = await import('tsx/esm/api');
// The project's tsconfig wherever the process was started from (tsx otherwise looks in the cwd).
register({ tsconfig: fileURLToPath(new URL('../../tsconfig.json', import.meta.url)) });
await import(workerData.entry);
