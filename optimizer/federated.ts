// One federated-learning round: each client trains the same model locally for some steps, then
// uploads its update; the server waits for the slowest client. Per client choose a batch size, a
// precision and a number of local steps so that the round's wall time is minimal, with at least
// minSamplesPerRound samples trained in the round and each client within its memory and its data.
//
// A client's round time: download the model + localSteps x step time + upload the update. Step
// times and memory come from the predictor (one GPU, no all-reduce); the transfers are
// parameters x bytesPerParameter over the client's links.
//
// The MIP (o: a (batch size, precision) option of client i; S[i,o] the most steps its data allows):
//
//   y[i,o]  binary: client i trains with option o
//   s[i,o]  integer steps, 0..S[i,o]
//   T       continuous: the round time
//
//   one[i]:      sum_o y[i,o] <= 1   (= 1 when clients may not be left out)
//   steps[i,o]:  y[i,o] <= s[i,o] <= S[i,o] y[i,o]
//   slowest[i]:  T - sum_o (step[i,o] s[i,o] + transfer[i] y[i,o]) >= 0
//   samples:     sum_{i,o} batch[o] unitsPerBatchElement s[i,o] >= minSamplesPerRound
//   min T
//
// Per client, options are pruned before the MIP: of two options with the same batch size only the
// faster precision is kept, and an option whose batch is k times another's while taking at least k
// times as long per step is dropped (k steps of the smaller batch train the same samples no slower,
// and the client's data allows them).
// Federated-learning rounds under uncertainty: each client trains the same model locally for some
// steps, then uploads its update; the server waits for the slowest client. A client completes a
// round only with probability `availability` (independent dropouts). Over a cycle of `rounds`
// rounds, per round and client choose a batch size, a precision and a number of local steps (or
// sitting the round out) so that the cycle's total wall time is minimal, each round reaches
// minSamplesPerRound with probability at least minSuccessProbability, every client that can train
// takes part in at least minRoundsPerClient rounds, and each client stays within its memory and data.
//
// A client's round time: download the model + localSteps x step time + upload the update. Step
// times and memory come from the predictor (one device, no all-reduce; activation recomputation
// where the plain step does not fit; on a catalog GPU the learned correction with the user's
// recorded runs, as predict answers, see correctOptions); the transfers are parameters x
// bytesPerParameter over the client's links.
//
// The MIP (o: a (batch size, precision) option of client i; r: a round; S[i,o] the most steps its
// data allows; a[i,r] = sum_o batch[o] units s[i,o,r], the samples client i trains in round r):
//
//   y[i,o,r]  binary: client i trains with option o in round r
//   s[i,o,r]  integer steps, 0..S[i,o]
//   T[r]      continuous: round r's time
//
//   one[i,r]:      sum_o y[i,o,r] <= 1   (= 1 when clients may not be left out)
//   steps[i,o,r]:  y[i,o,r] <= s[i,o,r] <= S[i,o] y[i,o,r]
//   slowest[i,r]:  T[r] - sum_o (step[i,o] s[i,o,r] + transfer[i] y[i,o,r]) >= 0
//   floor[i]:      sum_{o,r} y[i,o,r] >= minRoundsPerClient          (clients that can train at all)
//   order[r]:      T[r] - T[r+1] >= 0                                (rounds are interchangeable)
//   samples[r]:    sum_i a[i,r] - (the d largest a[i,r] among clients that may drop out) >= minSamplesPerRound
//                  as  sum_i a[i,r] - d lambda[r] - sum_i mu[i,r] >= min,  mu[i,r] >= a[i,r] - lambda[r],  mu, lambda >= 0
//   min sum_r T[r]
//
// The chance constraint. With independent dropouts, D (how many of the unreliable clients drop out)
// has a Poisson-binomial distribution; with d the least count such that P(D <= d) >= the required
// probability, a round that reaches the samples even when its d largest unreliable contributors
// drop reaches them with at least that probability (fewer clients take part than could drop, so
// P(D_participants <= d) >= P(D <= d)). This is conservative: after the solve the exact success
// probability of the plan is computed (successProbability below), and the model is solved again
// with d - 1, d - 2, ... while the exact probability still holds; the best plan that holds is kept.
//
// Per client, options are pruned before the MIP: of two options with the same batch size only the
// faster precision is kept, and an option whose batch is k times another's while taking at least k
// times as long per step is dropped (k steps of the smaller batch train the same samples no slower,
// and the client's data allows them).
import { predict, type Prediction, type PredictRequest } from '../predictor/predict.js';
import { unsupportedReason } from '../predictor/precision.js';
import { costOf } from '../predictor/predict.js';
import type { Parallelism } from '../predictor/parallel.js';
import type { SoftwareStack } from '../predictor/software.js';
import type { AttentionImplementation } from '../seeds/types.js';
import type { LearnedState } from '../predictor/learned/model.js';
import type { GpuSpec, MathMode, ModelDef, Precision } from '../predictor/types.js';
import { correctionInputOf, predictCorrected } from '../predictor/corrected.js';
import type { UserEvidence } from '../predictor/learned/calibration.js';
import { DEFAULT_SOFTWARE } from '../predictor/learned/features.js';
import { withMeasuredActivations } from '../predictor/memory-calibration.js';
import type { Efficiency } from '../predictor/step.js';
import { pcieBandwidth } from '../seeds/catalog.js';
import { MipBuilder, modelSize, objectiveOf, type ModelSize } from './milp/model.js';
import {
  solveMip,
  unsolvedOutcome,
  type MipStatus,
  type SolveOptions,
  type MipOutcome,
} from './milp/solver.js';
import { VerificationError, verifyMipSolution } from './milp/verify.js';

export interface FederatedClient {
  id: string;
  gpu: GpuSpec;
  /** Data the client holds, in the model's throughput unit; a round trains at most this much on it. */
  samplesAvailable: number;
  uplinkMbps: number;
  downlinkMbps: number;
  /** Probability that the client completes a round it takes part in (default 1). */
  availability?: number;
}

export interface FederatedRequest {
  model: ModelDef;
  clients: FederatedClient[];
  minSamplesPerRound: number;
  /** Each round must reach minSamplesPerRound with at least this probability (default: assume every participant completes). */
  minSuccessProbability?: number;
  /** Rounds planned together, as a cycle that repeats (default 1). */
  rounds?: number;
  /** Every client that can train takes part in at least this many of the rounds (default 0). */
  minRoundsPerClient?: number;
  /** Clients may sit a round out. */
  allowDropout: boolean;
  precisions: Precision[];
  batchSizes: number[];
  maxLocalSteps: number;
  /** Bytes per parameter sent each way (4: fp32 weights/updates). */
  bytesPerParameter: number;
  /** Total training work, to report how many rounds it takes. */
  totalSamples?: number;
  fp32UsesTf32?: boolean;
  /** Convolution activations stored channels-last (predictor/step.ts Execution.channelsLast); absent = the stack's layout (eager PyTorch: NCHW). */
  channelsLast?: boolean;
  /** The software stack every client trains under (absent: eager PyTorch), as a fleet job's. */
  stack?: SoftwareStack;
  /** How the model's attention cores run on every client (absent: predict's default), as a fleet job's. */
  attention?: AttentionImplementation;
  /**
   * The learned correction: it times every option of a catalog-GPU client and gives each option's
   * P90 (absent, or without a predictor: the analytical estimate alone, its own P90).
   */
  learned?: LearnedState;
  /** A user's recorded runs: evidence and calibration for the correction, and their peaks size the model's memory. */
  user?: UserEvidence;
  solve: SolveOptions;
  /** The analytical predictor's fitted constants (seeds/efficiency.json). */
  efficiency: Efficiency;
}

