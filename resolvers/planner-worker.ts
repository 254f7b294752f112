// The planner thread (see off-thread.ts): runs the coupled planners' resolver methods off the
// server's event loop, one job at a time, every solve inside a job limited by the job's deadline.
import 'reflect-metadata';
import { parentPort, workerData } from 'node:worker_threads';
import { withSolveDeadline } from '../optimizer/milp/solver.js';
import { learnedPredictor } from '../predictor/learned/model.js';
import { loadZoo } from '../predictor/zoo/index.js';
import { loadGpus, setPriceOverrides } from '../seeds/catalog.js';
import { setRuntimeConfig } from '../service/config.js';
import { CoupledResolver } from './coupled.js';
import {
  errorReply,
  markPlannerThread,
  type PlannerJob,
  type PlannerReply,
  type PlannerThreadState,
} from './off-thread.js';

const port = parentPort;
if (!port) throw new Error('planner-worker.ts runs as a worker thread (see off-thread.ts)');
markPlannerThread();
const state = workerData as Partial<PlannerThreadState>;
if (state.config) setRuntimeConfig(state.config);
setPriceOverrides(state.prices?.prices, state.prices?.source);

const resolver = new CoupledResolver();
const METHODS: Record<string, (input: never) => Promise<unknown>> = {
  planFleet: (input) => resolver.planFleet(input),
  planProcurement: (input) => resolver.planProcurement(input),
  planFederatedRound: (input) => resolver.planFederatedRound(input),
};

port.on('message', async (job: PlannerJob) => {
  try {
    const method = METHODS[job.field];
    if (!method) throw new Error(`no planner named ${job.field}`);
    const value = await withSolveDeadline(performance.now() + job.solveMs, () => method(job.input as never));
    port.postMessage({ type: 'result', id: job.id, value } satisfies PlannerReply);
  } catch (e) {
    port.postMessage(errorReply(job.id, e));
  }
});

// Load what every plan needs before saying ready, so the first job's time goes to planning.
loadGpus();
loadZoo();
await learnedPredictor();
port.postMessage({ type: 'ready' } satisfies PlannerReply);
