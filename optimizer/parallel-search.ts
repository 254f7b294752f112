// The search beyond plain data parallelism, for one (GPU type, precision, micro-batch): for a layout
// of GPUs (per node x nodes) it finds the fastest way to run the model there with tensor parallelism
// (TP, inside a node), pipeline parallelism (PP, stages over the transformer blocks), ZeRO 0-3
// over the data-parallel group and recomputation (SEARCHED_RECOMPUTE: none, selective or torchtitan's
// op-level policy, full), among those that fit in
// memory. recommend.ts asks only where plain data parallelism does not fit or trains above the global
// batch cap (parallelismSearch 'auto'), or everywhere ('all'), so searches for models that fit stay
// as fast as before.
//
// The search is exact within its space (TP in 1, 2, 4, 8, 16 dividing the heads and the GPUs per
// node; PP dividing the transformer blocks or a power of two, up to 64 and the blocks; on a stack
// that interleaves, also one interleaved schedule per PP dividing the blocks (pipelineSchedules);
// ZeRO 0-3; the stack's recomputation modes)
// and cheap per layout:
//   - a step never takes less than its compute, stage work x (micro-batches + PP - 1) (step.ts), which
//     does not depend on the GPU count; per sample that bounds every layout from below, so the
//     layouts are tried in the order of that bound and the search stops at the first bound above the
//     best plan found;
//   - memory falls with the data-parallel width (ZeRO divides by it), so each layout's fit is a
//     comparison with the narrowest width that fits, found once;
//   - per (TP, PP, chunks, ZeRO) only the least recomputation that fits: more recomputes the same
//     work more;
//   - without a fixed global batch a pipeline runs 4 micro-batches per stage (m = 4 PP; bubble
//     (PP - 1)/(5 PP - 1), (PP - 1)/(4 PP v + PP - 1) with v chunks per stage),
//     a layout without PP one micro-batch, as plain data parallelism does;
//   - one candidate per GPU layout: for a fixed GPU count the fastest plan per sample is also the
//     cheapest;
//   - without a fixed global batch, only layouts whose global batch (micro-batch x micro-batches x
//     DP) is within the request's cap: a GPU layout whose fastest layout is above it gets the fastest
//     one within it, and is turned away for the cap only where nothing within it fits.
// A mixture-of-experts model adds expert parallelism (EP in 1, 2, 4, ... 64 dividing its experts and a
// stage's GPUs), tried in every configuration. Its compute bound is read at the widest EP (the
// fastest experts) without the all-to-alls; each EP is then bounded by its own stage work (all-to-alls
// and bubble included), which does not depend on the node count and is read once per GPUs per node.
// Its fit is not read off the A + B / DP line (the experts' shards are whole GPUs at small widths) but
// settled per EP from the widest width known not to fit and the narrowest known to fit (memory never
// grows with the width from DP = 2 on), before any step is timed.
// Memory does not depend on the GPU, so one request's searches share its figures, where each layout
// fits per GPU memory size, and where nothing fits at all (SearchShare).
// Every evaluation goes through step.ts and memory.ts, so a plan equals what `predict` says for it.
import { shardedMemoryPerGpu, stackMemory, type MemoryLayout } from '../predictor/memory.js';
import {
  parallelStructure,
  RECOMPUTE,
  type ParallelStructure,
  type Parallelism,
  type Recompute,
  type ZeroStage,
  unshardedStageOf,
  zeroRunsWithPipeline,
} from '../predictor/parallel.js';
import {
  computeTime,
  layerSums,
  parallelCommunicationTime,
  stepMs,
  type Communication,
  type ComputeTime,
  type Efficiency,
  type Execution,
  type LayerSums,
  type NetworkTransport,
} from '../predictor/step.js';
import type { GpuSpec, ModelCost, ModelDef, Precision } from '../predictor/types.js';
import { runOptionsOf, type Candidate, type RecommendRequest, type RejectReason } from './search-types.js';
import { DEFAULT_STACK, stackEffects, type SoftwareStack } from '../predictor/software.js';

/** Micro-batches per pipeline stage when the request does not fix the global batch. */
export const MICRO_BATCHES_PER_STAGE = 4;
const TP_DEGREES = [1, 2, 4, 8, 16];
const EP_DEGREES = [1, 2, 4, 8, 16, 32, 64];
const MAX_STAGES = 64;
/** Most model chunks per pipeline stage (predictor/parallel.ts validates the same range). */
const MAX_CHUNKS = 64;

/**
 * What the searches of one request share. Memory does not depend on the GPU type or the offer, so
 * every search of a (precision, micro-batch) reads the layouts' memory computed once. The per-layer
 * sums and the configurations' compute bounds depend on the GPU, not on the offer: its price is not
 * in them, nor its network (they are read on one node, and a configuration's bound leaves out the
 * all-to-alls, the one part of a node's compute that reads the network when EP spans nodes), so every
 * offer of a GPU shares them.
 */