export interface ClientOption {
  batchSizePerGpu: number;
  precision: Precision;
  /** Activation recomputation, when the plain step does not fit the device. */
  parallelism?: Parallelism;
  stepSeconds: number;
  /** The P90 step time over stepSeconds (1 without an interval). */
  p90Scale: number;
  /** What stands behind the step time, as a prediction says it; null for the analytical estimate alone. */
  evidence: string | null;
  /** The user's recorded runs that moved the step time. */
  calibrationRuns: number;
  memoryGb: number;
  /** Most local steps the client's data allows at this batch size (and maxLocalSteps). */
  maxSteps: number;
}

export interface ClientPlan {
  id: string;
  participates: boolean;
  precision: Precision | null;
  batchSizePerGpu: number | null;
  /** Activation recomputation the client runs ('none' when the plain step fits); null when it sits out. */
  recompute: string | null;
  localSteps: number;
  samples: number;
  computeSeconds: number;
  /** Compute at the predictor's P90 step time. */
  computeSecondsP90: number;
  transferSeconds: number;
  totalSeconds: number;
  memoryGb: number | null;
  availability: number;
  /** Compute energy at the device's TDP, Wh; null when the TDP is unknown. */
  energyWh: number | null;
  /** Why a client is left out (no option fits, or the optimum does not need it). */
  note: string | null;
  /** What stands behind its step time; null when it sits out or the analytical estimate alone timed it. */
  evidence: string | null;
  /** The user's recorded runs that moved its step time. */
  calibrationRuns: number;
}

/** One round of the cycle. */
export interface RoundPlan {
  round: number;
  roundTimeSeconds: number;
  /** The slowest participant at the predictor's P90 step times, with its transfers. */
  roundTimeSecondsP90: number;
  samplesPerRound: number;
  /** Samples expected after dropouts: sum of availability x samples. */
  expectedSamples: number;
  /** Probability that the round reaches minSamplesPerRound given the dropouts (a lower bound; exact on whole samples, see successProbability). */
  successProbability: number;
  /** Compute energy of the participants whose TDP is known, Wh. */
  energyWh: number;
  slowestClient: string | null;
  clients: ClientPlan[];
}

export type FederatedBlocker = 'MEMORY' | 'SAMPLES';

export interface FederatedPlan extends MipOutcome {
  /** Mean round time over the cycle (the single round's time when rounds = 1). */
  roundTimeSeconds: number | null;
  roundTimeSecondsP90: number | null;
  samplesPerRound: number | null;
  expectedSamplesPerRound: number | null;
  /** The least success probability over the cycle's rounds. */
  successProbability: number | null;
  /** Dropouts of the largest unreliable contributors each round is planned to survive. */
  dropoutsTolerated: number | null;
  /** The first round's clients (the only round when rounds = 1). */
  clients: ClientPlan[];
  /** Every round of the cycle. */
  schedule: RoundPlan[];
  /** Rounds of the cycle each client takes part in. */
  participation: { clientId: string; rounds: number }[];
  /** The client whose download + compute + upload sets the first round's time. */
  slowestClient: string | null;
  energyWhPerRound: number | null;
  /** With totalSamples: rounds needed (at the expected samples per round) and their wall time. */
  rounds: number | null;
  totalHours: number | null;
  infeasible: { clientId: string | null; reason: FederatedBlocker; message: string }[];
  stats: ModelSize & { options: number; keptOptions: number };
}

export interface CustomDevice {
  name: string;
  /** Dense peak TFLOPS per math mode; fp32 is required (the predictor runs non-matmul work at the fp32 rate). */
  peakTflops: Partial<Record<MathMode, number | null>>;
  memoryBwGbps: number;
  memoryGb: number;
  /** Board power, W: lets the plan report energy. */
  tdpW?: number | null;
}

/**
 * A GpuSpec from a client's own figures. Only what the predictor reads for one GPU is needed: peaks
 * per math mode (a mode left out is one the device lacks, so precisions needing it are not offered),
 * memory size and bandwidth. Everything else is unknown and says so: null numbers, 'custom' labels,
 * generation 'unknown', no intra-node link (a client trains on one device, so no all-reduce runs)
 * and no price. Its PCIe figure is links.json's generic one (it is never used: no ring runs).
 */
export function customGpuSpec(d: CustomDevice): GpuSpec {
  const peak = (m: MathMode) => d.peakTflops[m] ?? null;
  return {
    id: d.name,
    vendor: 'custom',
    architecture: 'custom',
    generation: 'unknown',
    releaseYear: null,
    formFactor: 'client device',
    memoryGb: d.memoryGb,
    // What the client states is what its plans must fit in: no label to correct.
    usableMemoryGb: d.memoryGb,
    usableMemorySource: 'as the client states it (device.memoryGb)',
    memoryType: 'unknown',
    memoryBwGbps: d.memoryBwGbps,
    l2CacheMb: null,
    smCount: null,
    boostClockMhz: null,
    peakTflops: {
      fp32: peak('fp32'),
      tf32: peak('tf32'),
      fp16: peak('fp16'),
      bf16: peak('bf16'),
      fp8: peak('fp8'),
      fp4: peak('fp4'),
    },
    fp64Tflops: null,
    int8Tops: null,
    intraNodeLink: 'none (single device)',
    intraNodeBwGbpsBidir: 0,
    intraNodeBwSource: 'not applicable: one device per client',
    pcieBwGbpsBidir: pcieBandwidth('none'),
    hasNvlinkFabric: false,
    maxGpusPerNode: 1,
    tdpW: d.tdpW ?? null,
    typicalInternodeNetwork: '',
    source: 'figures given in the request',
    notes: 'custom client device',
  };
}

export function transferSeconds(
  model: ModelDef,
  c: Pick<FederatedClient, 'uplinkMbps' | 'downlinkMbps'>,
  bytesPerParameter: number,
): number {
  const bits = costOf(model).parameters * bytesPerParameter * 8;
  return bits / (c.uplinkMbps * 1e6) + bits / (c.downlinkMbps * 1e6);
}

