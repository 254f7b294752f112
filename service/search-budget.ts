// How long a search may run. The HTTP front gives each request its arrival time and the deadline of
// the server's budget; a request that names its own budget gets that much from its arrival instead.
// A search that cannot finish in it is refused (SearchTimeout), never cut short.
import { runtimeConfig } from './config.js';

/** When the caller's request arrived and when the server's budget for it ends (performance.now() times). */
export interface RequestClock {
  /** When the request arrived: a budget the request names counts from then. */
  arrivedAt?: number;
  /** After this a search still running is refused (SEARCH_TIMEOUT), unless the request names its own budget. */
  deadlineAt?: number;
}

/**
 * Milliseconds this request may still spend searching: `requested` from its arrival when it names a
 * budget, else until the caller's deadline, else the configured budget from now; never below 0.
 */
export function remainingBudgetMs(clock: RequestClock | undefined, requested?: number): number {
  const now = performance.now();
  const deadline =
    requested !== undefined
      ? (clock?.arrivedAt ?? now) + requested
      : (clock?.deadlineAt ?? now + runtimeConfig().timeBudgetMs);
  return Math.max(0, deadline - now);
}

/**
 * What `p` gives within `ms`: its value, 'failed' if it rejects, 'late' if the time runs out first
 * (a request waiting for an identical search, the server waiting for its warm-up).
 */
export async function withinMs<T>(p: Promise<T>, ms: number): Promise<T | 'failed' | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  try {
    return await Promise.race([p.catch(() => 'failed' as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