export interface SearchShare {
  /** Per precision and micro-batch: the layouts' memory per GPU at the DP widths asked (see LayoutMemory). */
  memory: Map<string, LayoutMemory>;
  /** Per GPU, precision and micro-batch: per TP and EP degree, the per-layer sums. */
  sums: Map<string, Map<number, LayerSums>>;
  /** Per GPU, precision and micro-batch: the configurations, sorted by bound. */
  configs: Map<string, Config[]>;
  /** Per GPU, precision and micro-batch: a stage's work per configuration and EP within a node (see `consider`). */
  stageWork: Map<string, Map<number, number>>;
  /**
   * Per precision and GPU layout (GPUs per node and nodes): the (micro-batch, GPU memory size) pairs
   * known to fit no parallel layout there, and those known to fit some. Whether a layout fits reads
   * only its memory, which no GPU changes, against the GPU's memory size; and no layout's memory
   * falls with the micro-batch (memory.ts: the activations are per sample, the rest does not read
   * it). So nothing fits with a bigger batch on no more memory than where nothing fits, and something
   * fits with a smaller batch on no less memory than where something does.
   */
  fit: Map<string, { none: FitAt[]; some: FitAt[] }>;
  /** Per precision and micro-batch: per layout (a search's memberSlot), GB per GPU at the request's widest DP. */
  widestGb: Map<string, Float64Array>;
  /** Per precision, micro-batch and GPU memory size: per layout (a search's memberSlot), where it fits (see fitsAt). */
  fitBounds: Map<string, (FitBounds | undefined)[]>;
}
export const searchShare = (): SearchShare => ({
  memory: new Map(),
  sums: new Map(),
  configs: new Map(),
  stageWork: new Map(),
  fit: new Map(),
  widestGb: new Map(),
  fitBounds: new Map(),
});

/**
 * Layouts' memory per GPU (GB) at the DP widths asked. A request asks for some hundred thousand
 * figures, kept until it is answered: one Map from small integers (a layout's slot and the width) to
 * small integers (where the figure is in `gb`, an array of unboxed doubles) holds them without an
 * object per figure or per layout, which the garbage collector would otherwise copy and promote.
 */
interface LayoutMemory {
  /** Per memberSlot x WIDTH_KEYS + DP: the figure's index in gb. */
  index: Map<number, number>;
  gb: number[];
  /** Layouts without a slot (a fixed global batch's micro-batches) or wider: per layoutKey, per DP. */
  byLayoutKey: Map<number, Map<number, number>>;
}
/** DP widths below this are keyed with their layout's slot in LayoutMemory (the key stays a small integer). */
const WIDTH_KEYS = 1024;

/** A micro-batch and a GPU memory size (GB). */
interface FitAt {
  batch: number;
  memoryGb: number;
}

/** Where a layout fits on a GPU: at no DP up to unfitUpTo, at every DP from fitsFrom (DP >= 2), and at DP = 1 if `one`. */
interface FitBounds {
  unfitUpTo: number;
  fitsFrom: number;
  one?: boolean;
}

/** What the search of one GPU layout finds: its fastest plan, or why there is none. */
type Searched = Found | 'GLOBAL_BATCH_MISMATCH' | 'GLOBAL_BATCH_TOO_LARGE' | 'OUT_OF_MEMORY';

/** The fastest plan on a GPU layout, as found: its layout, micro-batches, step and time per sample. */
interface Found {
  p: Parallelism;
  m: number;
  compute: ComputeTime;
  comm: Communication;
  msPerSample: number;
}

function shared<V>(byKey: Map<string, V>, key: string, make: () => V): V {
  let v = byKey.get(key);
  if (v === undefined) byKey.set(key, (v = make()));
  return v;
}

export interface ShardedContext {
  model: ModelDef;
  cost: ModelCost;
  gpu: GpuSpec;
  gpuIndex: number;
  precision: Precision;
  batch: number;
  price: number | null;
  netGbps: number;
  /** How NCCL crosses that network (the option's); absent = RDMA. */
  netTransport?: NetworkTransport;
  /**
   * The largest global batch (micro-batch x micro-batches x DP) a plan may train with, Infinity with
   * a fixed global batch (recommend.ts: maxGlobalBatch or the model's usual one).
   */
  maxGlobalBatch: number;
  /** Shared by the request's searches (see SearchShare); a fresh one when absent. */
  share?: SearchShare;
}

export interface ShardedSearch {
  /**
   * The fastest non-plain plan on `g` GPUs per node x `nodes` that fits within the global batch cap,
   * or why there is none. With `plainFits`, only a plan faster than plain data parallelism within the
   * cap (else 'OUT_OF_MEMORY' means: keep plain).
   */
  best(g: number, nodes: number, plainFits: boolean): Candidate | RejectReason;
  /**
   * The fewest nodes of `g` GPUs, from `from` to `to`, on which some layout other than plain data
   * parallelism fits in memory, or null. Where memory is A + B / DP (every model without experts),
   * each configuration's narrowest DP (Config.minDp) gives its fewest nodes directly; the least of
   * them is checked by the search's own fit test (someLayoutFits) and the scan goes on past it
   * should it not (a ZeRO-0 layout fitting at DP 1 but not wider). Experts fit per EP: that search
   * goes node by node.
   */
  fewestNodes(g: number, from: number, to: number): number | null;
}

/**
 * The recomputation a search tries, least work first, per software stack: what its frameworks run.
 * Megatron-Core and stock PyTorch: none, selective (the attention core) and full. TORCH_COMPILE
 * (torchtitan's recipes): none, its op-level selective checkpointing (its train configs' default) and
 * full; Megatron's selective is not one of torchtitan's modes. Each list is nested: every mode reruns
 * what the one before it reruns and more (collectives included: parallel.ts rerunOf), and keeps no
 * more, so the least recomputation that fits is the fastest of its (TP, PP, ZeRO). (Selective and
 * selective_op are not nested: at long sequences the attention core can cost more than the op
 * policy's matmuls, which is another reason they are not searched together.) The JAX
 * projection-keeping policies are priced when a plan or a recorded run names them.
 */
const SEARCHED_RECOMPUTE = (stack: SoftwareStack | undefined): readonly Recompute[] =>
  stack === 'TORCH_COMPILE' ? ['none', 'selective_op', 'full'] : ['none', 'selective', 'full'];