/** Recomputation tried, in order, when the plain step does not fit a client's device (one device: no TP, PP or ZeRO). */
const RECOMPUTE_STEPS = ['selective', 'full'] as const;

/** One client's step as `predict` takes it: one device, no all-reduce. */
const stepRequest = (
  r: FederatedRequest,
  gpu: GpuSpec,
  precision: Precision,
  batch: number,
  parallelism?: Parallelism,
): PredictRequest => ({
  model: r.model,
  gpu,
  precision,
  batchSizePerGpu: batch,
  gpusPerNode: 1,
  nodes: 1,
  fp32UsesTf32: r.fp32UsesTf32,
  ...(r.channelsLast !== undefined ? { channelsLast: r.channelsLast } : {}),
  ...(r.stack ? { stack: r.stack } : {}),
  ...(r.attention ? { attention: r.attention } : {}),
  interNodeGbps: 1,
  ...(parallelism ? { parallelism } : {}),
});

/** The analytical step, with the model's memory as the user's runs measured it (as predictCorrected sizes it). */
const predictOn = (
  r: FederatedRequest,
  gpu: GpuSpec,
  precision: Precision,
  batch: number,
  parallelism?: Parallelism,
) =>
  predict(
    withMeasuredActivations(stepRequest(r, gpu, precision, batch, parallelism), r.user?.memory).req,
    r.efficiency,
  );

/** Whether the learned correction times this client's steps: a catalog GPU's (a custom device is known only by its peaks, which no training row describes). */
const correctedOn = (r: FederatedRequest, gpu: GpuSpec) => !!r.learned?.predictor && gpu.vendor !== 'custom';

/** The plain step, else the least recomputation that fits; null when nothing fits (or the model has no blocks to recompute). */
function fittingStep(r: FederatedRequest, gpu: GpuSpec, precision: Precision, batch: number) {
  const plain = predictOn(r, gpu, precision, batch);
  if (plain.fitsInMemory) return { p: plain, parallelism: undefined };
  for (const recompute of RECOMPUTE_STEPS) {
    const parallelism: Parallelism = { tensorParallel: 1, pipelineParallel: 1, zeroStage: 0, recompute };
    try {
      const p = predictOn(r, gpu, precision, batch, parallelism);
      if (p.fitsInMemory) return { p, parallelism };
    } catch {
      return null; // the model has nothing this recomputation applies to
    }
  }
  return null;
}

/**
 * The (batch, precision) options each client can run, before and after pruning, each timed by the
 * learned correction where it applies (correctOptions): pruning compares the times the plan uses.
 */
export async function clientOptions(
  r: FederatedRequest,
): Promise<{ all: ClientOption[][]; kept: ClientOption[][] }> {
  const units = r.model.unitsPerBatchElement;
  const timed: { option: ClientOption; p: Prediction }[][] = [];
  for (const c of r.clients) {
    const opts: { option: ClientOption; p: Prediction }[] = [];
    for (const batch of r.batchSizes) {
      const maxSteps = Math.min(r.maxLocalSteps, Math.floor(c.samplesAvailable / (batch * units) + 1e-9));
      if (maxSteps < 1) continue;
      for (const precision of r.precisions) {
        if (unsupportedReason(c.gpu, precision) !== null) continue;
        const fit = fittingStep(r, c.gpu, precision, batch);
        if (!fit) continue;
        const stepSeconds = fit.p.stepTimeMs / 1e3;
        if (!Number.isFinite(stepSeconds) || stepSeconds <= 0) continue;
        opts.push({
          option: {
            batchSizePerGpu: batch,
            precision,
            ...(fit.parallelism ? { parallelism: fit.parallelism } : {}),
            stepSeconds,
            p90Scale: 1,
            evidence: null,
            calibrationRuns: 0,
            memoryGb: fit.p.memory.totalGb,
            maxSteps,
          },
          p: fit.p,
        });
      }
    }
    timed.push(opts);
  }
  await correctOptions(r, timed);
  const all = timed.map((opts) => opts.map((t) => t.option));
  const kept: ClientOption[][] = [];
  for (const opts of all) {
    const fastestPerBatch = new Map<number, ClientOption>();
    for (const o of opts) {
      const b = fastestPerBatch.get(o.batchSizePerGpu);
      if (!b || o.stepSeconds < b.stepSeconds) fastestPerBatch.set(o.batchSizePerGpu, o);
    }
    const per = [...fastestPerBatch.values()];
    kept.push(
      per.filter(
        (o) =>
          !per.some(
            (p) =>
              p !== o &&
              o.batchSizePerGpu % p.batchSizePerGpu === 0 &&
              o.batchSizePerGpu > p.batchSizePerGpu &&
              (o.batchSizePerGpu / p.batchSizePerGpu) * p.stepSeconds <= o.stepSeconds,
          ),
      ),
    );
  }
  return { all, kept };
}

/**
 * The learned correction, with the user's recorded runs, on every option in one batch. A catalog
 * GPU's option takes the corrected step, its P90 and its evidence, as predict gives them; a custom
 * device keeps the analytical step and takes the interval's P90 where it lies above it.
 */
async function correctOptions(r: FederatedRequest, timed: { option: ClientOption; p: Prediction }[][]) {
  const learned = r.learned?.predictor;
  if (!learned) return;
  const flat = timed.flatMap((opts, i) => opts.map((t) => ({ ...t, gpu: r.clients[i].gpu })));
  const k = await learned.correct(
    flat.map((t) => correctionInputOf({ model: r.model, gpu: t.gpu }, t.p, DEFAULT_SOFTWARE)),
    r.user,
  );
  flat.forEach((t, j) => {
    const [mid, hi] = [k.mid[j], k.hi[j]];
    if (correctedOn(r, t.gpu) && Number.isFinite(mid) && mid > 0) {
      t.option.stepSeconds *= mid;
      t.option.p90Scale = Number.isFinite(hi) ? Math.max(1, hi / mid) : 1;
      t.option.evidence = k.caseOf(j);
      t.option.calibrationRuns = k.runs[j];
    } else if (Number.isFinite(hi) && hi > 1) t.option.p90Scale = hi;
  });
}

const availabilityOf = (c: FederatedClient) => c.availability ?? 1;

/**
 * Probability that the samples of the clients that complete the round reach `need`, each client
 * completing independently with its availability. Dynamic programming over the running total,
 * capped at `need`, on a lattice of g = max(1, need / 20000) samples; each contribution is rounded
 * down to the lattice, so the result never overstates the probability, and it is exact when every
 * contribution is a whole multiple of g (whole samples while need <= 20000).
 */
