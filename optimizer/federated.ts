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
import { predict } from '../predictor/predict.js';
import { unsupportedReason } from '../predictor/precision.js';
import { costOf } from '../predictor/predict.js';
import type { GpuSpec, MathMode, ModelDef, Precision } from '../predictor/types.js';
import type { Efficiency } from '../predictor/step.js';
import { pcieBandwidth } from '../seeds/catalog.js';
import { MipBuilder, modelSize, type ModelSize } from './milp/model.js';
import { solveMip, type MipStatus, type SolveOptions, type MipOutcome } from './milp/solver.js';
import { VerificationError } from './milp/verify.js';

export interface FederatedClient {
  id: string;
  gpu: GpuSpec;
  /** Data the client holds, in the model's throughput unit; a round trains at most this much on it. */
  samplesAvailable: number;
  uplinkMbps: number;
  downlinkMbps: number;
}

export interface FederatedRequest {
  model: ModelDef;
  clients: FederatedClient[];
  minSamplesPerRound: number;
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
  solve: SolveOptions;
  /** The analytical predictor's fitted constants (seeds/efficiency.json). */
  efficiency: Efficiency;
}

export interface ClientOption {
  batchSizePerGpu: number;
  precision: Precision;
  stepSeconds: number;
  memoryGb: number;
  /** Most local steps the client's data allows at this batch size (and maxLocalSteps). */
  maxSteps: number;
}

export interface ClientPlan {
  id: string;
  participates: boolean;
  precision: Precision | null;
  batchSizePerGpu: number | null;
  localSteps: number;
  samples: number;
  computeSeconds: number;
  transferSeconds: number;
  totalSeconds: number;
  memoryGb: number | null;
  /** Why a client is left out (no option fits, or the optimum does not need it). */
  note: string | null;
}

export type FederatedBlocker = 'MEMORY' | 'SAMPLES';

