// Refitting the learned correction on the shipped rows plus a user's recorded runs (`trainplan
// calibrate refit`): the shipped model's final fit (cli/train-predictor.ts: fit(trainingExamples(),
// true, PARAMS)) with the runs appended as examples built by the same `examples()`, so the same
// features, evidence, trees and hyper-parameters. The runs' evidence is kept apart from the shipped
// rows' in the meta: the model still knows which GPUs the shipped data measured (its intervals and
// evidence level do not narrow because a user timed a GPU), and the service can leave the runs out of
// the user's evidence it merges in (they are in the model's index already).
import { createHash } from 'node:crypto';
import { EvidenceIndex } from './evidence.js';
import { featureNames, FEATURE_VERSION } from './features.js';
import type { LearnedMeta, RefitInfo } from './model.js';
import { ensembleToOnnx } from './onnx.js';
import { evidenceRows, fit, PARAMS, type Example, type TrainParams } from './train.js';

export const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

/**
 * The refitted trees and evidence: the shipped final fit with the runs appended after the shipped
 * rows (so the shipped rows draw the same evidence dropout and subsample stream positions as in the
 * shipped fit). bench/refit.ts measures this same function.
 */
export function refitModel(shipped: Example[], runs: Example[], params: TrainParams = PARAMS) {
  return fit([...shipped, ...runs], true, params);
}

export interface Refit {
  onnx: Uint8Array;
  meta: LearnedMeta & { refit: RefitInfo };
}

/**
 * The refitted model and its meta. `shippedMeta`: the shipped model's meta, whose intervals the
 * refit keeps (they are not re-measured: see bench/refit.ts for what a refit changes). `params`:
 * the shipped hyper-parameters; only tests pass fewer trees.
 */
export function refitCorrection(
  shipped: Example[],
  runs: Example[],
  info: Omit<RefitInfo, 'runEvidence' | 'modelSha256' | 'shippedRows'>,
  shippedMeta: LearnedMeta,
  params: TrainParams = PARAMS,
): Refit {
  const model = refitModel(shipped, runs, params);
  const onnx = ensembleToOnnx(
    model.ensemble,
    `trainplan learned correction refitted on ${shipped.length} shipped rows and ${runs.length} recorded runs; feature version ${FEATURE_VERSION}`,
  );
  return {
    onnx,
    meta: {
      name: `${shippedMeta.name}-refit`,
      featureVersion: FEATURE_VERSION,
      featureNames: featureNames(true),
      params: { ...params },
      trainedRows: shipped.length + runs.length,
      evidence: new EvidenceIndex(evidenceRows(shipped, true)).aggregated(),
      intervals: shippedMeta.intervals,
      validation: {
        note: 'not cross-validated: the shipped model intervals are kept; bench/refit.ts measures refits with 3 runs of a held-out GPU',
      },
      refit: {
        ...info,
        shippedRows: shipped.length,
        modelSha256: sha256(onnx),
        runEvidence: new EvidenceIndex(evidenceRows(runs, true)).aggregated(),
      },
    },
  };
}
