// recommend with the learned correction applied: the analytical search finds every candidate that
// fits, batched onnxruntime runs correct the step times of those the answer can depend on
// (optimizer/pruned.ts), and only then do the deadline (optionally at the P90 bound) and the budget
// apply. Without a learned model, or with predictor ANALYTICAL, the analytical estimate answers
// and the result says why.
import { activationScalesWords } from '../predictor/memory-calibration.js';
import { DEFAULT_SOFTWARE, type Software } from '../predictor/learned/features.js';
import type { LearnedState } from '../predictor/learned/model.js';
import { stackEvidence } from '../predictor/software.js';
import type { UserEvidence } from '../predictor/learned/calibration.js';
import type { Efficiency } from '../predictor/step.js';
import { correctAndRank, type Pruning } from './pruned.js';
import { rankCandidates, searchCandidatesYielding } from './recommend.js';
import { SearchTimeout, type Recommendation, type RecommendRequest } from './search-types.js';

export interface CorrectedRecommendation extends Recommendation {
  /** Which predictor ranked the plans, and why the learned one did not if it did not. */
  predictor: string;
  predictorNote: string;
}

/** LEARNED: the analytical estimate with the learned correction (default); ANALYTICAL: the roofline alone. */
export type PredictorChoice = 'LEARNED' | 'ANALYTICAL';

export async function recommendCorrected(
  r: RecommendRequest,
  learned: LearnedState,
  eff: Efficiency,
  software: Software = DEFAULT_SOFTWARE,
  /** A user's recorded runs: evidence and calibration for every candidate. */
  user?: UserEvidence,
  choice: PredictorChoice = 'LEARNED',
  /** Correct only the candidates the answer can depend on (optimizer/pruned.ts), or all of them. */
  prune: Pruning = 'auto',
): Promise<CorrectedRecommendation> {
  // The time budget covers the correction too: under load it can take longer than the search, and an
  // answer after the budget is one the client may have given up on.
  const stopAt = r.timeBudgetMs === undefined ? Infinity : performance.now() + r.timeBudgetMs;
  const search = await searchCandidatesYielding(r, eff);
  const checkBudget = () => {
    if (performance.now() >= stopAt) throw new SearchTimeout(r.timeBudgetMs!, search.size);
  };
  if (choice === 'ANALYTICAL')
    return {
      ...rankCandidates(r, search),
      predictor: 'analytical',
      predictorNote: 'the analytical estimate alone, as asked (predictor: ANALYTICAL)',
    };
  if (!learned.predictor)
    return { ...rankCandidates(r, search), predictor: 'analytical', predictorNote: learned.reason };
  checkBudget();
  const { recommendation } = await correctAndRank(
    r,
    search,
    learned.predictor,
    software,
    prune,
    user,
    checkBudget,
  );
  return {
    ...recommendation,
    predictor: learned.predictor.name,
    predictorNote: `learned correction of the analytical estimate (seeds/PREDICTOR_CARD.md); ${stackEvidence(r.stack)}${activationScalesWords(r.activationScales)}`,
  };
}