const RECOMPUTE_INDEX: Record<Recompute, number> = Object.fromEntries(
  RECOMPUTE.map((r, i) => [r, i]),
) as Record<Recompute, number>;
/** One number per (TP, PP, chunks, recomputation, micro-batches, ZeRO stage, EP) of a search (TP and EP are powers of 2). */
const layoutKey = (
  t: number,
  pp: number,
  v: number,
  recompute: Recompute,
  m: number,
  zeroStage: number,
  ep: number,
) =>
  (((((m * 8 + Math.log2(t)) * (MAX_STAGES + 1) + pp) * (MAX_CHUNKS + 1) + v) * 8 +
    RECOMPUTE_INDEX[recompute]) *
    4 +
    zeroStage) *
    8 +
  Math.log2(ep);

/** Micro-batches per step of a configuration without a fixed global batch (see the header). */
const microBatchesOf = (pp: number) => (pp === 1 ? 1 : MICRO_BATCHES_PER_STAGE * pp);

/** log2 of the TP and EP degrees (powers of 2 up to 64), looked up. */
const LOG2 = Array.from({ length: 65 }, (_, n) => Math.log2(n));

/** A search's layout as step.ts reads it (chunks and EP only when above 1, as a plan states them). */
function parallelism(
  t: number,
  pp: number,
  v: number,
  zeroStage: ZeroStage,
  recompute: Recompute,
  ep: number,
): Parallelism {
  // (Assigned rather than spread in: the search builds one per step it times.)
  const p: Parallelism = { tensorParallel: t, pipelineParallel: pp, zeroStage, recompute };
  if (v > 1) p.virtualPipelineStages = v;
  if (ep > 1) p.expertParallel = ep;
  return p;
}

const divisors = (n: number) => Array.from({ length: n }, (_, i) => i + 1).filter((k) => n % k === 0);

/** pipelineDegrees per block count: a request builds a search per GPU, precision, batch and offer. */
const degreesByBlocks = new Map<number, readonly number[]>();

/**
 * Pipeline degrees searched for `blocks` transformer blocks: those dividing them and the powers of
 * two, up to MAX_STAGES and the blocks. A power of two that does not divide them splits them unevenly,
 * as the published runs of the largest models do (Llama 3.1 405B's 126 blocks at PP 8, Qwen3-235B's
 * 94 and DeepSeek-V3's 61 at PP 4 and 8); the step is costed balanced, as `predict` costs those runs,
 * and memory at the heaviest stage (predictor/memory.ts).
 */
export function pipelineDegrees(blocks: number): readonly number[] {
  let degrees = degreesByBlocks.get(blocks);
  if (!degrees) {
    const powers = Array.from({ length: 7 }, (_, i) => 2 ** i);
    degrees = [...new Set([...divisors(blocks), ...powers])]
      .filter((p) => p <= Math.min(blocks, MAX_STAGES))
      .sort((a, b) => a - b);
    degreesByBlocks.set(blocks, degrees);
  }
  return degrees;
}

/** Pipeline degrees searched for a model: none beyond 1 unless its blocks can be split across stages. */
export const pipelineDegreesOf = (
  s: Pick<ParallelStructure, 'tensorParallelizable' | 'blocks'>,
): readonly number[] => (s.tensorParallelizable && s.blocks >= 2 ? pipelineDegrees(s.blocks) : [1]);

/** A pipeline schedule a search tries: PP stages, each holding v model chunks (interleaved 1F1B when v > 1). */
export interface Schedule {
  pp: number;
  v: number;
}

/**
 * The pipeline schedules searched for a model: every pipeline degree (pipelineDegreesOf) with one
 * chunk per stage and, on a stack whose pipeline engine interleaves (seeds/software.json
 * interleavedPipeline), where PP divides the blocks (as Megatron-Core asks unless the first and last
 * stages are sized by hand), one interleaved schedule: chunks of two blocks, or of one block where a
 * stage holds an odd number. Of the published interleaved runs whose blocks are known, 79 ran chunks
 * of about two blocks, 40 of one, 40 of about four, 7 of about three (measurements/llm_train.csv).
 * One schedule per PP keeps the search's cost. Trying every chunk count that divides a stage's
 * blocks took 1.7 to 4 times as long for Qwen3-30B-A3B for plans at most 0.6% cheaper, and chunks of
 * 1, 2 and 4 blocks 1.7 to 2 times for 0.5%; Llama 3 70B's, Llama 3.1 405B's and Llama-2-7B's plan 1
 * came out the same (MEGATRON on H100 and A100, with and without a global batch, when this was
 * written). Interleaving divides the bubble by the chunks but sends as many times more stage
 * boundaries (step.ts), and its stages hold more micro-batches in flight (memory.ts): the search
 * weighs the three against one chunk per stage.
 */
export function pipelineSchedules(
  s: Pick<ParallelStructure, 'tensorParallelizable' | 'blocks'>,
  interleaved: boolean,
): Schedule[] {
  const schedules: Schedule[] = [];
  for (const pp of pipelineDegreesOf(s)) {
    schedules.push({ pp, v: 1 });
    // Chunks of two blocks, or of one where a stage holds an odd number of them or only two.
    const perStage = s.blocks / pp;
    const v = perStage % 2 === 0 && perStage > 2 ? perStage / 2 : perStage;
    if (interleaved && pp > 1 && Number.isInteger(perStage) && v >= 2 && v <= MAX_CHUNKS)
      schedules.push({ pp, v });
  }
  return schedules;
}

