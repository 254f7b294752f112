// How long a search may run: the request's deadline (the HTTP front sets one per request) or the
// configured budget. A search that cannot finish in it is refused (SearchTimeout), never cut short.
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
