// Which learned correction answers for the stored runs: the refit `trainplan calibrate refit`
// wrote in the data dir (service/refit.ts) while it is current (its owner's runs are exactly the ones
// it trained on, and the shipped model is the one it was refitted from); otherwise the shipped one,
// and the evidence says the refit is stale. A model trained on runs since deleted is never used.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LEARNED_MODEL_FILE } from '../seeds/catalog.js';
import {
  LearnedPredictor,
  type LearnedMeta,
  type LearnedState,
  type RefitInfo,
} from '../predictor/learned/model.js';
import { sha256 } from '../predictor/learned/refit.js';
import type { MeasurementRunRow } from '../store/schema.js';
import { runtimeConfig } from './config.js';

export const REFIT_MODEL_FILE = 'refit-predictor.onnx';
export const REFIT_META_FILE = 'refit-predictor.json';

export const refitFiles = (dataDir: string) => ({
  model: join(dataDir, REFIT_MODEL_FILE),
  meta: join(dataDir, REFIT_META_FILE),
});

let shippedSha: string | undefined;
export const shippedModelSha256 = () => (shippedSha ??= sha256(readFileSync(LEARNED_MODEL_FILE)));

/** Which learned correction answers for a store's runs, and what the evidence says about it. */
export interface RefitChoice {
  /** The refitted model when current; undefined: the shipped one. */
  learned?: LearnedState;
  /** Runs the refitted model trained on: already in its evidence, so not merged in again. */
  trainedRunIds: ReadonlySet<number>;
  note?: string;
}

const NO_REFIT: RefitChoice = { trainedRunIds: new Set() };

let cached:
  { key: string; meta: LearnedMeta & { refit: RefitInfo }; predictor?: Promise<LearnedState> } | undefined;

/** The refit file's identity (path, modification time, size), or undefined when there is none. */
export function refitFileKey(dataDir: string = runtimeConfig().dataDir): string | undefined {
  const { meta } = refitFiles(dataDir);
  if (!existsSync(meta)) return undefined;
  const s = statSync(meta);
  return `${meta}|${s.mtimeMs}|${s.size}`;
}

const when = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

/** The learned correction to use with these stored runs (every owner's, as the snapshot lists them). */
export async function chooseLearned(rows: readonly MeasurementRunRow[]): Promise<RefitChoice> {
  const dataDir = runtimeConfig().dataDir;
  const key = refitFileKey(dataDir);
  if (!key) return NO_REFIT;
  const files = refitFiles(dataDir);
  if (cached?.key !== key) {
    try {
      const meta = JSON.parse(readFileSync(files.meta, 'utf8')) as LearnedMeta & { refit?: RefitInfo };
      if (!meta.refit) throw new Error('it is not a refit (no refit section)');
      cached = { key, meta: meta as LearnedMeta & { refit: RefitInfo } };
    } catch (e) {
      // A damaged or foreign file never breaks a request: the shipped correction answers, and says why.
      return {
        trainedRunIds: NO_REFIT.trainedRunIds,
        note: `the refit in ${files.meta} could not be read (${e instanceof Error ? e.message.split('\n')[0] : String(e)}); the shipped correction is used`,
      };
    }
  }
  const info = cached.meta.refit;
  const what = `the learned correction refitted on ${info.runs.length} of ${info.owner}'s runs (${when(info.refittedAt)})`;
  const fallback = (why: string): RefitChoice => ({
    trainedRunIds: NO_REFIT.trainedRunIds,
    note: `${what} is stale: ${why}; the shipped correction is used (run trainplan calibrate refit again)`,
  });
  const trained = new Map(info.runs.map((r) => [r.id, r]));
  const now = rows.filter((r) => r.owner === info.owner);
  const same = (r: MeasurementRunRow) => {
    const t = trained.get(r.id);
    return !!t && t.recordedAt === r.recorded_at && t.stepTimeMs === r.step_time_ms;
  };
  // Skipped runs were never trained on: they neither make it stale nor count as new.
  const skipped = new Set(info.skipped.map((s) => s.id));
  const added = now.filter((r) => !same(r) && !skipped.has(r.id)).length;
  const kept = now.filter(same).length;
  const deleted = info.runs.length - kept;
  if (added || deleted)
    return fallback(`${added} of ${info.owner}'s runs recorded and ${deleted} deleted since`);
  if (info.shippedModelSha256 !== shippedModelSha256())
    return fallback('the shipped learned model changed since');
  if (sha256(readFileSync(files.model)) !== info.modelSha256)
    return fallback(`${files.model} is not the model its meta describes`);
  cached.predictor ??= LearnedPredictor.load(files.model, files.meta).then(
    (predictor) => ({ predictor, reason: '' }),
    (e: unknown) => ({ predictor: null, reason: e instanceof Error ? e.message.split('\n')[0] : String(e) }),
  );
  const learned = await cached.predictor;
  if (!learned.predictor) return fallback(`it does not load (${learned.reason})`);
  return {
    learned,
    trainedRunIds: new Set(info.runs.map((r) => r.id)),
    note: `learned correction refitted on the shipped rows and ${info.runs.length} of your runs (${info.owner}, ${when(info.refittedAt)})`,
  };
}

/** Forgets the refit read last (a new one was just written by this process). */
export function forgetRefit(): void {
  cached = undefined;
}
