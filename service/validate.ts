// Input checks shared by every entry point (GraphQL resolvers, the CLI): each failure is an
// InputError that names the field and says what is allowed; the API turns it into BAD_USER_INPUT.
import { InputError } from '../predictor/input-error.js';

export { InputError };

/** Large bounds read better as 1e+18 than as nineteen digits. */
const fmt = (x: number) => (Number.isFinite(x) && Math.abs(x) >= 1e6 ? x.toExponential() : String(x));

export function finiteNumber(
  field: string,
  v: number,
  min: number,
  max: number,
  opts: { exclusiveMin?: boolean } = {},
): number {
  const below = opts.exclusiveMin ? !(v > min) : !(v >= min);
  if (!Number.isFinite(v) || below || v > max) {
    throw new InputError(
      field,
      `must be a finite number ${opts.exclusiveMin ? '>' : '>='} ${fmt(min)} and <= ${fmt(max)} (got ${fmt(v)})`,
    );
  }
  return v;
}

export function integer(field: string, v: number, min: number, max: number): number {
  if (!Number.isInteger(v) || v < min || v > max)
    throw new InputError(field, `must be an integer from ${fmt(min)} to ${fmt(max)} (got ${fmt(v)})`);
  return v;
}

export function nonEmpty<T>(field: string, list: T[] | undefined | null, max: number): T[] | undefined {
  if (list === undefined || list === null) return undefined;
  if (list.length === 0)
    throw new InputError(field, 'must not be an empty list (leave it out for the default)');
  if (list.length > max) throw new InputError(field, `lists at most ${max} entries (got ${list.length})`);
  return list;
}

/** Largest values the API accepts: far beyond any real job, small enough that nothing overflows or runs long. */
export const LIMITS = {
  samples: 1e18,
  batchSize: 65536,
  nodes: 4096,
  gpusPerNode: 16,
  gradAccum: 4096,
  gbps: 1e5,
  price: 1e4,
  hours: 1e7,
  usd: 1e12,
  limit: 200,
  listLength: 100,
  /** More than any GPU's memory: a larger headroom is a mistake. */
  memoryHeadroomGb: 1024,
} as const;
