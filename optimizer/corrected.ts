// recommend and predict with the learned correction applied: the analytical search finds every
// candidate that fits, one batched onnxruntime call corrects all their step times, and only then do
// the deadline (optionally at the P90 bound) and the budget apply. Without a learned model the
// analytical estimate answers and the result says why.
import { predict, type Prediction, type PredictRequest } from '../predictor/predict.js';
import {
  DEFAULT_SOFTWARE,
  frameworkOf,
  modelFeaturesOf,
  type Software,
} from '../predictor/learned/features.js';
import type { RowPrediction } from '../predictor/measured.js';
import { getGpu } from '../seeds/catalog.js';
import { DEFAULT_STACK, stackEffects, stackEvidence } from '../predictor/software.js';
import type { CorrectionInput, LearnedState } from '../predictor/learned/model.js';
import { combine, defaultEfficiency, scaleBreakdown, type Efficiency } from '../predictor/step.js';
import { rankCandidates, searchCandidates, type Recommendation, type RecommendRequest } from './recommend.js';

export interface CorrectedRecommendation extends Recommendation {
  /** Which predictor ranked the plans, and why the learned one did not if it did not. */
  predictor: string;
  predictorNote: string;
}

export async function recommendCorrected(
  r: RecommendRequest,
  learned: LearnedState,
  software: Software = DEFAULT_SOFTWARE,
  eff: Efficiency = defaultEfficiency(),
): Promise<CorrectedRecommendation> {
  const search = searchCandidates(r, eff);
  if (!learned.predictor)
    return { ...rankCandidates(r, search), predictor: 'analytical', predictorNote: learned.reason };
  if (r.stack && r.stack !== DEFAULT_STACK) {
    // A tuned stack: the analytical estimate, with the stack's held-out LLM error as the interval.
    const n = search.candidates.length;
    const iv = stackEffects(r.stack).heldOutLogError;
    const scale = {
      mid: new Float64Array(n).fill(1),
      lo: new Float64Array(n).fill(iv ? Math.exp(iv.q10) : 1),
      hi: new Float64Array(n).fill(iv ? Math.exp(iv.q90) : 1),
      cases: new Array<string>(n).fill(stackEvidence(r.stack)),
      predictor: 'analytical',
    };
    return {
      ...rankCandidates(r, search, scale),
      predictor: 'analytical',
      predictorNote: stackEvidence(r.stack),
    };
  }
  const m = modelFeaturesOf(r.model);
  const items: CorrectionInput[] = search.candidates.map((c) => {
    const gpu = r.gpus[c.gpuIndex];
    // The learned model was trained on data-parallel runs only: on sharded or tensor/pipeline-
    // parallel layouts it extrapolates from the same features (the breakdown carries the split's costs).
    const exec = {
      precision: c.precision,
      batchSizePerGpu: c.batch,
      gpusPerNode: c.gpusPerNode,
      nodes: c.nodes,
      gradAccumSteps: c.accum,
      fp32UsesTf32: r.fp32UsesTf32 ?? true,
      interNodeGbps: r.interNodeGbps(gpu),
      parallelism: c.parallelism,
    };
    const step = combine(
      c.compute,
      {
        totalMs: c.commTotalMs,
        exposedMs: c.commExposedMs,
        dataParallelMs: c.commDataParallelMs,
        pipelineMs: c.commPipelineMs,
      },
      exec,
    );
    return {
      modelId: r.model.id,
      model: m,
      gpu,
      exec,
      stepMs: c.analyticalStepMs,
      breakdown: step.breakdown,
      dominantMath: c.compute.dominantMath,
      software,
    };
  });
  const k = await learned.predictor.correct(items);
  const name = learned.predictor.name;
  return {
    ...rankCandidates(r, search, {
      mid: k.mid,
      lo: k.lo,
      hi: k.hi,
      cases: k.cases.map((c) => `${c}; ${stackEvidence()}`),
      predictor: name,
    }),
    predictor: name,
    predictorNote: 'learned correction of the analytical estimate (seeds/PREDICTOR_CARD.md)',
  };
}

export interface CorrectedPrediction extends Prediction {
  analyticalStepTimeMs: number;
  stepTimeMsP10: number;
  stepTimeMsP90: number;
  totalHoursP90: number | null;
  predictor: string;
  /** measured / calibrated / unmeasured, and by what. */
  evidence: string;
}

export async function predictCorrected(
  req: PredictRequest,
  learned: LearnedState,
  software: Software = DEFAULT_SOFTWARE,
  eff: Efficiency = defaultEfficiency(),
): Promise<CorrectedPrediction> {
  const p = predict(req, eff);
  const base = {
    ...p,
    analyticalStepTimeMs: p.stepTimeMs,
    stepTimeMsP10: p.stepTimeMs,
    stepTimeMsP90: p.stepTimeMs,
    totalHoursP90: p.totalHours,
  };
  if (!learned.predictor) return { ...base, predictor: 'analytical', evidence: learned.reason };
  if (req.stack && req.stack !== DEFAULT_STACK) {
    // No stock-framework correction for a tuned stack: the interval is the stack's held-out LLM error.
    const iv = stackEffects(req.stack).heldOutLogError;
    const lo = iv ? Math.exp(iv.q10) : 1,
      hi = iv ? Math.exp(iv.q90) : 1;
    return {
      ...base,
      stepTimeMsP10: p.stepTimeMs * lo,
      stepTimeMsP90: p.stepTimeMs * hi,
      totalHoursP90: p.totalHours === null ? null : p.totalHours * hi,
      predictor: 'analytical',
      evidence: stackEvidence(req.stack),
    };
  }
  const m = modelFeaturesOf(req.model);
  const k = await learned.predictor.correct([
    {
      modelId: req.model.id,
      model: m,
      gpu: req.gpu,
      exec: p.execution,
      stepMs: p.stepTimeMs,
      breakdown: p.breakdown,
      dominantMath: p.dominantMath,
      software,
    },
  ]);
  const scale = k.mid[0];
  const stepTimeMs = p.stepTimeMs * scale;
  const throughput = p.throughput / scale;
  const totalHours = p.totalHours === null ? null : p.totalHours * scale;
  const breakdown = scaleBreakdown(p.breakdown, scale);
  return {
    ...p,
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
    evidence: `${k.cases[0]}; ${stackEvidence(req.stack)}`,
  };
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
    items.push({
      modelId: r.model.id,
      model: modelFeaturesOf(r.model),
      gpu,
      exec: p.execution,
      stepMs: p.stepTimeMs,
      breakdown: p.breakdown,
      dominantMath: p.dominantMath,
      software: { framework: frameworkOf(r.row.framework ?? ''), xla: (r.row.flags ?? '').includes('xla') },
    });
    at.push(i);
  });
  const k = await learned.predictor.correct(items);
  at.forEach((i, j) => {
    none[i] = { scale: k.mid[j], lo: k.lo[j], hi: k.hi[j], evidence: k.cases[j] };
  });
  return none;
}
