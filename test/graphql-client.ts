// One in-process Apollo server per test file, and a `run` that returns the single result.
import { afterAll, beforeAll } from 'vitest';
import type { ApolloServer } from '@apollo/server';
import { createApollo } from '../server/apollo.js';

export type GraphQLResult = {
  data?: Record<string, any>;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
};

export function apolloForTests(
  beforeStop: () => void = () => {},
): (query: string, variables?: Record<string, unknown>) => Promise<GraphQLResult> {
  let server: ApolloServer;
  beforeAll(async () => {
    server = await createApollo();
  });
  afterAll(async () => {
    beforeStop();
    await server.stop();
  });
  return async (query, variables) => {
    // The server's per-request time budget (2 s) guards a shared server; in-process tests run beside
    // every other test file on two cores, so they get a minute, as a request context would give it.
    const res = await server.executeOperation(
      { query, variables },
      { contextValue: { deadlineAt: performance.now() + 60_000 } },
    );
    if (res.body.kind !== 'single') throw new Error('expected a single result');
    return res.body.singleResult as GraphQLResult;
  };
}
