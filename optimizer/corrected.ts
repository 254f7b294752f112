// recommend and predict with the learned correction applied: the analytical search finds every
// candidate that fits, one batched onnxruntime call corrects all their step times, and only then do
// the deadline (optionally at the P90 bound) and the budget apply. Without a learned model the
// analytical estimate answers and the result says why.
import { costOf, predict, type Prediction, type PredictRequest } from '../predictor/predict.js';
import { DEFAULT_SOFTWARE, modelFeatures, type Software } from '../predictor/learned/features.js';
import type { CorrectionInput, LearnedState } from '../predictor/learned/model.js';
import { combine, defaultEfficiency, type Efficiency } from '../predictor/step.js';
import { rankCandidates, searchCandidates, type Recommendation, type RecommendRequest } from './recommend.js';

export interface CorrectedRecommendation extends Recommendation {
  /** Which predictor ranked the plans, and why the learned one did not if it did not. */
  predictor: string;
  predictorNote: string;
}

export async function recommendCorrected(r: RecommendRequest, learned: LearnedState, software: Software = DEFAULT_SOFTWARE, eff: Efficiency = defaultEfficiency()): Promise<CorrectedRecommendation> {
  const search = searchCandidates(r, eff);
  if (!learned.predictor) return { ...rankCandidates(r, search), predictor: 'analytical', predictorNote: learned.reason };
  const m = modelFeatures(r.model, costOf(r.model));
  const items: CorrectionInput[] = search.candidates.map((c) => {
    const gpu = r.gpus[c.gpuIndex];
    const exec = { precision: c.precision, batchSizePerGpu: c.batch, gpusPerNode: c.gpusPerNode, nodes: c.nodes, gradAccumSteps: c.accum, fp32UsesTf32: r.fp32UsesTf32 ?? true, interNodeGbps: r.interNodeGbps(gpu) };
    const step = combine(c.compute, { totalMs: c.commTotalMs, exposedMs: c.commExposedMs }, exec);
    return { modelId: r.model.id, model: m, gpu, exec, stepMs: c.analyticalStepMs, breakdown: step.breakdown, dominantMath: c.compute.dominantMath, software };
  });
  const k = await learned.predictor.correct(items);
  const name = learned.predictor.name;
  return { ...rankCandidates(r, search, { mid: k.mid, lo: k.lo, hi: k.hi, predictor: name }), predictor: name, predictorNote: 'learned correction of the analytical estimate (seeds/PREDICTOR_CARD.md)' };
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

export async function predictCorrected(req: PredictRequest, learned: LearnedState, software: Software = DEFAULT_SOFTWARE, eff: Efficiency = defaultEfficiency()): Promise<CorrectedPrediction> {
  const p = predict(req, eff);
  const base = { ...p, analyticalStepTimeMs: p.stepTimeMs, stepTimeMsP10: p.stepTimeMs, stepTimeMsP90: p.stepTimeMs, totalHoursP90: p.totalHours };
  if (!learned.predictor) return { ...base, predictor: 'analytical', evidence: learned.reason };
  const m = modelFeatures(req.model, costOf(req.model));
  const k = await learned.predictor.correct([{ modelId: req.model.id, model: m, gpu: req.gpu, exec: p.execution, stepMs: p.stepTimeMs, breakdown: p.breakdown, dominantMath: p.dominantMath, software }]);
  const scale = k.mid[0];
  const stepTimeMs = p.stepTimeMs * scale;
  const throughput = p.throughput / scale;
  const totalHours = p.totalHours === null ? null : p.totalHours * scale;
  const breakdown = Object.fromEntries(Object.entries(p.breakdown).map(([name, ms]) => [name, ms * scale])) as unknown as Prediction['breakdown'];
  return {
    ...p, stepTimeMs, throughput, breakdown, totalHours,
    costUsd: p.costUsd === null ? null : p.costUsd * scale,
    analyticalStepTimeMs: p.stepTimeMs,
    stepTimeMsP10: p.stepTimeMs * k.lo[0],
    stepTimeMsP90: p.stepTimeMs * k.hi[0],
    totalHoursP90: p.totalHours === null ? null : p.totalHours * k.hi[0],
    predictor: learned.predictor.name,
    evidence: k.cases[0],
  };
}
