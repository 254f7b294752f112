// The coupled planners (planFleet, planProcurement, planFederatedRound) run off the event loop.
//
// HiGHS already ran in worker threads, but generating the candidates, building the models and
// verifying the answers ran on the event loop: a procurement inside the documented bounds with
// timeLimitSeconds 5 took 23-77 s while /health waited 17-60 s. Now the whole resolver method
// runs in a planner thread (planner-worker.ts), with one deadline for every solve inside it
// (optimizer/milp/solver.ts withSolveDeadline) and a watchdog that ends the thread at the time
// limit plus PLANNER_MARGIN_MS. The event loop only validates, sends and receives.
import { startWorker, WorkerPool, type PooledWorker } from '../optimizer/threads.js';
import { GraphQLError } from 'graphql';
import type { MiddlewareFn } from 'type-graphql';
import { InputError } from '../predictor/input-error.js';
import { withSolveDeadline } from '../optimizer/milp/solver.js';
import { currentPriceOverrides } from '../seeds/catalog.js';
import { runtimeConfig, type ServerConfig } from '../service/config.js';

/** What a planner thread must share with the process: its configuration and server-wide prices. */
export interface PlannerThreadState {
  config: ServerConfig;
  prices: ReturnType<typeof currentPriceOverrides>;
}
const threadState = (): PlannerThreadState => ({ config: runtimeConfig(), prices: currentPriceOverrides() });

/** What an answer may take beyond the request's timeLimitSeconds: the work after the last solve (verification, the answer) and a busy machine. */
export const PLANNER_MARGIN_MS = 5000;
const WORKER_START_TIMEOUT_MS = 30_000;

export interface PlannerJob {
  id: number;
  field: string;
  input: unknown;
  /** Milliseconds left until the solves must end, measured when the job was sent. */
  solveMs: number;
}

export type PlannerReply =
  | { type: 'ready' }
  | { type: 'result'; id: number; value: unknown }
  | {
      type: 'error';
      id: number;
      kind: 'input' | 'graphql' | 'internal';
      message: string;
      field?: string;
      extensions?: Record<string, unknown>;
      stack?: string;
    };

/** An error as it crosses the thread boundary, and back. */
export function errorReply(id: number, e: unknown): PlannerReply {
  if (e instanceof InputError)
    return { type: 'error', id, kind: 'input', message: e.message, field: e.field };
  if (e instanceof GraphQLError || (e as { name?: string })?.name === 'GraphQLError')
    return {
      type: 'error',
      id,
      kind: 'graphql',
      message: (e as GraphQLError).message,
      extensions: { ...(e as GraphQLError).extensions },
    };
  const err = e instanceof Error ? e : new Error(String(e));
  return { type: 'error', id, kind: 'internal', message: err.message, stack: err.stack };
}

function fromReply(r: Extract<PlannerReply, { type: 'error' }>): Error {
  if (r.kind === 'input') return new InputError(r.field ?? 'input', r.message);
  if (r.kind === 'graphql') return new GraphQLError(r.message, { extensions: r.extensions });
  const e = new Error(`planner thread: ${r.message}`);
  if (r.stack) e.stack = r.stack;
  return e;
}

// ------------------------------------------------------------------ pool

let nextId = 1;
let unavailable: string | undefined;

const maxWorkers = () => {
  const n = Number(process.env.TRAINPLAN_PLANNER_WORKERS ?? 2);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, 8) : 2;
};
const disabled = () => /^(0|off|false|no)$/i.test(process.env.TRAINPLAN_PLANNER_WORKER ?? '');
const isTs = import.meta.url.endsWith('.ts');

const pool = new WorkerPool(() => {
  const entry = new URL(isTs ? './planner-worker.ts' : './planner-worker.js', import.meta.url);
  return startWorker(entry, {
    name: 'the planner thread',
    startTimeoutMs: WORKER_START_TIMEOUT_MS,
    workerData: { ...threadState() },
  });
}, maxWorkers);

