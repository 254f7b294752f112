// Which predictor the coupled planners (fleet, procurement) time their candidates with. They ask
// `recommend` for a job's configurations on each GPU type, and re-predict every configuration of a
// plan to verify it; both go through one CandidatePredictor, so a plan is timed and verified by the
// same predictor. The service gives the corrected one (the learned correction with a user's recorded
// runs, as `recommend` answers); without one, or as asked, the analytical estimate answers.
import { predictCorrected } from '../predictor/corrected.js';
import type { UserEvidence } from '../predictor/learned/calibration.js';
import type { MeasuredSet } from '../predictor/learned/evidence.js';
import { DEFAULT_SOFTWARE } from '../predictor/learned/features.js';
import type { LearnedPredictor } from '../predictor/learned/model.js';
import {
  activationScalesFor,
  withMeasuredActivations,
  type MemoryCalibrations,
} from '../predictor/memory-calibration.js';
import { predict } from '../predictor/predict.js';
import type { Efficiency } from '../predictor/step.js';
import { recommendCorrected } from './recommend-corrected.js';
import { recommend } from './recommend.js';
import type { CandidatePredictor, CandidateSearch, RecommendRequest } from './search-types.js';

/** A search with a user's runs: counted as measurements (`measured`), their peaks sizing the model's memory. */
const withUserRuns = (
  r: RecommendRequest,
  memory: MemoryCalibrations | undefined,
  measured: MeasuredSet | undefined,
): RecommendRequest => ({
  ...r,
  ...(measured ? { measured } : {}),
  activationScales: activationScalesFor(memory, r.model.id, r.precisions, r.stack),
});

/**
 * The roofline estimate alone; `why` says why (no learned model, or ANALYTICAL asked). As recommend
 * with predictor ANALYTICAL, a user's recorded runs still count as measurements and their peaks
 * still size each model's memory: neither is the learned correction's.
 */
export function analyticalPredictor(
  eff: Efficiency,
  why: string,
  memory?: MemoryCalibrations,
  measured?: MeasuredSet,
): CandidatePredictor {
  return {
    name: 'analytical',
    note: `configurations timed by the analytical estimate alone: ${why}`,
    search: (r) => Promise.resolve(recommend(withUserRuns(r, memory, measured), eff)),
    predict: (req) => Promise.resolve(predict(withMeasuredActivations(req, memory).req, eff)),
  };
}

/**
 * The learned correction of the analytical estimate, with a user's recorded runs as evidence and
 * calibration (their peaks size each model's memory too): what `recommend` and `predict` answer.
 */
export function correctedPredictor(
  learned: LearnedPredictor,
  eff: Efficiency,
  user?: UserEvidence,
  /** What counts as measured (the seeds' rows and the user's runs); default the seeds'. */
  measured?: MeasuredSet,
): CandidatePredictor {
  const state = { predictor: learned, reason: '' };
  return {
    name: learned.name,
    note: `configurations timed by the learned correction of the analytical estimate (seeds/PREDICTOR_CARD.md)${user ? `, with ${user.runs.all.length} of your recorded runs as evidence (each configuration's evidence says which moved it)` : ''}`,
    search: (r) =>
      recommendCorrected(withUserRuns(r, user?.memory, measured), state, eff, DEFAULT_SOFTWARE, user),
    // predictCorrected sizes memory with the same runs' peaks (withMeasuredActivations) as the search.
    predict: (req) => predictCorrected(req, state, eff, DEFAULT_SOFTWARE, user),
  };
}

/** The request's predictor, or the analytical estimate with its constants when it names none. */
export const predictorOf = (r: CandidateSearch): CandidatePredictor =>
  r.predictor ?? analyticalPredictor(r.efficiency, 'the request named no other predictor');
