// The solver thread: HiGHS (and javascript-lp-solver, whose timeout is not a hard limit) run here so
// a solve never blocks the GraphQL server's event loop, and a runaway solve can be terminated from
// outside. One job at a time; solver.ts owns the queue, the time limits and the watchdog.
import { parentPort } from 'node:worker_threads';
import { highs, solveWithHighs, type BackendResult } from './highs.js';
import type { MipModel, MipStart } from './model.js';
import { solveWithJsLp } from './lpsolver.js';

export interface WorkerJob {
  id: number;
  backend: BackendResult['backend'];
  model: MipModel;
  timeLimitSeconds: number;
  mipRelGap: number;
  start?: MipStart;
}

export type WorkerReply =
  | { type: 'ready' }
  | { type: 'result'; id: number; result: BackendResult }
  | { type: 'error'; id: number; message: string };

const port = parentPort;
if (!port) throw new Error('highs-worker.ts runs as a worker thread (see solver.ts)');

const loading = highs(); // load the wasm while the first job is being built
loading.catch(() => undefined);

port.on('message', async (job: WorkerJob) => {
  try {
    const result =
      job.backend === 'highs'
        ? solveWithHighs(await loading, job.model, {
            timeLimitSeconds: job.timeLimitSeconds,
            mipRelGap: job.mipRelGap,
            start: job.start,
          })
        : solveWithJsLp(job.model, job.timeLimitSeconds);
    port.postMessage({ type: 'result', id: job.id, result } satisfies WorkerReply);
  } catch (e) {
    port.postMessage({
      type: 'error',
      id: job.id,
      message: e instanceof Error ? e.message : String(e),
    } satisfies WorkerReply);
  }
});

port.postMessage({ type: 'ready' } satisfies WorkerReply);
