// A solver worker that starts but never answers: the watchdog test in milp.test.ts.
import { parentPort } from 'node:worker_threads';
parentPort!.on('message', () => {
  /* never replies */
});
parentPort!.postMessage({ type: 'ready' });
