// Dominance pruning shared by the coupled planners: a candidate is dropped when another is no worse
// on every criterion (all criteria are minimized). Exact ties keep the first in input order, so the
// result is deterministic.

/** The candidates no other candidate dominates, in input order. O(n log n + n·k) for k survivors. */
export function paretoFilter<T>(items: T[], criteria: (t: T) => number[]): T[] {
  const keyed = items.map((item, i) => ({ item, i, k: criteria(item) }));
  // Sorted lexicographically, a candidate can only be dominated by one before it.
  keyed.sort((a, b) => {
    for (let d = 0; d < a.k.length; d++) if (a.k[d] !== b.k[d]) return a.k[d] - b.k[d];
    return a.i - b.i;
  });
  const kept: typeof keyed = [];
  for (const c of keyed) {
    const dominated = kept.some((p) => p.k.every((v, d) => v <= c.k[d]));
    if (!dominated) kept.push(c);
  }
  return kept.sort((a, b) => a.i - b.i).map((c) => c.item);
}
