// A prediction with the learned correction applied (one configuration, or measurement rows): the
// analytical estimate scaled by the learned model, with its P10-P90 interval and the evidence
// behind it. Without a learned model the analytical estimate answers and the result says why.
import { DEFAULT_SOFTWARE, frameworkOf, modelFeaturesOf, type Software } from './learned/features.js';
import type { CorrectionInput, LearnedState, Regime } from './learned/model.js';
import type { UserEvidence } from './learned/calibration.js';
import type { EvidenceLevel } from './learned/evidence.js';
import type { RowPrediction } from './measured.js';
import { costOf, predict, utilizationAt, type Prediction, type PredictRequest } from './predict.js';
import { convolutionLayout, fusedAttention, scaleBreakdown, type Efficiency } from './step.js';
import { getGpu } from '../seeds/catalog.js';
import { fsdpGatherType, POLICIES, storagePolicy } from './precision.js';
import { DEFAULT_STACK, isStockLoop, stackEffects, stackEvidence } from './software.js';
import { parallelStructure } from './parallel.js';
import { withMeasuredActivations } from './memory-calibration.js';
import type { Utilization } from './utilization.js';
import { aboveBestPublishedWords } from './published-mfu.js';

/**
 * On a stack that runs the model's own attention (stock PyTorch), which of the two ways the
 * estimate runs its cores: the benchmark rows behind the stack's constants wrote their scores to
 * memory, a model's code may not. A stack with its own fused kernel says nothing (fusedAttention).
 */
function attentionEvidence(req: PredictRequest, eff: Efficiency): string {
  const cost = costOf(req.model);
  if (stackEffects(req.stack ?? DEFAULT_STACK).flashAttention) return '';
  if (!parallelStructure(cost).hasAttention) return '';
  return fusedAttention(req, cost, eff)
    ? "; attention as one fused kernel (PyTorch's scaled_dot_product_attention, which Hugging Face, torchvision and torchtitan call; attention EAGER writes the scores to memory)"
    : "; attention with its scores written to memory, as this model's code runs it (attention FUSED for one fused kernel)";
}

/**
 * How the estimate runs a ZeRO stage, which frameworks do differently (seeds/software.json
 * zeroStage1, zeroStage2): what it moves, and when, follows from which.
 */
function shardingEvidence(req: PredictRequest): string {
  const par = req.parallelism;
  const z = par?.zeroStage ?? 0;
  const gpus = req.gpusPerNode * req.nodes;
  if (!par || z === 0 || gpus <= par.tensorParallel * par.pipelineParallel) return '';
  const fx = stackEffects(req.stack ?? DEFAULT_STACK);
  const policy = storagePolicy(req.precision, isStockLoop(req.stack), par.masterWeights);
  const gathered = fsdpGatherType(policy);
  const halves =
    gathered !== policy.weights
      ? `, gathering ${gathered} copies of the fp32 shards (its mixed precision)`
      : '';
  if (z === 1)
    return fx.zeroStage1 === 'ZERO_REDUNDANCY_OPTIMIZER'
      ? "; ZeRO-1 as PyTorch's ZeroRedundancyOptimizer over DDP: the gradients all-reduced behind backward, each GPU's updated shard broadcast after the step"
      : "; ZeRO-1 as Megatron-Core's distributed optimizer: the gradients reduce-scattered, the updated shards all-gathered after the step";
  if (z === 2)
    return fx.zeroStage2 === 'SHARD_GRAD_OP'
      ? `; ZeRO-2 as FSDP's SHARD_GRAD_OP: the weights sharded, gathered before each micro-batch's forward and kept through its backward${halves}`
      : "; ZeRO-2 as DeepSpeed's stage 2: the whole weights on every GPU, the gradients reduce-scattered, the updated shards all-gathered after the step";
  return par.pipelineParallel > 1
    ? `; ZeRO-3 as torchtitan runs FSDP under a pipeline: each stage's weights gathered once a step and kept${halves}`
    : `; ZeRO-3 as FSDP's FULL_SHARD: the weights gathered before each micro-batch's forward and again before its backward${halves}`;
}

/**
 * Where the step stores the mode as a stock loop does rather than as the precision table's recipe
 * (precision.ts storagePolicy decides it), that it did: a stock loop's fp32 FP8 model moves twice
 * the gradient bytes of Megatron-Core's recipe.
 */
function storageEvidence(req: PredictRequest): string {
  const stored = storagePolicy(req.precision, isStockLoop(req.stack), req.parallelism?.masterWeights);
  if (stored === POLICIES[req.precision]) return '';
  return `; ${req.precision} over an fp32 model, as a stock PyTorch loop runs Transformer Engine (fp32 weights and gradient reductions, no master copy; parallelism.masterWeights for bf16 weights beside a master copy, Megatron-Core's recipe)`;
}

/** What a LoRA estimate assumes and leaves out: said in its evidence and in the notes of a LoRA search. */
export const LORA_LEFT_OUT =
  "no weight gradients, optimizer step or gradient reduction for the base; the adapters' own work left out";

export interface CorrectedPrediction extends Prediction, Utilization {
  analyticalStepTimeMs: number;
  stepTimeMsP10: number;
  stepTimeMsP90: number;
  totalHoursP90: number | null;
  predictor: string;
  /** measured / calibrated / unmeasured, and by what. */
  evidence: string;
  /** null when only the analytical estimate answered. */
  evidenceLevel: EvidenceLevel | null;
  /** The user's recorded runs that moved this prediction. */
  calibrationRuns: number;
  /** What besides the GPU holds the step (learned/model.ts regimesOf); empty for the analytical estimate alone. */
  boundBy: Regime[];
  /** The model is measured, but never in this precision (learned/model.ts unmeasuredPrecision); false for the analytical estimate alone. */
  precisionUnmeasured: boolean;
}