export function successProbability(
  contributions: { samples: number; availability: number }[],
  need: number,
): number {
  if (need <= 0) return 1;
  const g = Math.max(1, need / 20000);
  const top = Math.ceil(need / g - 1e-9);
  let dist = new Float64Array(top + 1);
  dist[0] = 1;
  for (const c of contributions) {
    const k = Math.floor(c.samples / g + 1e-9);
    if (k <= 0 || c.availability <= 0) continue;
    const next = new Float64Array(top + 1);
    for (let v = 0; v <= top; v++) {
      if (dist[v] === 0) continue;
      next[v] += dist[v] * (1 - c.availability);
      next[Math.min(top, v + k)] += dist[v] * c.availability;
    }
    dist = next;
  }
  return Math.min(1, Math.max(0, dist[top]));
}

/**
 * The least d such that at most d of these clients drop out with probability >= p (Poisson-binomial
 * over their dropout probabilities); clients that never drop out do not count.
 */
export function dropoutsToTolerate(availabilities: number[], p: number): number {
  let dist = [1];
  for (const a of availabilities) {
    if (a >= 1) continue;
    const next = new Array<number>(dist.length + 1).fill(0);
    dist.forEach((q, k) => {
      next[k] += q * a;
      next[k + 1] += q * (1 - a);
    });
    dist = next;
  }
  let cum = 0;
  for (let d = 0; d < dist.length; d++) {
    cum += dist[d];
    if (cum >= p * (1 - 1e-12)) return d;
  }
  return dist.length - 1;
}

export interface Cycle {
  rounds: number;
  floor: number;
  /** Largest unreliable contributions each round must survive losing. */
  d: number;
  /** Clients whose contribution may drop out (availability < 1). */
  unreliable: boolean[];
}

export const cycleOf = (r: FederatedRequest, kept: ClientOption[][], d: number): Cycle => ({
  rounds: r.rounds ?? 1,
  floor: Math.min(r.minRoundsPerClient ?? 0, r.rounds ?? 1),
  d,
  unreliable: r.clients.map((c, i) => kept[i].length > 0 && availabilityOf(c) < 1),
});

export async function planFederatedRound(r: FederatedRequest): Promise<FederatedPlan> {
  const t0 = performance.now();
  const units = r.model.unitsPerBatchElement;
  const { all, kept } = await clientOptions(r);
  const transfer = r.clients.map((c) => transferSeconds(r.model, c, r.bytesPerParameter));
  const notes: string[] = [];
  const stats0 = {
    options: all.reduce((s, o) => s + o.length, 0),
    keptOptions: kept.reduce((s, o) => s + o.length, 0),
  };
  const noModel: ModelSize = { variables: 0, integers: 0, constraints: 0, nonzeros: 0 };
  const none = (
    status: MipStatus,
    solver: string,
    size: ModelSize,
    infeasible: FederatedPlan['infeasible'],
  ): FederatedPlan => ({
    ...unsolvedOutcome(status, solver, t0, notes),
    roundTimeSeconds: null,
    roundTimeSecondsP90: null,
    samplesPerRound: null,
    expectedSamplesPerRound: null,
    successProbability: null,
    dropoutsTolerated: null,
    clients: [],
    schedule: [],
    participation: [],
    slowestClient: null,
    energyWhPerRound: null,
    rounds: null,
    totalHours: null,
    infeasible,
    stats: { ...stats0, ...size },
  });

  // Clients with no option at all: what stops them.
  const unusable = new Map<number, { reason: FederatedBlocker; message: string }>();
  r.clients.forEach((c, i) => {
    if (kept[i].length) return;
    const smallest = Math.min(...r.batchSizes);
    if (c.samplesAvailable < smallest * units)
      unusable.set(i, {
        reason: 'SAMPLES',
        message: `holds ${c.samplesAvailable} samples, less than one batch of ${smallest} (${smallest * units} ${r.model.throughputUnit.split('/')[0]})`,
      });
    else
      unusable.set(i, {
        reason: 'MEMORY',
        message: `${c.gpu.id} (${+c.gpu.usableMemoryGb.toFixed(2)} GB usable) fits no allowed batch size in any precision it supports, not even with activation recomputation`,
      });
  });
  if (unusable.size && !r.allowDropout) {
    return none(
      'INFEASIBLE',
      'none (infeasible before solving: a client that may not be left out cannot train)',
      noModel,
      [...unusable].map(([i, d]) => ({ clientId: r.clients[i].id, ...d })),
    );
  }
  const most = kept.reduce(
    (s, opts) => s + Math.max(0, ...opts.map((o) => o.batchSizePerGpu * units * o.maxSteps)),
    0,
  );
  if (most < r.minSamplesPerRound) {
    return none('INFEASIBLE', 'none (infeasible before solving: not enough data)', noModel, [
      {
        clientId: null,
        reason: 'SAMPLES',
        message: `the clients can train at most ${most} samples in a round (their data, maxLocalSteps ${r.maxLocalSteps}), fewer than minSamplesPerRound ${r.minSamplesPerRound}`,
      },
    ]);
  }
  const alpha = r.minSuccessProbability;
  if (alpha !== undefined) {
    const best = successProbability(
      kept.map((opts, i) => ({
        samples: Math.max(0, ...opts.map((o) => o.batchSizePerGpu * units * o.maxSteps)),
        availability: availabilityOf(r.clients[i]),
      })),
      r.minSamplesPerRound,
    );
    if (best < alpha)
      return none('INFEASIBLE', 'none (infeasible before solving: the dropouts are too likely)', noModel, [
        {
          clientId: null,
          reason: 'SAMPLES',
          message: `even with every client training all it can, a round reaches ${r.minSamplesPerRound} samples with probability ${best.toPrecision(4)}, below minSuccessProbability ${alpha}`,
        },
      ]);
  }

  // The chance constraint (see the top of this file). d0, from the Poisson-binomial bound, always
  // holds; fewer tolerated losses often do too. The breakpoint search finds, without a MIP, the least
  // d whose cycle already reaches the probability exactly; HiGHS then solves at that d (and at larger
  // ones while its optimum falls short of the exact probability). Whatever HiGHS answers, a verified
  // cycle that holds is kept to fall back on: the breakpoint cycle, or every client training all it can.
  const d0 =
    alpha === undefined
      ? 0
      : dropoutsToTolerate(r.clients.filter((_, i) => kept[i].length > 0).map(availabilityOf), alpha);
  const holds = (rounds: CycleChoice[]) => alpha === undefined || cycleProbability(r, kept, rounds) >= alpha;
  let dStart = d0;
  for (let d = 0; alpha !== undefined && d < d0; d++) {
    const start = cycleStart(r, kept, transfer, cycleOf(r, kept, d));
    if (start && holds(start.rounds)) {
      dStart = d;
      break;
    }
  }
  type Attempt = {
    d: number;
    values: number[];
    res: Awaited<ReturnType<typeof solveMip>>;
    m: ReturnType<typeof roundModel>;
    fallback?: string;
  };
  let accepted: Attempt | null = null;
  let first: { res: Awaited<ReturnType<typeof solveMip>>; m: ReturnType<typeof roundModel> } | null = null;
  let fallback: Attempt | null = null;
  for (let d = dStart; d <= d0; d++) {
    const left = r.solve.timeLimitSeconds - (performance.now() - t0) / 1e3;
    if (first && left < 1) break;
    const m = roundModel(r, kept, transfer, cycleOf(r, kept, d));
    if (m.start && d === dStart)
      notes.push(`HiGHS started from the breakpoint search's cycle of ${m.start.totalTime.toPrecision(6)} s`);
    const res = await solveMip(m.model, { ...r.solve, timeLimitSeconds: Math.max(1, left), start: m.warm });
    first ??= { res, m };
    if (!fallback && m.start && holds(m.start.rounds))
      fallback = { d, values: m.warm!, res, m, fallback: 'the breakpoint search' };
    if (!res.values) break; // infeasible here is infeasible for every larger d too; or out of time
    const rounds = decodeRounds(r, kept, transfer, m, res.values);
    const worst = Math.min(
      ...rounds.map((clients) =>
        successProbability(
          clients.map((c, i) => ({ samples: c.samples, availability: availabilityOf(r.clients[i]) })),
          r.minSamplesPerRound,
        ),
      ),
    );
    if (alpha === undefined || worst >= alpha) {
      accepted = { d, values: res.values, res, m };
      break;
    }
  }
  // A MIP optimum at a larger d can be slower than the breakpoint cycle at a smaller one.
  if (
    accepted &&
    fallback &&
    fallback.d < accepted.d &&
    objectiveOf(fallback.m.model, fallback.values) < accepted.res.objective! * (1 - 1e-9)
  ) {
    notes.push(
      `the breakpoint search's cycle (surviving ${fallback.d} losses) is faster than HiGHS's optimum surviving ${accepted.d}: it is the plan (verified, not proven optimal)`,
    );
    accepted = {
      ...fallback,
      res: { ...fallback.res, status: 'FEASIBLE', optimalityProven: false, gap: null, bestBound: null },
    };
  }
  if (!accepted && alpha !== undefined && first) {
    if (!fallback) {
      // Every client training all it can holds (checked above): a cycle without tolerated losses.
      const m = roundModel(r, kept, transfer, cycleOf(r, kept, 0));
      const full = fullCycle(kept, transfer, cycleOf(r, kept, 0));
      if (holds(full))
        fallback = {
          d: 0,
          values: m.assign(full),
          res: first.res,
          m,
          fallback: 'every client training all it can',
        };
    }
    if (fallback && verifyMipSolution(fallback.m.model, fallback.values).length === 0) {
      notes.push(
        `HiGHS found no cycle that holds the probability within the time limit; the plan is ${fallback.fallback}'s cycle (verified, not proven optimal)`,
      );
      accepted = {
        ...fallback,
        res: { ...fallback.res, status: 'FEASIBLE', optimalityProven: false, gap: null, bestBound: null },
      };
    }
  }
  for (const n of first!.res.notes) notes.push(n);
  const size = modelSize(first!.m.model);
  if (!accepted) {
    if (first!.res.status === 'INFEASIBLE')
      return none('INFEASIBLE', first!.res.solver, size, [
        {
          clientId: null,
          reason: 'SAMPLES',
          message:
            alpha === undefined
              ? `no choice of steps reaches ${r.minSamplesPerRound} samples per round`
              : `no choice of steps reaches ${r.minSamplesPerRound} samples per round with probability ${alpha}`,
        },
      ]);
    return none(first!.res.status, first!.res.solver, size, []);
  }
  if (alpha !== undefined && accepted.d < d0)
    notes.push(
      `planned to survive the ${accepted.d} largest unreliable contributions dropping out (the Poisson-binomial bound asks for ${d0}); the exact success probability holds`,
    );
  const rounds = decodeRounds(r, kept, transfer, accepted.m, accepted.values, unusable);
  if (!r.learned?.predictor)
    notes.push(
      `roundTimeSecondsP90 equals the analytical round time: ${r.learned?.reason || 'no learned correction was given'}`,
    );
  const plan = finish(r, rounds, {
    status: accepted.res.status,
    solver: accepted.res.solver,
    optimalityProven: accepted.res.optimalityProven,
    gap: accepted.res.gap,
    bestBound: accepted.res.bestBound,
    notes,
    dropoutsTolerated: alpha === undefined ? null : accepted.d,
    stats: { ...stats0, ...modelSize(accepted.m.model) },
    t0,
  });
  const problems = await verifyFederatedPlan(r, plan);
  if (problems.length) throw new VerificationError(problems);
  return plan;
}

