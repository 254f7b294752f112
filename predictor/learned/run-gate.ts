// Stopping a worker thread that runs onnxruntime sessions without taking the process with it.
//
// Worker.terminate() while an onnxruntime-node run (or session creation) is in flight aborts the
// whole process: the run's completion throws a Napi::Error into the dying thread's environment,
// and C++ std::terminate follows (SIGABRT; test/run-gate.test.ts shows it). The planner threads
// correct candidates with the learned model and are ended when a request overruns its time limit,
// so a server could die on a slow request. A run gate is one shared cell pair per thread: the
// thread counts its runs in flight through it, and the side that wants the thread gone closes the
// gate and waits until none is in flight before terminating it. A run that would start after the
// gate closed throws GateClosed instead, so nothing native is in flight when terminate() comes.
import { isMainThread, workerData } from 'node:worker_threads';

/** [0]: 1 once closed; [1]: runs in flight. Shared between the thread and the one that stops it. */
export type RunGate = Int32Array;
const CLOSED = 0,
  IN_FLIGHT = 1;

export function newRunGate(): RunGate {
  return new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
}

/** The error a native run refused, or ended, after its thread's gate closed. */
export class GateClosed extends Error {
  constructor() {
    super('this thread is being stopped (its run gate closed)');
    this.name = 'GateClosed';
  }
}

/** The gate this thread was started with (optimizer/threads.ts startWorker passes one to every thread). */
const threadGate: RunGate | undefined =
  !isMainThread && (workerData as { runGate?: unknown } | null)?.runGate instanceof Int32Array
    ? (workerData as { runGate: RunGate }).runGate
    : undefined;

/**
 * Runs `native` (an onnxruntime call) counted in this thread's gate, if it has one. Throws
 * GateClosed, without calling it, once the gate is closed, and after it when the gate closed while
 * it ran (the thread is about to end; nothing should go on using its result).
 */
export async function throughGate<T>(native: () => Promise<T>, gate = threadGate): Promise<T> {
  if (!gate) return native();
  // Count first, then look: with sequentially consistent atomics either this thread sees the gate
  // closed, or the closing side sees the count and waits (closeRunGate).
  Atomics.add(gate, IN_FLIGHT, 1);
  const leave = () => {
    if (Atomics.sub(gate, IN_FLIGHT, 1) === 1) Atomics.notify(gate, IN_FLIGHT);
  };
  if (Atomics.load(gate, CLOSED)) {
    leave();
    throw new GateClosed();
  }
  try {
    return await native();
  } finally {
    leave();
    // eslint-disable-next-line no-unsafe-finally -- the thread is being stopped: its result must not be used
    if (Atomics.load(gate, CLOSED)) throw new GateClosed();
  }
}

/** Closes `gate` and resolves once no run is in flight through it; none can start after. */
export async function closeRunGate(gate: RunGate): Promise<void> {
  Atomics.store(gate, CLOSED, 1);
  for (;;) {
    const n = Atomics.load(gate, IN_FLIGHT);
    if (n === 0) return;
    // One 512-row run takes a few milliseconds; the thread notifies when its count reaches zero.
    const w = Atomics.waitAsync(gate, IN_FLIGHT, n);
    if (w.async) await w.value;
  }
}