export async function predictCorrected(
  req: PredictRequest,
  learned: LearnedState,
  eff: Efficiency,
  software: Software = DEFAULT_SOFTWARE,
  /** A user's recorded runs: evidence and calibration (learned/calibration.ts). */
  user?: UserEvidence,
): Promise<CorrectedPrediction> {
  // The model's activations as the user's runs measured them (memory-calibration.ts).
  const { req: sized, memory } = withMeasuredActivations(req, user?.memory);
  const p = predict(sized, eff);
  const memoryEvidence = memory
    ? `; memory: activations ${memory.scale.toFixed(2)}x what trainplan counts, from the peak memory of ${memory.runs} of your runs of this model in ${req.precision}`
    : '';
  const base = {
    ...p,
    ...utilizationAt(p, req.gpu),
    analyticalStepTimeMs: p.stepTimeMs,
    stepTimeMsP10: p.stepTimeMs,
    stepTimeMsP90: p.stepTimeMs,
    totalHoursP90: p.totalHours,
  };
  if (!learned.predictor)
    return {
      ...base,
      predictor: 'analytical',
      evidence: `${learned.reason}${memoryEvidence}`,
      evidenceLevel: null,
      calibrationRuns: 0,
      boundBy: [],
      precisionUnmeasured: false,
    };
  const k = await learned.predictor.correct([correctionInputOf(req, p, software)], user);
  const scale = k.mid[0];
  const stepTimeMs = p.stepTimeMs * scale;
  const throughput = p.throughput / scale;
  const totalHours = p.totalHours === null ? null : p.totalHours * scale;
  const breakdown = scaleBreakdown(p.breakdown, scale);
  // Model FLOPs over the step time the answer gives: the corrected one.
  const used = utilizationAt(p, req.gpu, stepTimeMs);
  const overPublished = aboveBestPublishedWords(used, req.gpu.id, p.dominantMath);
  return {
    ...p,
    ...used,
    stepTimeMs,
    throughput,
    breakdown,
    totalHours,
    costUsd: p.costUsd === null ? null : p.costUsd * scale,
    analyticalStepTimeMs: p.stepTimeMs,
    stepTimeMsP10: p.stepTimeMs * k.lo[0],
    stepTimeMsP90: p.stepTimeMs * k.hi[0],
    totalHoursP90: p.totalHours === null ? null : p.totalHours * k.hi[0],
    predictor: learned.predictor.name,
    evidence: `${k.caseOf(0)}; ${stackEvidence(req.stack)}${storageEvidence(req)}${shardingEvidence(req)}${attentionEvidence(req, eff)}${layoutEvidence(req, p)}${req.frozenBase ? `; LoRA on a frozen base: ${LORA_LEFT_OUT}` : ''}${memoryEvidence}${overPublished ? `; this ${overPublished}` : ''}`,
    evidenceLevel: k.levels[0],
    calibrationRuns: k.runs[0],
    boundBy: k.boundBy[0],
    precisionUnmeasured: k.precisionUnmeasured[0],
  };
}

/** What the learned correction reads of one analytical prediction (its features and breakdown). */
export function correctionInputOf(
  req: Pick<PredictRequest, 'model' | 'gpu'>,
  p: Prediction,
  software: Software,
): CorrectionInput {
  return {
    modelId: req.model.id,
    model: modelFeaturesOf(req.model),
    gpu: req.gpu,
    exec: p.execution,
    stepMs: p.stepTimeMs,
    breakdown: p.breakdown,
    dominantMath: p.dominantMath,
    software,
  };
}

/** What `evidence` says of the convolutions' memory format, where it changes the estimate. */
function layoutEvidence(req: PredictRequest, p: Prediction): string {
  const layout = convolutionLayout(costOf(req.model), req.gpu, p.execution);
  if (layout === 'NCHW')
    return "; 16-bit convolutions on NCHW activations, PyTorch's default memory format: slower than channels-last (set channelsLast if the code converts to torch.channels_last)";
  return layout ? '; 16-bit convolutions on channels-last (NHWC) activations' : '';
}

/**
 * Learned corrections for measurement-layout rows (predict-csv): each row's framework and XLA flag
 * are its software. A row's own (model, GPU, precision) never counts as evidence for it, so
 * predicting the seeds' own rows shows held-out behaviour, not a lookup.
 */
export async function correctRows(
  rows: RowPrediction[],
  learned: LearnedState,
): Promise<{ scale: number; lo: number; hi: number; evidence: string }[]> {
  const none = rows.map(() => ({ scale: 1, lo: 1, hi: 1, evidence: learned.reason }));
  if (!learned.predictor) return none;
  const items: CorrectionInput[] = [];
  const at: number[] = [];
  rows.forEach((r, i) => {
    const p = r.prediction;
    if (!p || !r.model) return;
    const gpu = getGpu(p.gpuId)!;
    items.push(
      correctionInputOf({ model: r.model, gpu }, p, {
        framework: frameworkOf(r.row.framework ?? ''),
        xla: (r.row.flags ?? '').includes('xla'),
      }),
    );
    at.push(i);
  });
  const k = await learned.predictor.correct(items);
  at.forEach((i, j) => {
    none[i] = { scale: k.mid[j], lo: k.lo[j], hi: k.hi[j], evidence: k.caseOf(j) };
  });
  return none;
}