/** Per round, per client: the plan the MIP's values say (left-out clients with a note). */
function decodeRounds(
  r: FederatedRequest,
  kept: ClientOption[][],
  transfer: number[],
  m: ReturnType<typeof roundModel>,
  v: number[],
  unusable = new Map<number, { message: string }>(),
): ClientPlan[][] {
  const units = r.model.unitsPerBatchElement;
  return m.y.map((yr, round) =>
    r.clients.map((c, i): ClientPlan => {
      const idle = (note: string): ClientPlan => ({
        id: c.id,
        participates: false,
        precision: null,
        batchSizePerGpu: null,
        recompute: null,
        localSteps: 0,
        samples: 0,
        computeSeconds: 0,
        computeSecondsP90: 0,
        transferSeconds: 0,
        totalSeconds: 0,
        memoryGb: null,
        availability: availabilityOf(c),
        energyWh: null,
        note,
        evidence: null,
        calibrationRuns: 0,
      });
      if (unusable.has(i)) return idle(`left out: ${unusable.get(i)!.message}`);
      const k = yr[i].findIndex((yi) => v[yi] > 0.5);
      if (k < 0)
        return idle(
          `left out${round > 0 || m.y.length > 1 ? ` of round ${round + 1}` : ''}: the ${m.y.length > 1 ? 'cycle' : 'round'} is faster without it`,
        );
      const o = kept[i][k];
      const steps = Math.round(v[m.s[round][i][k]]);
      const compute = steps * o.stepSeconds;
      return {
        id: c.id,
        participates: true,
        precision: o.precision,
        batchSizePerGpu: o.batchSizePerGpu,
        recompute: o.parallelism?.recompute ?? 'none',
        localSteps: steps,
        samples: steps * o.batchSizePerGpu * units,
        computeSeconds: compute,
        computeSecondsP90: compute * o.p90Scale,
        transferSeconds: transfer[i],
        totalSeconds: compute + transfer[i],
        memoryGb: o.memoryGb,
        availability: availabilityOf(c),
        energyWh: c.gpu.tdpW === null ? null : (compute * c.gpu.tdpW) / 3600,
        note: null,
        evidence: o.evidence,
        calibrationRuns: o.calibrationRuns,
      };
    }),
  );
}

/**
 * The cycle's MIP (see the top of this file) and a warm start from the breakpoint search. Exported
 * for bench/solvers.ts, which hands the same model to both solvers.
 */
