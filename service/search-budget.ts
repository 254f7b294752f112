// How long a search may run: the request's deadline (the HTTP front sets one per request) or the
// configured budget, less what the work after the search will take per candidate it keeps.
import { runtimeConfig } from './config.js';

/**
 * Milliseconds this request may still spend searching: until `deadlineAt` (performance.now() time,
 * when the caller has a deadline), or the configured budget from now; never below 0.
 */
export function remainingBudgetMs(deadlineAt: number | undefined, requested?: number): number {
  const now = performance.now();
  const deadline = deadlineAt ?? now + runtimeConfig().timeBudgetMs;
  return Math.max(0, Math.min(deadline - now, requested ?? Infinity));
}

/** Floors of the cost, in ms, of each candidate the search keeps: ranking (about 1 us a candidate on one core of the development machine) and, with a learned model, its features and the batched correction (5-15 us more). */
const FLOOR = { analytical: 0.0025, learned: 0.012 };
/** Above this the estimate is not believed (one slow request on a starved machine must not make every search a TIMEOUT). */
const CEILING = 0.1;
const observed = { analytical: 0, learned: 0 };

/**
 * What each candidate the search keeps will cost after the search, in ms: the larger of a floor
 * and what recent large searches in this process actually cost per candidate (wall time, so a
 * busy process reserves more and searches less). The search stops early enough to leave this time
 * inside the budget (optimizer/recommend.ts, reserveMsPerCandidate).
 */
export function postSearchMsPerCandidate(learned: boolean): number {
  const k = learned ? 'learned' : 'analytical';
  return Math.max(FLOOR[k], Math.min(CEILING, observed[k]));
}

/**
 * Learns the cost per kept candidate from a finished search (its whole wall time, search
 * included, so the estimate errs on the safe side). Searches that kept fewer than 10,000
 * candidates are ignored: their fixed costs would inflate the estimate.
 */
export function observeSearch(
  learned: boolean,
  elapsedMs: number,
  r: { feasible: number; rejected: { reason: string; count: number }[] },
): void {
  const kept =
    r.feasible +
    r.rejected
      .filter((x) => x.reason === 'MISSES_DEADLINE' || x.reason === 'OVER_BUDGET')
      .reduce((a, x) => a + x.count, 0);
  if (kept < 10_000 || !(elapsedMs > 0)) return;
  const k = learned ? 'learned' : 'analytical';
  const x = elapsedMs / kept;
  observed[k] = observed[k] ? 0.7 * observed[k] + 0.3 * x : x;
}
