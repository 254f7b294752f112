// recommend with the learned correction applied: the analytical search finds every candidate that
// fits, one batched onnxruntime call corrects all their step times, and only then do the deadline
// (optionally at the P90 bound) and the budget apply. Without a learned model the analytical
// estimate answers and the result says why.
import { DEFAULT_SOFTWARE, modelFeaturesOf, type Software } from '../predictor/learned/features.js';
import type { CorrectionInput, LearnedState } from '../predictor/learned/model.js';
import { DEFAULT_STACK, stackEffects, stackEvidence } from '../predictor/software.js';
import type { UserEvidence } from '../predictor/learned/calibration.js';
import { combine, type Efficiency } from '../predictor/step.js';
import { rankCandidates, searchCandidates } from './recommend.js';
import type { Recommendation, RecommendRequest } from './search-types.js';

export interface CorrectedRecommendation extends Recommendation {
  /** Which predictor ranked the plans, and why the learned one did not if it did not. */
  predictor: string;
  predictorNote: string;
}

export async function recommendCorrected(
  r: RecommendRequest,
  learned: LearnedState,
  eff: Efficiency,
  software: Software = DEFAULT_SOFTWARE,
  /** A user's recorded runs: evidence and calibration for every candidate. */
  user?: UserEvidence,
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
  const k = await learned.predictor.correct(items, user);
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