export function roundModel(
  r: FederatedRequest,
  kept: ClientOption[][],
  transfer: number[],
  cycle: Cycle = cycleOf(r, kept, 0),
) {
  const units = r.model.unitsPerBatchElement;
  const b = new MipBuilder('federated-round');
  const maxRound = Math.max(
    ...kept.map((opts, i) => Math.max(0, ...opts.map((o) => o.stepSeconds * o.maxSteps)) + transfer[i]),
  );
  const T: number[] = [];
  const y: number[][][] = [],
    s: number[][][] = [];
  const participation: [number, number][][] = kept.map(() => []);
  /** Per round: lambda and each unreliable client's mu (for the warm start). */
  const drops: { lambda: number | null; mu: Map<number, number> }[] = [];
  for (let round = 0; round < cycle.rounds; round++) {
    const tag = cycle.rounds > 1 ? `_r${round}` : '';
    const Tr = b.addVar(`T${tag}`, 'continuous', 0, maxRound, 1);
    T.push(Tr);
    const sampleTerms: [number, number][] = [];
    y.push([]);
    s.push([]);
    const lambda = cycle.d > 0 ? b.addVar(`lambda${tag}`, 'continuous', 0, Infinity) : null;
    drops.push({ lambda, mu: new Map() });
    kept.forEach((opts, i) => {
      y[round].push([]);
      s[round].push([]);
      if (!opts.length) return;
      const mine: [number, number][] = [];
      opts.forEach((o, k) => {
        const yi = b.addVar(`y_${i}_${k}${tag}`, 'binary', 0, 1);
        const si = b.addVar(`s_${i}_${k}${tag}`, 'integer', 0, o.maxSteps);
        y[round][i].push(yi);
        s[round][i].push(si);
        b.addRow(
          `steps_${i}_${k}${tag}`,
          [
            [si, 1],
            [yi, -o.maxSteps],
          ],
          -Infinity,
          0,
        );
        b.addRow(
          `some_${i}_${k}${tag}`,
          [
            [si, 1],
            [yi, -1],
          ],
          0,
          Infinity,
        );
        mine.push([si, o.batchSizePerGpu * units]);
        participation[i].push([yi, 1]);
      });
      sampleTerms.push(...mine);
      if (lambda !== null && cycle.unreliable[i]) {
        // mu[i] >= a[i] - lambda: with the row below, the samples less the d largest unreliable ones.
        const mu = b.addVar(`mu_${i}${tag}`, 'continuous', 0, Infinity);
        drops[round].mu.set(i, mu);
        b.addRow(
          `drop_${i}${tag}`,
          [[mu, 1], [lambda, 1], ...mine.map(([v, c]): [number, number] => [v, -c])],
          0,
          Infinity,
        );
        sampleTerms.push([mu, -1]);
      }
      b.addRow(
        `one_${i}${tag}`,
        y[round][i].map((v) => [v, 1] as [number, number]),
        r.allowDropout ? 0 : 1,
        1,
      );
      b.addRow(
        `slowest_${i}${tag}`,
        [
          [Tr, 1],
          ...opts.flatMap((o, k): [number, number][] => [
            [s[round][i][k], -o.stepSeconds],
            [y[round][i][k], -transfer[i]],
          ]),
        ],
        0,
        Infinity,
      );
    });
    if (lambda !== null) sampleTerms.push([lambda, -cycle.d]);
    b.addRow(`samples${tag}`, sampleTerms, r.minSamplesPerRound, Infinity);
    if (round > 0)
      b.addRow(
        `order_r${round}`,
        [
          [T[round - 1], 1],
          [Tr, -1],
        ],
        0,
        Infinity,
      );
  }
  if (cycle.floor > 0)
    participation.forEach((terms, i) => {
      if (terms.length) b.addRow(`floor_${i}`, terms, cycle.floor, Infinity);
    });
  const model = b.build();
  // The LP relaxation of a min-max round with integer steps is weak (a fractional y pays a fraction
  // of the transfer), so HiGHS alone needs 10 s for 50 clients and does not close the gap for 200.
  // Started from the breakpoint search's answer it proves optimality in about a second.
  const start = cycleStart(r, kept, transfer, cycle);
  /** A complete assignment of the model's columns from a choice per round and client. */
  const assign = (rounds: CycleChoice[]): number[] => {
    const v = new Array<number>(model.vars.length).fill(0);
    rounds.forEach((round, k) => {
      v[T[k]] = round.roundTime;
      round.choice.forEach((ch, i) => {
        if (ch) {
          v[y[k][i][ch.option]] = 1;
          v[s[k][i][ch.option]] = ch.steps;
        }
      });
      // lambda: the d-th largest unreliable contribution; mu: each one's excess over it.
      const { lambda, mu } = drops[k];
      if (lambda === null) return;
      const samplesOf = (i: number) => {
        const ch = round.choice[i];
        return ch ? ch.steps * kept[i][ch.option].batchSizePerGpu * units : 0;
      };
      const sorted = [...mu.keys()].map(samplesOf).sort((p, q) => q - p);
      const level = sorted.length >= cycle.d ? sorted[cycle.d - 1] : 0;
      v[lambda] = level;
      for (const [i, x] of mu) v[x] = Math.max(0, samplesOf(i) - level);
    });
    return v;
  };
  const warm = start ? assign(start.rounds) : undefined;
  return { model, T, y, s, start, warm, assign };
}

/** Samples after losing the d largest unreliable contributions. */
const robustSamples = (samples: number[], unreliable: boolean[], d: number): number => {
  const total = samples.reduce((a, b) => a + b, 0);
  const lost = samples
    .filter((_, i) => unreliable[i])
    .sort((a, b) => b - a)
    .slice(0, d)
    .reduce((a, b) => a + b, 0);
  return total - lost;
};

/**
 * The round time as a function of T: for a candidate round time T each client independently trains
 * as many samples as fit (download + steps + upload <= T) in its best option, so the samples a round
 * can hold, G(T) (less the d largest unreliable contributions), is a non-decreasing step function,
 * and the least T with G(T) >= minSamplesPerRound is found by bisection. Used as HiGHS's starting
 * solution; null when no T works.
 */
