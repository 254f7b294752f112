// The shape of one seeds/models.json entry. Numbers that come from papers and reference
// implementations live in the JSON; builders only interpret them.
import type { ZooEntry } from '../../seeds/types.js';
import type { Layer } from '../types.js';

// The entry as models.json states it is the data's type (seeds/types.ts).
export type { ZooEntry };

export type Builder = (entry: ZooEntry) => Layer[];

/**
 * The entry's `arch` as the builder's type, after checking the required keys are there: a typo
 * in models.json should fail loudly at load, not build a model with NaN layers.
 */
export function archOf<T>(entry: ZooEntry, required: readonly (keyof T & string)[]): T {
  const missing = required.filter((k) => entry.arch[k] === undefined);
  if (missing.length) throw new Error(`models.json ${entry.id}: arch lacks ${missing.join(', ')}`);
  return entry.arch as T;
}

export function seqLenOf(entry: ZooEntry): number {
  if (!entry.seqLen) throw new Error(`models.json ${entry.id}: seqLen is required by family ${entry.family}`);
  return entry.seqLen;
}

export function imageSizeOf(entry: ZooEntry): number {
  if (!entry.imageSize)
    throw new Error(`models.json ${entry.id}: imageSize is required by family ${entry.family}`);
  return entry.imageSize;
}