export interface Config {
  t: number;
  pp: number;
  /** Model chunks per stage (1: plain 1F1B). */
  v: number;
  recompute: Recompute;
  /** Micro-batches per step (without a fixed global batch). */
  m: number;
  /** Compute-only step time (forward, backward, recomputation, TP, bubble): no GPU count in it. */
  computeMs: number;
  /** computeMs per sample x GPUs: the order configurations are tried in (see `best`). */
  key: number;
  /**
   * Per ZeRO stage: optimizer + precision overhead = unshardedMs + shardedMs / DP (NaN until first
   * needed; shared by the configurations of one TP and PP), and the narrowest DP width that fits.
   */
  unshardedMs: number[];
  shardedMs: number[];
  minDp: number[];
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** The TP degrees a search tries on a GPU: within its node, and (beyond 1) dividing the model's heads. */
export const tensorParallelDegrees = (
  s: Pick<ParallelStructure, 'tensorParallelizable' | 'heads'>,
  gpu: Pick<GpuSpec, 'maxGpusPerNode'>,
): number[] =>
  TP_DEGREES.filter(
    (t) =>
      t <= gpu.maxGpusPerNode &&
      (t === 1 || (s.tensorParallelizable && (s.heads === null || s.heads % t === 0))),
  );

/**
 * The fewest replicas per GPU any layout searched on g GPUs per node trains, as a share of the GPUs:
 * 1 / the widest TP dividing g. A pipeline of PP stages trains 1 / PP as many replicas but runs
 * m = 4 PP micro-batches each (without a fixed global batch), so its global batch is larger, not
 * smaller: only TP can keep a GPU layout within a global batch cap that plain data parallelism is above.
 */
export function fewestReplicasPerGpu(
  s: Pick<ParallelStructure, 'tensorParallelizable' | 'heads'>,
  gpu: Pick<GpuSpec, 'maxGpusPerNode'>,
  g: number,
): number {
  return 1 / Math.max(...tensorParallelDegrees(s, gpu).filter((t) => g % t === 0));
}

export function shardedSearch(r: RecommendRequest, x: ShardedContext, eff: Efficiency): ShardedSearch {
  const { model, cost, gpu, precision, batch } = x;
  const s = parallelStructure(cost, model.layers);
  const tps = tensorParallelDegrees(s, gpu);
  const pps = pipelineDegreesOf(s);
  const schedules = pipelineSchedules(s, stackEffects(r.stack ?? DEFAULT_STACK).interleavedPipeline);
  const recomputes: Recompute[] = SEARCHED_RECOMPUTE(r.stack).filter(
    (m) => m === 'none' || (m === 'selective' ? s.hasAttention : s.blocks > 0),
  );
  const eps = s.experts === null ? [1] : EP_DEGREES.filter((e) => s.experts! % e === 0);
  const moe = s.experts !== null;
  const fp32UsesTf32 = r.fp32UsesTf32 ?? true;
  const headroomGb = r.memoryHeadroomGb ?? eff.memory.defaultMemoryHeadroomGb;
  // What a plan may use: the GPU's usable memory less the headroom kept free.
  const capacityGb = gpu.usableMemoryGb - headroomGb;
  const share = x.share ?? searchShare();
  // How the request's workload runs (stack, LoRA, layout, attention): the same for every step timed.
  const how = runOptionsOf(r);
  // The per-layer sums depend on the TP and EP degrees only (not on PP, ZeRO, recomputation or the GPU count).
  const sumsByT = shared(share.sums, `${gpu.id}/${precision}/${batch}`, () => new Map<number, LayerSums>());
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
          ...how,
        },
        eff,
      );
      sumsByT.set(t * 1024 + ep, v);
    }
    return v;
  };
  // (Built by assignment rather than with conditional spreads: the search builds one per step it
  // times, some hundred thousand per request, and a literal with spreads is copied property by
  // property; the request's run options, formed once, are assigned in one call.)
  const exec = (g: number, nodes: number, m: number, parallelism?: Parallelism): Execution => {
    const e: Execution = {
      precision,
      batchSizePerGpu: batch,
      gpusPerNode: g,
      nodes,
      gradAccumSteps: m,
      fp32UsesTf32,
      interNodeGbps: x.netGbps,
    };
    if (x.netTransport === 'TCP') e.interNodeTransport = 'TCP';
    if (parallelism) e.parallelism = parallelism;
    return Object.assign(e, how);
  };
  // The stack's memory rules and states (memory.ts stackMemory), as predict applies them.
  const stackMemoryOf = stackMemory(r.stack, precision, eff);
  // One slot per (TP, pipeline schedule, recomputation, ZeRO, EP) at the micro-batches of a search
  // without a fixed global batch (microBatchesOf), read by index: the search asks for memory and fit
  // millions of times.
  // pipelineSchedules lists each PP's plain schedule, then its one interleaved schedule if it has one:
  // a schedule's index is its PP's first plus one when it interleaves. (A table per (PP, chunks) cost
  // a 4,225-entry array per search, and a request builds thousands of searches.)
  const firstOfPp = new Int16Array(MAX_STAGES + 1);
  for (let i = schedules.length - 1; i >= 0; i--) firstOfPp[schedules[i].pp] = i;
  const scheduleOf = (pp: number, v: number) => firstOfPp[pp] + (v > 1 ? 1 : 0);
  const memberSlot = (
    t: number,
    pp: number,
    v: number,
    recompute: Recompute,
    zeroStage: number,
    ep: number,
  ) =>
    (((LOG2[t] * schedules.length + scheduleOf(pp, v)) * RECOMPUTE.length + RECOMPUTE_INDEX[recompute]) * 4 +
      zeroStage) *
      EP_DEGREES.length +
    LOG2[ep];
  const slots = TP_DEGREES.length * schedules.length * RECOMPUTE.length * 4 * EP_DEGREES.length;
  const layoutMemory = shared<LayoutMemory>(share.memory, `${precision}/${batch}`, () => ({
    index: new Map(),
    gb: [],
    byLayoutKey: new Map(),
  }));
  // The layout memory.ts reads, one object for the search, set before each call: shardedMemoryPerGpu
  // keeps no reference to it, and building it with its spreads per figure cost as much as the
  // figure's arithmetic. (EP 1 is written as expertParallel 1: memory.ts reads a missing EP as 1.)
  const layout: MemoryLayout = {
    tensorParallel: 1,
    pipelineParallel: 1,
    dataParallel: 1,
    zeroStage: 0,
    expertParallel: 1,
    recompute: 'none',
    microBatches: 1,
    virtualStages: 1,
    ...(r.attention ? { attention: r.attention } : {}),
    ...(r.frozenBase ? { frozenBase: true } : {}),
    ...(r.activationScales?.[precision] ? { activationScale: r.activationScales[precision] } : {}),
    ...stackMemoryOf.layout,
  };
  /** Memory per GPU of a layout (GB) from memory.ts. */
  const layoutMemoryGb = (
    t: number,
    pp: number,
    v: number,
    dp: number,
    zeroStage: ZeroStage,
    recompute: Recompute,
    m: number,
    ep: number,
  ): number => {
    layout.tensorParallel = t;
    layout.pipelineParallel = pp;
    layout.virtualStages = v;
    layout.dataParallel = dp;
    layout.zeroStage = zeroStage;
    layout.unshardedStage = unshardedStageOf(pp, zeroStage);
    layout.expertParallel = ep;
    layout.recompute = recompute;
    layout.microBatches = m;
    return shardedMemoryPerGpu(model, cost, precision, batch, layout, stackMemoryOf.eff).totalGb;
  };
  /** Memory per GPU of a layout (GB), computed once for the whole request. */
  const memoryGb = (
    t: number,
    pp: number,
    v: number,
    dp: number,
    zeroStage: ZeroStage,
    recompute: Recompute,
    m: number,
    ep = 1,
  ): number => {
    if (m === microBatchesOf(pp) && dp < WIDTH_KEYS) {
      const key = memberSlot(t, pp, v, recompute, zeroStage, ep) * WIDTH_KEYS + dp;
      const i = layoutMemory.index.get(key);
      if (i !== undefined) return layoutMemory.gb[i];
      const gb = layoutMemoryGb(t, pp, v, dp, zeroStage, recompute, m, ep);
      layoutMemory.index.set(key, layoutMemory.gb.length);
      layoutMemory.gb.push(gb);
      return gb;
    }
    const key = layoutKey(t, pp, v, recompute, m, zeroStage, ep);
    let byDp = layoutMemory.byLayoutKey.get(key);
    if (!byDp) layoutMemory.byLayoutKey.set(key, (byDp = new Map()));
    let gb = byDp.get(dp);
    if (gb === undefined) byDp.set(dp, (gb = layoutMemoryGb(t, pp, v, dp, zeroStage, recompute, m, ep)));
    return gb;
  };
  const fitsIn = (gb: number) => gb + headroomGb <= gpu.usableMemoryGb;
  const compute = (g: number, nodes: number, m: number, p: Parallelism) =>
    computeTime(model, cost, gpu, exec(g, nodes, m, p), eff, sums(p.tensorParallel, p.expertParallel));

  // A mixture-of-experts model's bound is read at the widest EP tried: its expert GEMMs are the
  // largest (the measured rate never falls with size), its experts' weights and states per GPU the
  // fewest, so no narrower EP is faster. Its all-to-alls grow with EP: the bound leaves them out.
  const boundLayout = (
    t: number,
    pp: number,
    v: number,
    zeroStage: ZeroStage,
    recompute: Recompute,
  ): Parallelism => parallelism(t, pp, v, zeroStage, recompute, moe ? eps[eps.length - 1] : 1);
  /** A configuration's GPU-count-free parts: its compute bound and where it fits (its optimizer terms on demand). */
  const configure = (
    t: number,
    pp: number,
    v: number,
    recompute: Recompute,
    m: number,
    optimizerTerms: Pick<Config, 'unshardedMs' | 'shardedMs'>,
  ): Config => {
    const c1 = compute(t * pp, 1, m, boundLayout(t, pp, v, 0, recompute));
    const computeMs =
      c1.forwardMs +
      c1.backwardMs +
      (c1.recomputeMs ?? 0) +
      (c1.tensorParallelMs ?? 0) +
      // (the bubble carries a stage's all-to-all)
      (moe ? 0 : (c1.pipelineBubbleMs ?? 0));
    const minDp: number[] = [];
    for (let z = 0; z <= 3; z++) {
      const zeroStage = z as ZeroStage;
      // A mixture-of-experts model's fit depends on its EP too: `consider` finds it per EP. Only
      // ZeRO-2's narrowest width at one micro-batch is read here, for the ZeRO-1 skip in `best`.
      // (No framework runs ZeRO-2 under a pipeline: it fits nowhere.)
      if ((moe && (z !== 2 || m !== 1)) || !zeroRunsWithPipeline(z, pp)) {
        minDp.push(Infinity);
        continue;
      }
      // Memory is A + B / DP for DP >= 2 (memory.ts): the narrowest DP that fits follows from DP = 2 and 4.
      if (z === 0 && fitsIn(memoryGb(t, pp, v, 1, 0, recompute, m))) {
        minDp.push(1);
        continue;
      }
      const m2 = memoryGb(t, pp, v, 2, zeroStage, recompute, m),
        m4 = memoryGb(t, pp, v, 4, zeroStage, recompute, m);
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
    return {
      t,
      pp,
      v,
      recompute,
      m,
      computeMs,
      key: (computeMs * t * pp) / m,
      ...optimizerTerms,
      minDp,
    };
  };
  /** The lower bound of a configuration at ZeRO stage z on DP GPUs; its optimizer terms read once. */
  const boundOf = (c: Config, z: number, dp: number) => {
    if (Number.isNaN(c.unshardedMs[z])) {
      // Optimizer and precision terms are U + S / DP (step.ts): read them at DP = 1 and 2.
      const p = boundLayout(c.t, c.pp, c.v, z as ZeroStage, c.recompute);
      const c1 = compute(c.t * c.pp, 1, c.m, p),
        c2 = compute(2 * c.t * c.pp, 1, c.m, p);
      const o1 = c1.optimizerMs + c1.mixedPrecisionMs,
        o2 = c2.optimizerMs + c2.mixedPrecisionMs;
      c.shardedMs[z] = 2 * (o1 - o2);
      c.unshardedMs[z] = 2 * o2 - o1;
    }
    return c.computeMs + c.unshardedMs[z] + c.shardedMs[z] / (z > 0 ? dp : 1) + eff.stepOverheadMs;
  };
  // Without a fixed global batch the configurations are the same for every layout: built once, sorted by bound.
  let configs: Config[] | undefined;
  const fixedConfigs = () =>
    (configs ??= shared(share.configs, `${gpu.id}/${precision}/${batch}`, () => {
      const all: Config[] = [];
      for (const t of tps) {
        // The optimizer and precision terms read neither the recomputation nor the chunks (step.ts):
        // one (TP, PP) reads them once for all its schedules and recomputations.
        const termsByPp = new Map<number, Pick<Config, 'unshardedMs' | 'shardedMs'>>();
        for (const { pp, v } of schedules) {
          let optimizerTerms = termsByPp.get(pp);
          if (!optimizerTerms)
            termsByPp.set(
              pp,
              (optimizerTerms = { unshardedMs: [NaN, NaN, NaN, NaN], shardedMs: [NaN, NaN, NaN, NaN] }),
            );
          for (const recompute of recomputes)
            all.push(configure(t, pp, v, recompute, microBatchesOf(pp), optimizerTerms));
        }
      }
      return all.sort((a, b) => a.key - b.key);
    }));

  /** Time per sample of plain data parallelism on this layout, to beat when it fits. */
  const plainMsPerSample = (g: number, nodes: number, m: number) => {
    const e = exec(g, nodes, m);
    const c = computeTime(model, cost, gpu, e, eff);
    return stepMs(c, parallelCommunicationTime(c, gpu, e, eff)) / (batch * m * g * nodes);
  };

  // State of the layout being searched, reused across layouts rather than allocated per layout.
  let g = 0,
    nodes = 0,
    gpus = 0,
    bestMsPerSample = Infinity;
  let best: { p: Parallelism; m: number; compute: ComputeTime; comm: Communication } | null = null;
  // A stage's work with its EP group in a node reads neither the network nor the GPUs per node, so
  // the GPU's offers share it; across nodes it is this search's own.
  const stageWorkInNode = shared(
    share.stageWork,
    `${gpu.id}/${precision}/${batch}`,
    () => new Map<number, number>(),
  );
  const stageWorkAcross = new Map<number, number>();
  const fitsAtSomeEp = (c: Config, zeroStage: ZeroStage, dp: number) => {
    for (const ep of eps) {
      if ((gpus / c.pp) % ep !== 0) continue;
      if (fitsAt(c.t, c.pp, c.v, c.recompute, c.m, zeroStage, ep, dp)) return true;
    }
    return false;
  };
  const fitted = new Uint8Array(TP_DEGREES.length * schedules.length * 4);
  // Where a layout fits, per (TP, PP, chunks, recomputation, micro-batches, ZeRO, EP): memory per GPU
  // never grows with the data-parallel width from DP = 2 on (memory.ts: every sharded term divides by
  // it, the rest does not depend on it), so the widest DP known not to fit and the narrowest known to
  // fit settle every width outside them without computing the memory again. A mixture-of-experts search
  // asks this for every EP of every layout, most of which do not fit on small GPUs.
  const mostGpus = Math.min(r.maxGpus ?? Infinity, r.maxNodes * Math.max(...r.gpusPerNodeChoices));
  const widestGb = shared(share.widestGb, `${precision}/${batch}`, () => new Float64Array(slots).fill(NaN));
  // A layout's fit reads only its memory (shared) and the GPU's memory size, so GPUs of one size share it.
  const fitBounds = shared(
    share.fitBounds,
    `${precision}/${batch}/${gpu.usableMemoryGb}`,
    () => new Array<FitBounds | undefined>(slots),
  );
  const fitsAt = (
    t: number,
    pp: number,
    v: number,
    recompute: Recompute,
    m: number,
    zeroStage: ZeroStage,
    ep: number,
    dp: number,
  ): boolean => {
    // A fixed global batch sets the micro-batches per width: each layout is asked at one DP only.
    if (m !== microBatchesOf(pp)) return fitsIn(memoryGb(t, pp, v, dp, zeroStage, recompute, m, ep));
    const slot = memberSlot(t, pp, v, recompute, zeroStage, ep);
    // Layouts come narrowest first: one that does not fit at the widest DP of the request fits at no
    // DP from 2 on, on this GPU or any with no more memory; that memory is read once for the request.
    const widest = Math.floor(mostGpus / (t * pp));
    const probed = dp >= 2 && widest > dp;
    if (probed) {
      let gb = widestGb[slot];
      // (Read from memory.ts directly: this array keeps it, the figures' Map need not.)
      if (Number.isNaN(gb))
        widestGb[slot] = gb = layoutMemoryGb(t, pp, v, widest, zeroStage, recompute, m, ep);
      if (!fitsIn(gb)) return false;
    }
    let b = fitBounds[slot];
    if (!b) fitBounds[slot] = b = { unfitUpTo: 1, fitsFrom: Infinity };
    if (probed && widest < b.fitsFrom) b.fitsFrom = widest;
    if (dp < 2) return (b.one ??= fitsIn(memoryGb(t, pp, v, dp, zeroStage, recompute, m, ep)));
    if (dp >= b.fitsFrom) return true;
    if (dp <= b.unfitUpTo) return false;
    if (fitsIn(memoryGb(t, pp, v, dp, zeroStage, recompute, m, ep))) b.fitsFrom = dp;
    else b.unfitUpTo = dp;
    return dp >= b.fitsFrom;
  };
  /**
   * Whether any layout of the search, plain data parallelism aside, fits on g GPUs per node x nodes.
   * Read at one chunk per stage: interleaving only adds micro-batches in flight (memory.ts), so a
   * schedule with chunks fits nowhere its plain 1F1B does not.
   */
  const someLayoutFits = (): boolean => {
    for (const t of tps) {
      if (g % t !== 0) continue;
      for (const pp of pps) {
        if (gpus % (t * pp) !== 0) continue;
        const dp = gpus / (t * pp),
          m = microBatchesOf(pp);
        for (const recompute of recomputes)
          for (let z = 0; z <= 3; z++) {
            if ((z > 0 && dp === 1) || !zeroRunsWithPipeline(z, pp)) continue;
            const zeroStage = z as ZeroStage;
            for (const ep of eps) {
              if ((gpus / pp) % ep !== 0) continue;
              if (t === 1 && pp === 1 && z === 0 && recompute === 'none' && ep === 1) continue;
              if (fitsAt(t, pp, 1, recompute, m, zeroStage, ep, dp)) return true;
            }
          }
      }
    }
    return false;
  };
  /**
   * someLayoutFits, settled from what the request's searches found before (SearchShare.fit) where
   * that says, asked and recorded where not. (The layouts are the same on every GPU: TP divides g,
   * which recommend.ts keeps within the GPU's GPUs per node.)
   */
  const fitsSomewhere = (): boolean => {
    const known = shared(share.fit, `${precision}/${g}/${nodes}`, () => ({ none: [], some: [] }));
    const memoryGb = gpu.usableMemoryGb;
    if (known.none.some((n) => n.batch <= batch && n.memoryGb >= memoryGb)) return false;
    if (known.some.some((n) => n.batch >= batch && n.memoryGb <= memoryGb)) return true;
    const some = someLayoutFits();
    (some ? known.some : known.none).push({ batch, memoryGb });
    return some;
  };
  const consider = (
    t: number,
    pp: number,
    v: number,
    recompute: Recompute,
    m: number,
    zeroStage: ZeroStage,
    lowerBoundMs: number,
    computeBoundMs: number,
  ) => {
    const group = (TP_DEGREES.indexOf(t) * schedules.length + scheduleOf(pp, v)) * 4 + zeroStage;
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
      // What a stage computes, its all-to-alls and its bubble do not depend on the node count or the
      // ZeRO stage, nor on the GPUs per node while the EP group fits in a node (step.ts: only the
      // all-to-all's inter-node share reads them): read once, with the optimizer's share of the
      // configuration's bound, they bound this EP from below on every layout that shares them.
      const stageWork = ep <= g ? stageWorkInNode : stageWorkAcross;
      // Keyed by a small integer without a fixed global batch (the layout's slot at ZeRO 0), else by
      // layoutKey, negated so that the two never meet; GPUs per node (at most 16) only across nodes.
      const across = ep <= g ? 0 : g;
      const workKey =
        m === microBatchesOf(pp)
          ? memberSlot(t, pp, v, recompute, 0, ep) * 32 + across
          : -(layoutKey(t, pp, v, recompute, m, 0, ep) * 32 + across) - 1;
      const work = stageWork.get(workKey);
      if (work !== undefined && (work + lowerBoundMs - computeBoundMs) / perSample >= bestMsPerSample)
        continue;
      // Whether it fits is cheap to know (fitsAt) and most layouts of a large model do not: asked
      // before the step. A layout that does not fit leaves its group open, as one that fits but is
      // slower settles it only through the plans already found: more recomputation can only be slower.
      if (!fitsAt(t, pp, v, recompute, m, zeroStage, ep, dp)) {
        pending = true;
        continue;
      }
      const p = parallelism(t, pp, v, zeroStage, recompute, ep);
      const e = exec(g, nodes, m, p);
      const c = computeTime(model, cost, gpu, e, eff, sums(t, ep));
      if (work === undefined) {
        const stage =
          c.forwardMs +
          c.backwardMs +
          (c.recomputeMs ?? 0) +
          (c.tensorParallelMs ?? 0) +
          (c.expertParallelMs ?? 0) +
          (c.pipelineBubbleMs ?? 0);
        stageWork.set(workKey, stage);
        // The bound holds for this plan too: no need to time its communication.
        if ((stage + lowerBoundMs - computeBoundMs) / perSample >= bestMsPerSample) continue;
      }
      const comm = parallelCommunicationTime(c, gpu, e, eff);
      // Plans differ in global batch (micro-batches x replicas): compare time per sample.
      const msPerSample = stepMs(c, comm) / perSample;
      if (msPerSample >= bestMsPerSample) continue;
      best = { p, m, compute: c, comm };
      bestMsPerSample = msPerSample;
    }
    if (!pending) fitted[group] = 1;
  };

  const fitsOn = (gpusPerNode: number, nodeCount: number) => {
    g = gpusPerNode;
    nodes = nodeCount;
    gpus = g * nodes;
    return fitsSomewhere();
  };
  /** The fewest nodes >= `from` on which a configuration may fit by its narrowest DP (Infinity: none). */
  const fewestByWidth = (gpusPerNode: number, from: number): number => {
    let fewest = Infinity;
    for (const c of fixedConfigs()) {
      if (gpusPerNode % c.t !== 0) continue;
      const split = c.t * c.pp;
      // Nodes must make the GPUs a multiple of TP x PP.
      const every = split / gcd(gpusPerNode, split);
      for (let z = 0; z <= 3; z++) {
        if (!Number.isFinite(c.minDp[z])) continue;
        if (split === 1 && z === 0 && c.recompute === 'none') continue; // plain data parallelism
        const dp = Math.max(c.minDp[z], z > 0 ? 2 : 1);
        const least = Math.max(from, Math.ceil((dp * split) / gpusPerNode));
        fewest = Math.min(fewest, Math.ceil(least / every) * every);
      }
    }
    return fewest;
  };
  return {
    fewestNodes(gpusPerNode, from, to) {
      let n = from;
      while (n <= to) {
        if (!moe) {
          n = fewestByWidth(gpusPerNode, n);
          if (n > to) return null;
        }
        if (fitsOn(gpusPerNode, n)) return n;
        n++;
      }
      return null;
    },
    best(gpusPerNode, nodeCount, plainFits) {
      const found = search(gpusPerNode, nodeCount);
      if (typeof found === 'string') return found;
      const gpus = gpusPerNode * nodeCount;
      if (plainFits) {
        const m = r.globalBatch !== undefined ? r.globalBatch / (batch * gpus) : 1;
        if (
          Number.isInteger(m) &&
          m >= 1 &&
          batch * m * gpus <= x.maxGlobalBatch &&
          plainMsPerSample(gpusPerNode, nodeCount, m) <= found.msPerSample
        )
          return 'OUT_OF_MEMORY';
      }
      const stepTimeMs = stepMs(found.compute, found.comm);
      const { tensorParallel: t, pipelineParallel: pp, zeroStage, recompute, expertParallel } = found.p;
      const v = found.p.virtualPipelineStages ?? 1;
      const memory = memoryGb(t, pp, v, gpus / (t * pp), zeroStage, recompute, found.m, expertParallel);
      return {
        gpuIndex: x.gpuIndex,
        precision,
        batch,
        accum: found.m,
        gpusPerNode,
        nodes: nodeCount,
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
        memoryGb: memory,
        compute: found.compute,
        commTotalMs: found.comm.totalMs,
        commExposedMs: found.comm.exposedMs,
        commWaitMs: found.comm.waitMs ?? 0,
        parallelism: found.p,
        commDataParallelMs: found.comm.dataParallelMs,
        commPipelineMs: found.comm.pipelineMs,
      };
    },
  };

  /** The fastest non-plain plan on g GPUs per node x nodes that fits, or why there is none. */
  function search(gpusPerNode: number, nodeCount: number): Searched {
    g = gpusPerNode;
    nodes = nodeCount;
    gpus = g * nodes;
    best = null;
    bestMsPerSample = Infinity;
    fitted.fill(0);
    let mismatch = false,
      overCap = false;
    if (r.globalBatch === undefined) {
      // Every plan must fit, and where nothing fits there is nothing to time (most layouts of a
      // large model on a small GPU).
      if (!fitsSomewhere()) return 'OUT_OF_MEMORY';
      // A step takes at least its compute (stage work x (micro-batches + PP - 1), step.ts), which
      // does not depend on the GPU count; per sample that bounds every configuration from below, so
      // they are tried in the order of that bound, and the search stops at the first bound above the
      // best plan found. Within a configuration the optimizer's share tightens the bound per ZeRO stage.
      for (const c of fixedConfigs()) {
        if (c.key / (batch * gpus) >= bestMsPerSample) break;
        if (g % c.t !== 0 || gpus % (c.t * c.pp) !== 0) continue;
        const dp = gpus / (c.t * c.pp);
        // A pipeline's micro-batches and a wide DP multiply the global batch: a layout above the cap
        // is passed over here, so that one within it (less DP, fewer stages) is found instead of the
        // whole GPU layout being turned away for its fastest layout's global batch.
        if (batch * c.m * dp > x.maxGlobalBatch) {
          overCap = true;
          continue;
        }
        for (let z = 0; z <= 3; z++) {
          if ((z > 0 && dp === 1) || (!moe && dp < c.minDp[z]) || !zeroRunsWithPipeline(z, c.pp)) continue;
          // With one micro-batch ZeRO-2 moves what ZeRO-1 moves and shards more: it fits wherever ZeRO-1 does and is never slower
          // (as FSDP runs it, SHARD_GRAD_OP, it hides the gather ZeRO-1 exposes after the step).
          if (z === 1 && c.m === 1 && dp >= c.minDp[2]) continue;
          // A mixture-of-experts layout that fits at no EP has nothing to consider: its group stays
          // open for more recomputation, which is what `consider` would leave it as.
          if (moe && !fitsAtSomeEp(c, z as ZeroStage, dp)) continue;
          consider(c.t, c.pp, c.v, c.recompute, c.m, z as ZeroStage, boundOf(c, z, dp), c.computeMs);
        }
      }
    } else {
      // A fixed global batch sets the micro-batches per layout: no shared order, try them all.
      for (const t of tps)
        for (const { pp, v } of schedules) {
          if (g % t !== 0 || gpus % (t * pp) !== 0) continue;
          const dp = gpus / (t * pp);
          const m = r.globalBatch / (batch * dp);
          if (!Number.isInteger(m) || m < 1) {
            mismatch = true;
            continue;
          }
          // Megatron-Core's interleaved schedule runs the micro-batches in groups of PP.
          if (v > 1 && m % pp !== 0) continue;
          for (const recompute of recomputes)
            for (let z = 0; z <= 3; z++)
              if (!(z > 0 && dp === 1) && zeroRunsWithPipeline(z, pp))
                consider(t, pp, v, recompute, m, z as ZeroStage, 0, 0);
        }
    }
    const found = best as { p: Parallelism; m: number; compute: ComputeTime; comm: Communication } | null;
    // Something fits (fitsSomewhere), and every configuration within the cap was tried while none was
    // found: what fits is above the cap.
    if (!found)
      return mismatch ? 'GLOBAL_BATCH_MISMATCH' : overCap ? 'GLOBAL_BATCH_TOO_LARGE' : 'OUT_OF_MEMORY';
    return { ...found, msPerSample: bestMsPerSample };
  }
}
