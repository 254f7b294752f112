// The GraphQL context the HTTP front passes to resolvers (server/app.ts). In-process callers
// (tests, `trainplan query`) pass none; the service then uses the configured time budget.

export interface RequestContext {
  requestId?: string;
  /** performance.now() after which searches stop and answer with what they have (status TIMEOUT). */
  deadlineAt?: number;
}
