// The search beyond plain data parallelism, for one (GPU type, precision, micro-batch): for a layout
// of GPUs (per node x nodes) it finds the fastest way to run the model there with tensor parallelism
// (TP, inside a node), pipeline parallelism (PP, stages dividing the transformer blocks), ZeRO 0-3
// over the data-parallel group and recomputation (none, selective, full), among those that fit in
// memory. recommend.ts asks only where plain data parallelism does not fit (parallelismSearch 'auto')
// or everywhere ('all'), so searches for models that fit stay as fast as before.
//
// The search is exact within its space (TP in 1, 2, 4, 8, 16 dividing the heads and the GPUs per
// node; PP dividing the transformer blocks, up to 64; ZeRO 0-3; none/selective/full recomputation)
// and cheap per layout:
//   - a step never takes less than its compute, stage work x (micro-batches + PP - 1) (step.ts), which
//     does not depend on the GPU count; per sample that bounds every layout from below, so the
//     layouts are tried in the order of that bound and the search stops at the first bound above the
//     best plan found;
//   - memory falls with the data-parallel width (ZeRO divides by it), so each layout's fit is a
//     comparison with the narrowest width that fits, found once;
//   - per (TP, PP, ZeRO) only the least recomputation that fits: more recomputes the same work more;
//   - without a fixed global batch a pipeline runs 4 micro-batches per stage (m = 4 PP; bubble (PP - 1)/(5 PP - 1)),
//     a layout without PP one micro-batch, as plain data parallelism does;
//   - one candidate per GPU layout: for a fixed GPU count the fastest plan per sample is also the
//     cheapest.
// A mixture-of-experts model adds expert parallelism (EP in 1, 2, 4, ... 64 dividing its experts and a
// stage's GPUs), tried in every configuration. Its compute bound is read at the widest EP (the
// fastest experts) without the all-to-alls, and its memory is not pruned by the narrowest fitting
// width (memory falls with EP, and the experts' shards are whole GPUs at small widths).
// Every evaluation goes through step.ts and memory.ts, so a plan equals what `predict` says for it.
import { fits, shardedMemoryPerGpu, type MemoryBreakdown } from '../predictor/memory.js';
import {
  parallelStructure,
  RECOMPUTE,
  type Parallelism,
  type Recompute,
  type ZeroStage,
} from '../predictor/parallel.js';
import {
  communicationTime,
  computeTime,
  layerSums,
  parallelCommunicationTime,
  stepMs,
  type Communication,
  type ComputeTime,
  type Efficiency,
  type Execution,
  type LayerSums,
} from '../predictor/step.js';
import type { GpuSpec, ModelCost, ModelDef, Precision } from '../predictor/types.js';
import type { Candidate, RecommendRequest, RejectReason } from './search-types.js';

/** Micro-batches per pipeline stage when the request does not fix the global batch. */
export const MICRO_BATCHES_PER_STAGE = 4;
const TP_DEGREES = [1, 2, 4, 8, 16];
const EP_DEGREES = [1, 2, 4, 8, 16, 32, 64];
const MAX_STAGES = 64;

export interface ShardedContext {
  model: ModelDef;
  cost: ModelCost;
  gpu: GpuSpec;
  gpuIndex: number;
  precision: Precision;
  batch: number;
  price: number | null;
  netGbps: number;
}

export interface ShardedSearch {
  /**
   * The fastest non-plain plan on `g` GPUs per node x `nodes` that fits, or why there is none. With
   * `plainFits`, only a plan faster than plain data parallelism (else 'OUT_OF_MEMORY' means: keep plain).
   */
  best(g: number, nodes: number, plainFits: boolean): Candidate | RejectReason;
}

const divisors = (n: number) => Array.from({ length: n }, (_, i) => i + 1).filter((k) => n % k === 0);

interface Config {
  t: number;
  pp: number;
  recompute: Recompute;
  /** Micro-batches per step (without a fixed global batch). */
  m: number;
  /** Compute-only step time (forward, backward, recomputation, TP, bubble): no GPU count in it. */
  computeMs: number;
  /** computeMs per sample x GPUs: the order configurations are tried in (see `best`). */
  key: number;
  /** Per ZeRO stage: optimizer + precision overhead = unshardedMs + shardedMs / DP, and the narrowest DP width that fits. */
  unshardedMs: number[];
  shardedMs: number[];
  minDp: number[];
}