export function breakpointSearch(
  r: FederatedRequest,
  kept: ClientOption[][],
  transfer: number[],
  cycle: Cycle = cycleOf(r, kept, 0),
): { roundTime: number; choice: ({ option: number; steps: number } | null)[] } | null {
  const units = r.model.unitsPerBatchElement;
  const best = (T: number) =>
    kept.map((opts, i) => {
      let pick: { option: number; steps: number; samples: number; time: number } | null = null;
      opts.forEach((o, k) => {
        const steps = Math.min(o.maxSteps, Math.floor((T - transfer[i]) / o.stepSeconds + 1e-12));
        if (steps < 1) return;
        const samples = steps * o.batchSizePerGpu * units;
        const time = transfer[i] + steps * o.stepSeconds;
        if (!pick || samples > pick.samples || (samples === pick.samples && time < pick.time))
          pick = { option: k, steps, samples, time };
      });
      return pick as { option: number; steps: number; samples: number; time: number } | null;
    });
  const ok = (T: number) => {
    const picks = best(T);
    if (!r.allowDropout && picks.some((p, i) => p === null && kept[i].length > 0)) return false;
    return (
      robustSamples(
        picks.map((p) => p?.samples ?? 0),
        cycle.unreliable,
        cycle.d,
      ) >= r.minSamplesPerRound
    );
  };
  let hi =
    Math.max(
      0,
      ...kept.map((opts, i) => transfer[i] + Math.max(0, ...opts.map((o) => o.stepSeconds * o.maxSteps))),
    ) *
    (1 + 1e-9);
  if (!ok(hi)) return null;
  let lo = 0;
  for (let k = 0; k < 200 && hi - lo > 1e-13 * hi; k++) {
    const mid = (lo + hi) / 2;
    if (ok(mid)) hi = mid;
    else lo = mid;
  }
  const picks = best(hi);
  return {
    roundTime: Math.max(0, ...picks.map((p) => p?.time ?? 0)),
    choice: picks.map((p) => (p ? { option: p.option, steps: p.steps } : null)),
  };
}

/**
 * A feasible cycle to start HiGHS from: every round is the breakpoint search's round; clients that
 * take part in fewer rounds than the floor are added, one step at their fastest option, round-robin
 * over the rounds (adding a contributor never lowers the samples after the d largest drop out), and
 * each round's time grows to its slowest member.
 */
/** Per round: its time and each client's (option, steps), or null when it sits out. */
interface CycleChoice {
  roundTime: number;
  choice: ({ option: number; steps: number } | null)[];
}

function cycleStart(
  r: FederatedRequest,
  kept: ClientOption[][],
  transfer: number[],
  cycle: Cycle,
): { rounds: CycleChoice[]; totalTime: number } | null {
  const base = breakpointSearch(r, kept, transfer, cycle);
  if (!base) return null;
  const rounds: CycleChoice[] = Array.from({ length: cycle.rounds }, () => ({
    roundTime: base.roundTime,
    choice: base.choice.map((c) => (c ? { ...c } : null)),
  }));
  let next = 0;
  kept.forEach((opts, i) => {
    if (!opts.length || base.choice[i] || cycle.floor === 0) return;
    const k = opts.reduce((b, o, j) => (o.stepSeconds < opts[b].stepSeconds ? j : b), 0);
    for (let n = 0; n < cycle.floor; n++) {
      const round = rounds[next++ % cycle.rounds];
      round.choice[i] = { option: k, steps: 1 };
      round.roundTime = Math.max(round.roundTime, transfer[i] + opts[k].stepSeconds);
    }
  });
  // The order rows want the longest round first.
  rounds.sort((a, b) => b.roundTime - a.roundTime);
  return { rounds, totalTime: rounds.reduce((s, x) => s + x.roundTime, 0) };
}

/** Every client that can train, in every round, all its data allows at its most productive option. */
function fullCycle(kept: ClientOption[][], transfer: number[], cycle: Cycle): CycleChoice[] {
  const choice = kept.map((opts) => {
    if (!opts.length) return null;
    const k = opts.reduce(
      (b, o, j) => (o.maxSteps * o.batchSizePerGpu > opts[b].maxSteps * opts[b].batchSizePerGpu ? j : b),
      0,
    );
    return { option: k, steps: opts[k].maxSteps };
  });
  const roundTime = Math.max(
    0,
    ...choice.map((c, i) => (c ? transfer[i] + c.steps * kept[i][c.option].stepSeconds : 0)),
  );
  return Array.from({ length: cycle.rounds }, () => ({
    roundTime,
    choice: choice.map((c) => (c ? { ...c } : null)),
  }));
}

/** The least exact success probability over the rounds of a cycle of choices. */
function cycleProbability(r: FederatedRequest, kept: ClientOption[][], rounds: CycleChoice[]): number {
  const units = r.model.unitsPerBatchElement;
  return Math.min(
    ...rounds.map((round) =>
      successProbability(
        round.choice.map((ch, i) => ({
          samples: ch ? ch.steps * kept[i][ch.option].batchSizePerGpu * units : 0,
          availability: availabilityOf(r.clients[i]),
        })),
        r.minSamplesPerRound,
      ),
    ),
  );
}

function finish(
  r: FederatedRequest,
  rounds: ClientPlan[][],
  /** The solve report less its time (taken from t0), and what the plan adds. */
  meta: Omit<MipOutcome, 'solveTimeMs'> & {
    dropoutsTolerated: number | null;
    stats: FederatedPlan['stats'];
    t0: number;
  },
): FederatedPlan {
  const schedule: RoundPlan[] = rounds.map((clients, k) => {
    const active = clients.filter((c) => c.participates);
    const slowest = active.reduce<ClientPlan | null>(
      (m, c) => (!m || c.totalSeconds > m.totalSeconds ? c : m),
      null,
    );
    return {
      round: k + 1,
      roundTimeSeconds: slowest?.totalSeconds ?? 0,
      roundTimeSecondsP90: Math.max(0, ...active.map((c) => c.computeSecondsP90 + c.transferSeconds)),
      samplesPerRound: active.reduce((s, c) => s + c.samples, 0),
      expectedSamples: active.reduce((s, c) => s + c.samples * c.availability, 0),
      successProbability: successProbability(clients, r.minSamplesPerRound),
      energyWh: active.reduce((s, c) => s + (c.energyWh ?? 0), 0),
      slowestClient: slowest?.id ?? null,
      clients,
    };
  });
  const mean = (f: (x: RoundPlan) => number) => schedule.reduce((s, x) => s + f(x), 0) / schedule.length;
  const round = mean((x) => x.roundTimeSeconds);
  const expected = mean((x) => x.expectedSamples);
  const rounds_ =
    r.totalSamples !== undefined && expected > 0 ? Math.ceil(r.totalSamples / expected - 1e-9) : null;
  if (schedule.some((x) => x.clients.some((c) => c.participates && c.energyWh === null)))
    meta.notes.push('energyWh counts only the clients whose device has a known TDP');
  return {
    status: meta.status,
    roundTimeSeconds: round,
    roundTimeSecondsP90: mean((x) => x.roundTimeSecondsP90),
    bestBound:
      meta.bestBound === null ? (meta.optimalityProven ? round : null) : meta.bestBound / schedule.length,
    gap: meta.gap ?? (meta.optimalityProven ? 0 : null),
    solver: meta.solver,
    optimalityProven: meta.optimalityProven,
    solveTimeMs: performance.now() - meta.t0,
    notes: meta.notes,
    samplesPerRound: mean((x) => x.samplesPerRound),
    expectedSamplesPerRound: expected,
    successProbability: Math.min(...schedule.map((x) => x.successProbability)),
    dropoutsTolerated: meta.dropoutsTolerated,
    clients: schedule[0].clients,
    schedule,
    participation: r.clients.map((c, i) => ({
      clientId: c.id,
      rounds: schedule.filter((x) => x.clients[i].participates).length,
    })),
    slowestClient: schedule[0].slowestClient,
    energyWhPerRound: mean((x) => x.energyWh),
    rounds: rounds_,
    totalHours: rounds_ === null ? null : (rounds_ * round) / 3600,
    infeasible: [],
    stats: meta.stats,
  };
}