/**
 * Ends every planner thread once no onnxruntime run is in flight in it (tests, and the server's
 * close: a process that exits with a thread mid-run aborts instead of exiting with its code).
 */
export function shutdownPlannerWorkers(): Promise<void> {
  return pool.shutdown();
}

const overrun = (field: string, limitS: number) =>
  new InputError(
    'timeLimitSeconds',
    `${field} did not finish within timeLimitSeconds (${limitS} s) plus ${PLANNER_MARGIN_MS / 1e3} s: generating the candidates and building the model took that long; give a larger timeLimitSeconds (at most 60) or narrow the request (fewer jobs, clients, GPU types, precisions, batch sizes or nodes)`,
  );

/**
 * Runs resolver method `field` of the planner thread on `input`, which must be the validated
 * GraphQL input (plain data). Resolves with the method's answer; rejects with its error, or with a
 * BAD_USER_INPUT naming timeLimitSeconds when the thread overran the limit plus the margin.
 */
export async function planOffThread(
  field: string,
  input: unknown,
  timeLimitSeconds: number,
  direct: () => Promise<unknown>,
): Promise<unknown> {
  const startedAt = performance.now();
  const solveUntil = startedAt + timeLimitSeconds * 1e3;
  const hardUntil = solveUntil + PLANNER_MARGIN_MS;
  let slot: PooledWorker | 'timeout';
  try {
    if (disabled() || unavailable) throw new Error(unavailable ?? 'planner threads disabled');
    slot = await pool.acquire(hardUntil);
  } catch (e) {
    // No thread (disabled, or it cannot start): plan here, still within one deadline for the solves.
    unavailable ??= disabled() ? undefined : (e as Error).message;
    return withSolveDeadline(solveUntil, direct);
  }
  if (slot === 'timeout') throw overrun(field, timeLimitSeconds);
  const s = slot;
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const w = s.worker;
    const done = (keep: boolean) => {
      clearTimeout(timer);
      w.off('message', onMessage);
      w.off('error', onError);
      w.off('exit', onExit);
      pool.release(s, keep);
    };
    const onMessage = (m: PlannerReply) => {
      if (m.type === 'result' && m.id === id) {
        done(true);
        resolve(m.value);
      } else if (m.type === 'error' && m.id === id) {
        done(true);
        reject(fromReply(m));
      }
    };
    const onError = (e: Error) => {
      done(false);
      reject(new Error(`the planner thread crashed: ${e.message.split('\n')[0]}`));
    };
    const onExit = (code: number) => {
      done(false);
      reject(new Error(`the planner thread exited with code ${code}`));
    };
    const timer = setTimeout(() => {
      done(false);
      reject(overrun(field, timeLimitSeconds));
    }, hardUntil - performance.now());
    w.on('message', onMessage);
    w.on('error', onError);
    w.on('exit', onExit);
    w.postMessage({ id, field, input, solveMs: solveUntil - performance.now() } satisfies PlannerJob);
  });
}

/** True in the planner thread itself, where the resolver methods run as they are. */
let inPlannerThread = false;
export function markPlannerThread(): void {
  inPlannerThread = true;
}

/**
 * Resolver middleware for the coupled planners: the method runs in a planner thread (see above)
 * with the request's `input.timeLimitSeconds` as its deadline. Validation errors come back as they
 * were thrown. List it last, after BadUserInput and FiniteAnswer.
 */
export const OffEventLoop: MiddlewareFn = async ({ info, args }, next) => {
  if (inPlannerThread) return next();
  const input = args.input as { timeLimitSeconds?: unknown } | undefined;
  const limit =
    typeof input?.timeLimitSeconds === 'number' &&
    Number.isFinite(input.timeLimitSeconds) &&
    input.timeLimitSeconds > 0
      ? Math.min(input.timeLimitSeconds, 600)
      : 60;
  return planOffThread(info.fieldName, input, limit, () => next());
};