export function shardedSearch(r: RecommendRequest, x: ShardedContext, eff: Efficiency): ShardedSearch {
  const { model, cost, gpu, precision, batch } = x;
  const s = parallelStructure(cost, model.layers);
  const tps = TP_DEGREES.filter(
    (t) =>
      t <= gpu.maxGpusPerNode &&
      (t === 1 || (s.tensorParallelizable && (s.heads === null || s.heads % t === 0))),
  );
  const pps =
    s.tensorParallelizable && s.blocks >= 2 ? divisors(s.blocks).filter((p) => p <= MAX_STAGES) : [1];
  const recomputes: Recompute[] = RECOMPUTE.filter(
    (m) => m === 'none' || (m === 'selective' ? s.attentionCore.some(Boolean) : s.blocks > 0),
  );
  const eps = s.experts === null ? [1] : EP_DEGREES.filter((e) => s.experts! % e === 0);
  const moe = s.experts !== null;
  const fp32UsesTf32 = r.fp32UsesTf32 ?? true;
  const headroomGb = r.memoryHeadroomGb ?? eff.memory.defaultMemoryHeadroomGb;
  // What a plan may use: the GPU's memory less the headroom kept free.
  const capacityGb = gpu.memoryGb - headroomGb;
  // The per-layer sums depend on the TP and EP degrees only (not on PP, ZeRO, recomputation or the GPU count).
  const sumsByT = new Map<number, LayerSums>();
  const sums = (t: number, ep = 1) => {
    let v = sumsByT.get(t * 1024 + ep);
    if (!v) {
      v = layerSums(
        cost,
        gpu,
        {
          precision,
          batchSizePerGpu: batch,
          fp32UsesTf32,
          parallelism: {
            tensorParallel: t,
            pipelineParallel: 1,
            zeroStage: 0,
            recompute: 'none',
            ...(ep > 1 ? { expertParallel: ep } : {}),
          },
          ...(r.stack ? { stack: r.stack } : {}),
          ...(r.frozenBase ? { frozenBase: true } : {}),
        },
        eff,
      );
      sumsByT.set(t * 1024 + ep, v);
    }
    return v;
  };
  const exec = (g: number, nodes: number, m: number, parallelism?: Parallelism): Execution => ({
    precision,
    batchSizePerGpu: batch,
    gpusPerNode: g,
    nodes,
    gradAccumSteps: m,
    fp32UsesTf32,
    interNodeGbps: x.netGbps,
    ...(parallelism ? { parallelism } : {}),
    ...(r.stack ? { stack: r.stack } : {}),
    ...(r.frozenBase ? { frozenBase: true } : {}),
  });
  const memoryOf = (
    t: number,
    pp: number,
    dp: number,
    zeroStage: ZeroStage,
    recompute: Recompute,
    m: number,
    ep = 1,
  ) =>
    shardedMemoryPerGpu(
      model,
      cost,
      precision,
      batch,
      {
        tensorParallel: t,
        pipelineParallel: pp,
        dataParallel: dp,
        zeroStage,
        ...(ep > 1 ? { expertParallel: ep } : {}),
        recompute,
        microBatches: m,
        ...(r.attention ? { attention: r.attention } : {}),
        ...(r.frozenBase ? { frozenBase: true } : {}),
      },
      eff,
    );
  const compute = (g: number, nodes: number, m: number, p: Parallelism) =>
    computeTime(model, cost, gpu, exec(g, nodes, m, p), eff, sums(p.tensorParallel, p.expertParallel));

  /** A configuration's GPU-count-free parts: its compute bound, its optimizer terms and where it fits. */
  const configure = (t: number, pp: number, recompute: Recompute, m: number): Config => {
    const unshardedMs: number[] = [],
      shardedMs: number[] = [],
      minDp: number[] = [];
    let computeMs = 0;
    for (let z = 0; z <= 3; z++) {
      const zeroStage = z as ZeroStage;
      // A mixture-of-experts model's bound is read at the widest EP tried: its expert GEMMs are the
      // largest (the measured rate never falls with size), its experts' weights and states per GPU the
      // fewest, so no narrower EP is faster. Its all-to-alls grow with EP: the bound leaves them out.
      const p = {
        tensorParallel: t,
        pipelineParallel: pp,
        zeroStage,
        recompute,
        ...(moe ? { expertParallel: eps[eps.length - 1] } : {}),
      };
      // Optimizer and precision terms are U + S / DP (step.ts): read them at DP = 1 and 2.
      const c1 = compute(t * pp, 1, m, p),
        c2 = compute(2 * t * pp, 1, m, p);
      const o1 = c1.optimizerMs + c1.mixedPrecisionMs,
        o2 = c2.optimizerMs + c2.mixedPrecisionMs;
      shardedMs.push(2 * (o1 - o2));
      unshardedMs.push(2 * o2 - o1);
      if (z === 0)
        computeMs =
          c1.forwardMs +
          c1.backwardMs +
          (c1.recomputeMs ?? 0) +
          (c1.tensorParallelMs ?? 0) +
          // (the bubble carries a stage's all-to-all)
          (moe ? 0 : (c1.pipelineBubbleMs ?? 0));
      // Memory is A + B / DP for DP >= 2 (memory.ts): the narrowest DP that fits follows from DP = 2 and 4.
      if (z === 0 && fits(memoryOf(t, pp, 1, 0, recompute, m), gpu, headroomGb)) {
        minDp.push(1);
        continue;
      }
      const m2 = memoryOf(t, pp, 2, zeroStage, recompute, m).totalGb,
        m4 = memoryOf(t, pp, 4, zeroStage, recompute, m).totalGb;
      const B = 4 * (m2 - m4),
        A = m2 - B / 2;
      minDp.push(
        B <= 0
          ? m2 <= capacityGb
            ? 2
            : Infinity
          : capacityGb > A
            ? Math.max(2, Math.ceil(B / (capacityGb - A) - 1e-9))
            : Infinity,
      );
    }
    return { t, pp, recompute, m, computeMs, key: (computeMs * t * pp) / m, unshardedMs, shardedMs, minDp };
  };
  // Without a fixed global batch the configurations are the same for every layout: built once, sorted by bound.
  let configs: Config[] | undefined;
  const fixedConfigs = () => {
    if (configs) return configs;
    configs = [];
    for (const t of tps)
      for (const pp of pps)
        for (const recompute of recomputes)
          configs.push(configure(t, pp, recompute, pp === 1 ? 1 : MICRO_BATCHES_PER_STAGE * pp));
    return configs.sort((a, b) => a.key - b.key);
  };

  /** Time per sample of plain data parallelism on this layout, to beat when it fits. */
  const plainMsPerSample = (g: number, nodes: number, m: number) => {
    const e = exec(g, nodes, m);
    const c = computeTime(model, cost, gpu, e, eff);
    return stepMs(c, communicationTime(c.gradientBytes, c.backwardMs, gpu, e, eff)) / (batch * m * g * nodes);
  };

  // State of the layout being searched, reused across layouts rather than allocated per layout.
  let g = 0,
    nodes = 0,
    gpus = 0,
    bestMsPerSample = Infinity;
  let best: {
    p: Parallelism;
    m: number;
    compute: ComputeTime;
    comm: Communication;
    memory: MemoryBreakdown;
  } | null = null;
  const fitted = new Uint8Array(TP_DEGREES.length * (MAX_STAGES + 1) * 4);
  const consider = (
    t: number,
    pp: number,
    recompute: Recompute,
    m: number,
    zeroStage: ZeroStage,
    lowerBoundMs: number,
  ) => {
    const group = (TP_DEGREES.indexOf(t) * (MAX_STAGES + 1) + pp) * 4 + zeroStage;
    if (fitted[group]) return; // a plan with less recomputation fits: this one only adds work
    const dp = gpus / (t * pp);
    const perSample = batch * m * dp;
    if (lowerBoundMs / perSample >= bestMsPerSample) {
      fitted[group] = 1;
      return;
    }
    // The group is settled unless some EP did not fit and was not yet slower than the best plan: more
    // recomputation might make that one fit.
    let pending = false;
    for (const ep of eps) {
      if (t === 1 && pp === 1 && zeroStage === 0 && recompute === 'none' && ep === 1) {
        pending = true; // plain: recommend.ts's own path, which settles nothing here
        continue;
      }
      if ((gpus / pp) % ep !== 0) continue;
      const p: Parallelism = {
        tensorParallel: t,
        pipelineParallel: pp,
        zeroStage,
        recompute,
        ...(ep > 1 ? { expertParallel: ep } : {}),
      };
      const e = exec(g, nodes, m, p);
      const c = computeTime(model, cost, gpu, e, eff, sums(t, ep));
      const comm = parallelCommunicationTime(c, gpu, e, eff);
      // Plans differ in global batch (micro-batches x replicas): compare time per sample.
      const msPerSample = stepMs(c, comm) / perSample;
      if (msPerSample >= bestMsPerSample) continue;
      const memory = memoryOf(t, pp, dp, zeroStage, recompute, m, ep);
      if (!fits(memory, gpu, headroomGb)) {
        pending = true;
        continue;
      }
      best = { p, m, compute: c, comm, memory };
      bestMsPerSample = msPerSample;
    }
    if (!pending) fitted[group] = 1;
  };

  return {
    best(gpusPerNode, nodeCount, plainFits) {
      g = gpusPerNode;
      nodes = nodeCount;
      gpus = g * nodes;
      best = null;
      bestMsPerSample = Infinity;
      fitted.fill(0);
      let mismatch = false;
      if (r.globalBatch === undefined) {
        // A step takes at least its compute (stage work x (micro-batches + PP - 1), step.ts), which
        // does not depend on the GPU count; per sample that bounds every configuration from below, so
        // they are tried in the order of that bound, and the search stops at the first bound above the
        // best plan found. Within a configuration the optimizer's share tightens the bound per ZeRO stage.
        for (const c of fixedConfigs()) {
          if (c.key / (batch * gpus) >= bestMsPerSample) break;
          if (g % c.t !== 0 || gpus % (c.t * c.pp) !== 0) continue;
          const dp = gpus / (c.t * c.pp);
          for (let z = 0; z <= 3; z++) {
            if ((z > 0 && dp === 1) || (!moe && dp < c.minDp[z])) continue;
            // With one micro-batch ZeRO-2 moves what ZeRO-1 moves and shards more: it fits wherever ZeRO-1 does and is never slower.
            if (z === 1 && c.m === 1 && dp >= c.minDp[2]) continue;
            consider(
              c.t,
              c.pp,
              c.recompute,
              c.m,
              z as ZeroStage,
              c.computeMs + c.unshardedMs[z] + c.shardedMs[z] / (z > 0 ? dp : 1) + eff.stepOverheadMs,
            );
          }
        }
      } else {
        // A fixed global batch sets the micro-batches per layout: no shared order, try them all.
        for (const t of tps)
          for (const pp of pps) {
            if (g % t !== 0 || gpus % (t * pp) !== 0) continue;
            const dp = gpus / (t * pp);
            const m = r.globalBatch / (batch * dp);
            if (!Number.isInteger(m) || m < 1) {
              mismatch = true;
              continue;
            }
            for (const recompute of recomputes)
              for (let z = 0; z <= 3; z++)
                if (!(z > 0 && dp === 1)) consider(t, pp, recompute, m, z as ZeroStage, 0);
          }
      }
      const found = best as {
        p: Parallelism;
        m: number;
        compute: ComputeTime;
        comm: Communication;
        memory: MemoryBreakdown;
      } | null;
      if (!found) return mismatch ? 'GLOBAL_BATCH_MISMATCH' : 'OUT_OF_MEMORY';
      if (plainFits) {
        const m = r.globalBatch !== undefined ? r.globalBatch / (batch * gpus) : 1;
        if (Number.isInteger(m) && m >= 1 && plainMsPerSample(g, nodes, m) <= bestMsPerSample)
          return 'OUT_OF_MEMORY';
      }
      const stepTimeMs = stepMs(found.compute, found.comm);
      return {
        gpuIndex: x.gpuIndex,
        precision,
        batch,
        accum: found.m,
        gpusPerNode: g,
        nodes,
        price: x.price,
        optionIndex: 0,
        costHi: 0,
        analyticalStepMs: stepTimeMs,
        stepTimeMs,
        stepLoMs: stepTimeMs,
        stepHiMs: stepTimeMs,
        hours: 0,
        hoursHi: 0,
        cost: 0,
        memoryGb: found.memory.totalGb,
        compute: found.compute,
        commTotalMs: found.comm.totalMs,
        commExposedMs: found.comm.exposedMs,
        parallelism: found.p,
        commDataParallelMs: found.comm.dataParallelMs,
        commPipelineMs: found.comm.pipelineMs,
      };
    },
  };
}