/**
 * Checks a plan from scratch, round by round: every client listed once, each participating
 * client's option re-predicted (precision supported, fits in memory with its recomputation, step
 * time as reported), whole steps within its data and maxLocalSteps, transfers recomputed, nobody
 * left out unless allowed, enough samples (with the required probability, recomputed from the
 * clients' availabilities), every client that can train in at least minRoundsPerClient rounds,
 * and each round's time equal to its slowest client's download + compute + upload.
 */
export async function verifyFederatedPlan(r: FederatedRequest, plan: FederatedPlan): Promise<string[]> {
  const problems: string[] = [];
  if (plan.roundTimeSeconds === null) return problems;
  const units = r.model.unitsPerBatchElement;
  if (plan.schedule.length !== (r.rounds ?? 1))
    problems.push(`${plan.schedule.length} rounds planned, ${r.rounds ?? 1} asked for`);
  const rounds = r.clients.map(() => 0);
  const canTrain = (await clientOptions(r)).kept.map((o) => o.length > 0);
  for (const round of plan.schedule) {
    const ids = new Map<string, number>();
    for (const c of round.clients) ids.set(c.id, (ids.get(c.id) ?? 0) + 1);
    r.clients.forEach((c) => {
      if (ids.get(c.id) !== 1)
        problems.push(`round ${round.round}: client ${c.id} appears ${ids.get(c.id) ?? 0} times`);
    });
    let samples = 0,
      slowest = 0;
    const contributions: { samples: number; availability: number }[] = [];
    for (const cp of round.clients) {
      const i = r.clients.findIndex((x) => x.id === cp.id);
      const c = r.clients[i];
      if (!c) {
        problems.push(`unknown client ${cp.id}`);
        continue;
      }
      const where = `round ${round.round}, client ${cp.id}`;
      if (!cp.participates) {
        if (!r.allowDropout) problems.push(`${where}: left out but allowDropout is off`);
        continue;
      }
      rounds[i]++;
      if (
        cp.precision === null ||
        cp.batchSizePerGpu === null ||
        !r.precisions.includes(cp.precision) ||
        !r.batchSizes.includes(cp.batchSizePerGpu)
      ) {
        problems.push(`${where}: option not allowed`);
        continue;
      }
      const why = unsupportedReason(c.gpu, cp.precision);
      if (why) {
        problems.push(`${where}: ${why}`);
        continue;
      }
      const recompute = cp.recompute ?? 'none';
      const layout: Parallelism | undefined =
        recompute === 'none'
          ? undefined
          : {
              tensorParallel: 1,
              pipelineParallel: 1,
              zeroStage: 0,
              recompute: recompute as Parallelism['recompute'],
            };
      // Re-predicted as the options were timed: corrected on a catalog GPU, analytical otherwise.
      const p = correctedOn(r, c.gpu)
        ? await predictCorrected(
            stepRequest(r, c.gpu, cp.precision, cp.batchSizePerGpu, layout),
            r.learned!,
            r.efficiency,
            DEFAULT_SOFTWARE,
            r.user,
          )
        : predictOn(r, c.gpu, cp.precision, cp.batchSizePerGpu, layout);
      if (!p.fitsInMemory)
        problems.push(
          `${where}: needs ${p.memory.totalGb.toFixed(2)} GB, ${c.gpu.id} has ${c.gpu.usableMemoryGb.toFixed(2)} usable`,
        );
      if (!Number.isInteger(cp.localSteps) || cp.localSteps < 1 || cp.localSteps > r.maxLocalSteps)
        problems.push(`${where}: ${cp.localSteps} local steps`);
      const s = cp.localSteps * cp.batchSizePerGpu * units;
      if (s !== cp.samples) problems.push(`${where}: ${cp.samples} samples reported, ${s} trained`);
      if (s > c.samplesAvailable * (1 + 1e-12))
        problems.push(`${where}: trains ${s} samples, holds ${c.samplesAvailable}`);
      const compute = cp.localSteps * (p.stepTimeMs / 1e3);
      if (Math.abs(compute - cp.computeSeconds) > 1e-6 * Math.max(1, compute))
        problems.push(`${where}: compute ${cp.computeSeconds} s reported, ${compute} s predicted`);
      const tr = transferSeconds(r.model, c, r.bytesPerParameter);
      if (Math.abs(tr - cp.transferSeconds) > 1e-6 * Math.max(1, tr))
        problems.push(`${where}: transfer ${cp.transferSeconds} s reported, ${tr} s computed`);
      samples += s;
      slowest = Math.max(slowest, compute + tr);
      contributions.push({ samples: s, availability: availabilityOf(c) });
    }
    if (samples < r.minSamplesPerRound)
      problems.push(`round ${round.round}: ${samples} samples, at least ${r.minSamplesPerRound} required`);
    const probability = successProbability(contributions, r.minSamplesPerRound);
    if (r.minSuccessProbability !== undefined && probability < r.minSuccessProbability)
      problems.push(
        `round ${round.round}: reaches ${r.minSamplesPerRound} samples with probability ${probability}, at least ${r.minSuccessProbability} required`,
      );
    if (Math.abs(probability - round.successProbability) > 1e-9)
      problems.push(
        `round ${round.round}: success probability reported ${round.successProbability}, recomputed ${probability}`,
      );
    if (Math.abs(slowest - round.roundTimeSeconds) > 1e-6 * Math.max(1, slowest))
      problems.push(
        `round ${round.round}: time reported ${round.roundTimeSeconds} s, slowest client takes ${slowest} s`,
      );
    if (round.samplesPerRound !== samples)
      problems.push(`round ${round.round}: samples reported ${round.samplesPerRound}, actual ${samples}`);
  }
  const floor = Math.min(r.minRoundsPerClient ?? 0, r.rounds ?? 1);
  r.clients.forEach((c, i) => {
    if (canTrain[i] && rounds[i] < floor)
      problems.push(`client ${c.id} takes part in ${rounds[i]} rounds, at least ${floor} required`);
  });
  const mean = plan.schedule.reduce((s, x) => s + x.roundTimeSeconds, 0) / Math.max(1, plan.schedule.length);
  if (Math.abs(mean - plan.roundTimeSeconds) > 1e-6 * Math.max(1, mean))
    problems.push(`round time reported ${plan.roundTimeSeconds} s, the rounds average ${mean} s`);
  return problems;
}