export interface FederatedPlan extends MipOutcome {
  roundTimeSeconds: number | null;
  samplesPerRound: number | null;
  clients: ClientPlan[];
  /** The client whose download + compute + upload sets the round time. */
  slowestClient: string | null;
  /** With totalSamples: rounds needed and their wall time. */
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

/** The (batch, precision) options each client can run, before and after pruning. */
export function clientOptions(r: FederatedRequest): { all: ClientOption[][]; kept: ClientOption[][] } {
  const units = r.model.unitsPerBatchElement;
  const all: ClientOption[][] = [],
    kept: ClientOption[][] = [];
  for (const c of r.clients) {
    const opts: ClientOption[] = [];
    for (const batch of r.batchSizes) {
      const maxSteps = Math.min(r.maxLocalSteps, Math.floor(c.samplesAvailable / (batch * units) + 1e-9));
      if (maxSteps < 1) continue;
      for (const precision of r.precisions) {
        if (unsupportedReason(c.gpu, precision) !== null) continue;
        const p = predict(
          {
            model: r.model,
            gpu: c.gpu,
            precision,
            batchSizePerGpu: batch,
            gpusPerNode: 1,
            nodes: 1,
            fp32UsesTf32: r.fp32UsesTf32,
            interNodeGbps: 1,
          },
          r.efficiency,
        );
        const stepSeconds = p.stepTimeMs / 1e3;
        if (!p.fitsInMemory || !Number.isFinite(stepSeconds) || stepSeconds <= 0) continue;
        opts.push({ batchSizePerGpu: batch, precision, stepSeconds, memoryGb: p.memory.totalGb, maxSteps });
      }
    }
    all.push(opts);
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

export async function planFederatedRound(r: FederatedRequest): Promise<FederatedPlan> {
  const t0 = performance.now();
  const units = r.model.unitsPerBatchElement;
  const { all, kept } = clientOptions(r);
  const transfer = r.clients.map((c) => transferSeconds(r.model, c, r.bytesPerParameter));
  const notes: string[] = [];
  const stats0 = {
    options: all.reduce((s, o) => s + o.length, 0),
    keptOptions: kept.reduce((s, o) => s + o.length, 0),
  };
  const noModel: ModelSize = { variables: 0, integers: 0, constraints: 0, nonzeros: 0 };
  const idle = (i: number, note: string): ClientPlan => ({
    id: r.clients[i].id,
    participates: false,
    precision: null,
    batchSizePerGpu: null,
    localSteps: 0,
    samples: 0,
    computeSeconds: 0,
    transferSeconds: 0,
    totalSeconds: 0,
    memoryGb: null,
    note,
  });
  const none = (
    status: MipStatus,
    solver: string,
    size: ModelSize,
    infeasible: FederatedPlan['infeasible'],
  ): FederatedPlan => ({
    status,
    roundTimeSeconds: null,
    bestBound: null,
    gap: null,
    solver,
    optimalityProven: status === 'INFEASIBLE',
    solveTimeMs: performance.now() - t0,
    notes,
    samplesPerRound: null,
    clients: [],
    slowestClient: null,
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
        message: `${c.gpu.id} (${c.gpu.memoryGb} GB) fits no allowed batch size in any precision it supports`,
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

  const { model, y, s, start, warm } = roundModel(r, kept, transfer);
  const size = modelSize(model);
  if (start)
    notes.push(`HiGHS started from the breakpoint search's round of ${start.roundTime.toPrecision(6)} s`);
  const res = await solveMip(model, { ...r.solve, start: warm });
  notes.push(...res.notes);
  if (res.status === 'INFEASIBLE')
    return none('INFEASIBLE', res.solver, size, [
      {
        clientId: null,
        reason: 'SAMPLES',
        message: `no choice of steps reaches ${r.minSamplesPerRound} samples per round`,
      },
    ]);
  if (!res.values) return none(res.status, res.solver, size, []);
  const v = res.values;

  const clients: ClientPlan[] = r.clients.map((c, i) => {
    if (unusable.has(i)) return idle(i, `left out: ${unusable.get(i)!.message}`);
    const k = y[i].findIndex((yi) => v[yi] > 0.5);
    if (k < 0) return idle(i, 'left out: the round is faster without it');
    const o = kept[i][k];
    const steps = Math.round(v[s[i][k]]);
    const compute = steps * o.stepSeconds;
    return {
      id: c.id,
      participates: true,
      precision: o.precision,
      batchSizePerGpu: o.batchSizePerGpu,
      localSteps: steps,
      samples: steps * o.batchSizePerGpu * units,
      computeSeconds: compute,
      transferSeconds: transfer[i],
      totalSeconds: compute + transfer[i],
      memoryGb: o.memoryGb,
      note: null,
    };
  });
  const plan = finish(r, clients, {
    status: res.status,
    solver: res.solver,
    optimalityProven: res.optimalityProven,
    gap: res.gap,
    bestBound: res.bestBound,
    notes,
    stats: { ...stats0, ...size },
    t0,
  });
  const problems = verifyFederatedPlan(r, plan);
  if (problems.length) throw new VerificationError(problems);
  return plan;
}

/**
 * The round's MIP (see the top of this file) and a warm start from the breakpoint search. Exported
 * for bench/solvers.ts, which hands the same model to both solvers.
 */
export function roundModel(r: FederatedRequest, kept: ClientOption[][], transfer: number[]) {
  const units = r.model.unitsPerBatchElement;
  const b = new MipBuilder('federated-round');
  const maxRound = Math.max(
    ...kept.map((opts, i) => Math.max(0, ...opts.map((o) => o.stepSeconds * o.maxSteps)) + transfer[i]),
  );
  const T = b.addVar('T', 'continuous', 0, maxRound, 1);
  const y: number[][] = [],
    s: number[][] = [];
  const sampleTerms: [number, number][] = [];
  kept.forEach((opts, i) => {
    y.push([]);
    s.push([]);
    if (!opts.length) return;
    opts.forEach((o, k) => {
      const yi = b.addVar(`y_${i}_${k}`, 'binary', 0, 1);
      const si = b.addVar(`s_${i}_${k}`, 'integer', 0, o.maxSteps);
      y[i].push(yi);
      s[i].push(si);
      b.addRow(
        `steps_${i}_${k}`,
        [
          [si, 1],
          [yi, -o.maxSteps],
        ],
        -Infinity,
        0,
      );
      b.addRow(
        `some_${i}_${k}`,
        [
          [si, 1],
          [yi, -1],
        ],
        0,
        Infinity,
      );
      sampleTerms.push([si, o.batchSizePerGpu * units]);
    });
    b.addRow(
      `one_${i}`,
      y[i].map((v) => [v, 1] as [number, number]),
      r.allowDropout ? 0 : 1,
      1,
    );
    b.addRow(
      `slowest_${i}`,
      [
        [T, 1],
        ...opts.flatMap((o, k): [number, number][] => [
          [s[i][k], -o.stepSeconds],
          [y[i][k], -transfer[i]],
        ]),
      ],
      0,
      Infinity,
    );
  });
  b.addRow('samples', sampleTerms, r.minSamplesPerRound, Infinity);
  const model = b.build();
  // The LP relaxation of a min-max round with integer steps is weak (a fractional y pays a fraction
  // of the transfer), so HiGHS alone needs 10 s for 50 clients and does not close the gap for 200.
  // Started from the breakpoint search's answer it proves optimality in about a second.
  const start = breakpointSearch(r, kept, transfer);
  const warm = start ? new Array<number>(model.vars.length).fill(0) : undefined;
  if (start && warm) {
    warm[T] = start.roundTime;
    start.choice.forEach((ch, i) => {
      if (ch) {
        warm[y[i][ch.option]] = 1;
        warm[s[i][ch.option]] = ch.steps;
      }
    });
  }
  return { model, T, y, s, start, warm };
}

/**
 * The round time as a function of T: for a candidate round time T each client independently trains
 * as many samples as fit (download + steps + upload <= T) in its best option, so the samples a round
 * can hold, G(T), is a non-decreasing step function, and the least T with G(T) >= minSamplesPerRound
 * is found by bisection. Used as HiGHS's starting solution; null when no T works.
 */
export function breakpointSearch(
  r: FederatedRequest,
  kept: ClientOption[][],
  transfer: number[],
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
    return picks.reduce((sum, p) => sum + (p?.samples ?? 0), 0) >= r.minSamplesPerRound;
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

function finish(
  r: FederatedRequest,
  clients: ClientPlan[],
  meta: {
    status: MipStatus;
    solver: string;
    optimalityProven: boolean;
    gap: number | null;
    bestBound: number | null;
    notes: string[];
    stats: FederatedPlan['stats'];
    t0: number;
  },
): FederatedPlan {
  const active = clients.filter((c) => c.participates);
  const slowest = active.reduce<ClientPlan | null>(
    (m, c) => (!m || c.totalSeconds > m.totalSeconds ? c : m),
    null,
  );
  const round = slowest?.totalSeconds ?? 0;
  const samples = active.reduce((s, c) => s + c.samples, 0);
  const rounds =
    r.totalSamples !== undefined && samples > 0 ? Math.ceil(r.totalSamples / samples - 1e-9) : null;
  return {
    status: meta.status,
    roundTimeSeconds: round,
    bestBound: meta.bestBound ?? (meta.optimalityProven ? round : null),
    gap: meta.gap ?? (meta.optimalityProven ? 0 : null),
    solver: meta.solver,
    optimalityProven: meta.optimalityProven,
    solveTimeMs: performance.now() - meta.t0,
    notes: meta.notes,
    samplesPerRound: samples,
    clients,
    slowestClient: slowest?.id ?? null,
    rounds,
    totalHours: rounds === null ? null : (rounds * round) / 3600,
    infeasible: [],
    stats: meta.stats,
  };
}

/**
 * Checks a round plan from scratch: every client listed once, each participating client's option
 * re-predicted (precision supported, fits in memory, step time as reported), whole steps within its
 * data and maxLocalSteps, transfers recomputed, nobody left out unless allowed, enough samples, and
 * the round time equal to the slowest client's download + compute + upload.
 */
export function verifyFederatedPlan(r: FederatedRequest, plan: FederatedPlan): string[] {
  const problems: string[] = [];
  if (plan.roundTimeSeconds === null) return problems;
  const units = r.model.unitsPerBatchElement;
  const ids = new Map<string, number>();
  for (const c of plan.clients) ids.set(c.id, (ids.get(c.id) ?? 0) + 1);
  r.clients.forEach((c) => {
    if (ids.get(c.id) !== 1) problems.push(`client ${c.id} appears ${ids.get(c.id) ?? 0} times`);
  });
  let samples = 0,
    slowest = 0;
  for (const cp of plan.clients) {
    const c = r.clients.find((x) => x.id === cp.id);
    if (!c) {
      problems.push(`unknown client ${cp.id}`);
      continue;
    }
    if (!cp.participates) {
      if (!r.allowDropout) problems.push(`client ${cp.id} left out but allowDropout is off`);
      continue;
    }
    if (
      cp.precision === null ||
      cp.batchSizePerGpu === null ||
      !r.precisions.includes(cp.precision) ||
      !r.batchSizes.includes(cp.batchSizePerGpu)
    ) {
      problems.push(`client ${cp.id}: option not allowed`);
      continue;
    }
    const why = unsupportedReason(c.gpu, cp.precision);
    if (why) {
      problems.push(`client ${cp.id}: ${why}`);
      continue;
    }
    const p = predict(
      {
        model: r.model,
        gpu: c.gpu,
        precision: cp.precision,
        batchSizePerGpu: cp.batchSizePerGpu,
        gpusPerNode: 1,
        nodes: 1,
        fp32UsesTf32: r.fp32UsesTf32,
        interNodeGbps: 1,
      },
      r.efficiency,
    );
    if (!p.fitsInMemory)
      problems.push(
        `client ${cp.id}: needs ${p.memory.totalGb.toFixed(2)} GB, ${c.gpu.id} has ${c.gpu.memoryGb}`,
      );
    if (!Number.isInteger(cp.localSteps) || cp.localSteps < 1 || cp.localSteps > r.maxLocalSteps)
      problems.push(`client ${cp.id}: ${cp.localSteps} local steps`);
    const s = cp.localSteps * cp.batchSizePerGpu * units;
    if (s !== cp.samples) problems.push(`client ${cp.id}: ${cp.samples} samples reported, ${s} trained`);
    if (s > c.samplesAvailable * (1 + 1e-12))
      problems.push(`client ${cp.id}: trains ${s} samples, holds ${c.samplesAvailable}`);
    const compute = cp.localSteps * (p.stepTimeMs / 1e3);
    if (Math.abs(compute - cp.computeSeconds) > 1e-6 * Math.max(1, compute))
      problems.push(`client ${cp.id}: compute ${cp.computeSeconds} s reported, ${compute} s predicted`);
    const tr = transferSeconds(r.model, c, r.bytesPerParameter);
    if (Math.abs(tr - cp.transferSeconds) > 1e-6 * Math.max(1, tr))
      problems.push(`client ${cp.id}: transfer ${cp.transferSeconds} s reported, ${tr} s computed`);
    samples += s;
    slowest = Math.max(slowest, compute + tr);
  }
  if (samples < r.minSamplesPerRound)
    problems.push(`${samples} samples per round, at least ${r.minSamplesPerRound} required`);
  if (Math.abs(slowest - plan.roundTimeSeconds) > 1e-6 * Math.max(1, slowest))
    problems.push(`round time reported ${plan.roundTimeSeconds} s, slowest client takes ${slowest} s`);
  if (plan.samplesPerRound !== samples)
    problems.push(`samples per round reported ${plan.samplesPerRound}, actual ${samples}`);
  return problems;
}
