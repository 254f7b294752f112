// The GraphQL context the HTTP front passes to resolvers (server/app.ts). In-process callers
// (tests, `trainplan query`) pass none; the service then uses the configured time budget.
import type { RequestClock } from '../service/search-budget.js';

/** The request's id, and its clock: when it arrived and when the server's budget for it ends. */
export interface RequestContext extends RequestClock {
  requestId?: string;
}
