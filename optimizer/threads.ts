// Starting a worker thread and waiting for its first message, shared by the HiGHS solver pool
// (optimizer/milp/solver.ts) and the coupled planners' pool (resolvers/off-thread.ts): both need
// the same handshake, the same TypeScript boot and the same failure reasons.
import { Worker } from 'node:worker_threads';
import { closeRunGate, newRunGate, type RunGate } from '../predictor/learned/run-gate.js';

/** Each started thread's run gate (predictor/learned/run-gate.ts), which stopWorker closes first. */
const gates = new WeakMap<Worker, RunGate>();

/**
 * Ends a thread started by startWorker once no onnxruntime run is in flight in it (terminating one
 * mid-run aborts the process; see run-gate.ts). Resolves when it has exited.
 */
export async function stopWorker(worker: Worker): Promise<void> {
  const gate = gates.get(worker);
  // A thread that exited (crashed) with a run counted would hold the gate forever: its exit ends the wait.
  if (gate && worker.threadId >= 0)
    await Promise.race([closeRunGate(gate), new Promise((exited) => worker.once('exit', exited))]);
  await worker.terminate();
}

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
  const { name, startTimeoutMs } = options;
  const runGate = newRunGate();
  const workerData = { ...options.workerData, runGate };
  const worker = entry.pathname.endsWith('.ts')
    ? new Worker(new URL('./milp/worker-boot.mjs', import.meta.url), {
        workerData: { ...workerData, entry: entry.href },
      })
    : new Worker(entry, { workerData });
  gates.set(worker, runGate);
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
      void stopWorker(worker);
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

/** A pooled worker: `busy` while one job holds it. */
export interface PooledWorker {
  worker: Worker;
  busy: boolean;
}

/**
 * A pool of at most `size()` worker threads started by `start`, one job per thread at a time. An
 * idle thread is unref'd so it never keeps the process alive. Shared by the solver pool and the
 * planner pool, which differ only in what they start and how long a caller may wait.
 */
export class WorkerPool {
  private readonly slots: PooledWorker[] = [];
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly start: () => Promise<Worker>,
    private readonly size: () => number,
  ) {}

  /**
   * An idle thread, a new one while the pool is below its size, or the first one released; 'timeout'
   * when none is free by `until` (a performance.now() time; without one it waits as long as it takes).
   * Rejects when a new thread cannot start.
   */
  acquire(): Promise<PooledWorker>;
  acquire(until: number): Promise<PooledWorker | 'timeout'>;
  async acquire(until = Infinity): Promise<PooledWorker | 'timeout'> {
    for (;;) {
      const idle = this.slots.find((s) => !s.busy);
      if (idle) {
        idle.busy = true;
        idle.worker.ref();
        return idle;
      }
      if (this.slots.length < this.size()) {
        // Held in the pool while it starts, so concurrent callers do not start more than size().
        const slot = { busy: true } as PooledWorker;
        this.slots.push(slot);
        try {
          slot.worker = await this.start();
          return slot;
        } catch (e) {
          this.slots.splice(this.slots.indexOf(slot), 1);
          this.waiting.shift()?.();
          throw e;
        }
      }
      if (!(await this.waitForRelease(until))) return 'timeout';
    }
  }

  /** Back to the pool (`keep`), or ended and removed (it crashed or overran); wakes one waiter. */
  release(slot: PooledWorker, keep: boolean): void {
    if (keep) {
      slot.busy = false;
      slot.worker.unref();
    } else {
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
      void stopWorker(slot.worker);
    }
    this.waiting.shift()?.();
  }

  /** Ends every thread (tests, shutdown); resolves once they have exited. */
  async shutdown(): Promise<void> {
    await Promise.all(this.slots.splice(0).flatMap((s) => (s.worker ? [stopWorker(s.worker)] : [])));
  }

  private waitForRelease(until: number): Promise<boolean> {
    // No timer without a deadline: setTimeout clamps a delay above 2^31 - 1 ms to 1 ms.
    if (until === Infinity) return new Promise((resolve) => this.waiting.push(() => resolve(true)));
    const left = until - performance.now();
    if (left <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(wake), 1);
        resolve(false);
      }, left);
      this.waiting.push(wake);
    });
  }
}
