// The GraphQL context the HTTP front passes to resolvers (server/app.ts). In-process callers
// (tests, `trainplan query`) pass none; the service then uses the configured time budget.

export interface RequestContext {
  requestId?: string;
  /** performance.now() after which a search still running is refused (SEARCH_TIMEOUT), unless the request names its own budget. */
  deadlineAt?: number;
  /** performance.now() when the request arrived: a budget the request names counts from then. */
  arrivedAt?: number;
}
