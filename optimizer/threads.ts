// Starting a worker thread and waiting for its first message, shared by the HiGHS solver pool
// (optimizer/milp/solver.ts) and the coupled planners' pool (resolvers/off-thread.ts): both need
// the same handshake, the same TypeScript boot and the same failure reasons.
import { Worker } from 'node:worker_threads';

/**
 * Starts `entry` in a worker thread and resolves once it posts `{ type: 'ready' }`. A `.ts` entry
 * starts through worker-boot.mjs (a worker does not inherit the tsx loader on Node 20), which reads
 * the entry from `workerData.entry`. Rejects, with the thread terminated, when the thread fails,
 * exits, sends anything else first or stays silent for `startTimeoutMs`; `name` ("the solver
 * worker") starts each reason.
 */
export function startWorker(
  entry: URL,
  options: { name: string; startTimeoutMs: number; workerData?: Record<string, unknown> },
): Promise<Worker> {
  const { name, startTimeoutMs, workerData = {} } = options;
  const worker = entry.pathname.endsWith('.ts')
    ? new Worker(new URL('./milp/worker-boot.mjs', import.meta.url), {
        workerData: { ...workerData, entry: entry.href },
      })
    : new Worker(entry, { workerData });
  return new Promise((resolve, reject) => {
    // Only our own listeners are removed: removeAllListeners() would also drop the ones Node uses to
    // keep the worker's message port flowing.
    const off = () => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    const fail = (why: string) => {
      off();
      void worker.terminate();
      reject(new Error(why));
    };
    const onMessage = (m: { type?: unknown }) => {
      if (m?.type !== 'ready') return fail(`${name} sent no ready message`);
      off();
      resolve(worker);
    };
    const onError = (e: Error) => fail(`${name} failed to start: ${e.message.split('\n')[0]}`);
    const onExit = (code: number) => fail(`${name} exited with code ${code} while starting`);
    const timer = setTimeout(
      () => fail(`${name} did not start within ${startTimeoutMs / 1e3} s`),
      startTimeoutMs,
    );
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}
