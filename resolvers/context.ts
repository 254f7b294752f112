// The GraphQL context the HTTP front passes to resolvers (server/app.ts). In-process callers
// (tests, `trainplan query`) pass none; resolvers then fall back to the configured defaults.
import { runtimeConfig } from '../server/config.js';

export interface RequestContext {
  requestId?: string;
  /** performance.now() after which a search still running is refused (SEARCH_TIMEOUT). */
  deadlineAt?: number;
}

/** Milliseconds this request may still spend searching: the request's deadline, or the configured budget from now; never below 0. */
export function remainingBudgetMs(ctx: RequestContext | undefined, requested?: number): number {
  const now = performance.now();
  const deadline = ctx?.deadlineAt ?? now + runtimeConfig().timeBudgetMs;
  return Math.max(0, Math.min(deadline - now, requested ?? Infinity));
}
