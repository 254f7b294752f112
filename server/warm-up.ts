// One search before the port opens. The first request a process answers also pays for V8 compiling
// the search (its hot loops run interpreted at first): measured through the HTTP server
// (bench/graphql-moe.ts), the GraphQL defaults for an imported mixture-of-experts config took about
// 2.4 s of wall time as the first request after a start and 1.8 s as a later one, against a 2 s
// default budget, so the first user's request was refused (SEARCH_TIMEOUT) where the same request a
// moment later was answered. After a one-GPU search of another MoE config the first took 1.9 s.
// (Measured before the search's allocation work made every request faster.)
// The warm-up is a real GraphQL request through the same Apollo server. It is nobody's request, so
// the per-request budget does not cut it short (a loaded machine would refuse it and compile
// less); WARM_UP_LIMIT_MS bounds the start instead. Whatever it answers is dropped, and it never
// fails the start: the server is as ready without it.
import type { ApolloServer } from '@apollo/server';
import type { RequestContext } from '../resolvers/context.js';
import { loadWarmUp } from '../seeds/catalog.js';
import { recommendCache } from '../service/cache.js';
import { withinMs } from '../service/search-budget.js';
import { errorFields, log } from './log.js';

const QUERY = `query WarmUp($config: String!, $gpu: String!, $seqLen: Int!, $stack: SoftwareStack!) {
  recommend(input: { workload: { customModel: { huggingFaceConfig: $config }, seqLen: $seqLen, samples: 1e11 }, gpus: [$gpu], softwareStack: $stack }) {
    evaluated
    plans { nodes gpusPerNode precision }
  }
}`;

const WARM_UP_LIMIT_MS = 10_000;

/**
 * Runs the warm-up, waiting for it at most WARM_UP_LIMIT_MS: the search stops at that deadline, but
 * what it waits on need not (a store whose host does not answer), and a start must not hang on it.
 */
export async function warmUp(apollo: ApolloServer<RequestContext>): Promise<void> {
  // (search() logs and swallows its own failures: 'failed' never comes back.)
  if ((await withinMs(search(apollo), WARM_UP_LIMIT_MS + 1_000)) === 'late')
    log('warn', 'warm-up still running; serving without waiting for it', { limitMs: WARM_UP_LIMIT_MS });
}

async function search(apollo: ApolloServer<RequestContext>): Promise<void> {
  const t0 = performance.now();
  try {
    const seed = loadWarmUp();
    const result = await apollo.executeOperation(
      {
        query: QUERY,
        variables: {
          config: JSON.stringify(seed.huggingFaceConfig),
          gpu: seed.gpu,
          seqLen: seed.seqLen,
          stack: seed.softwareStack,
        },
      },
      { contextValue: { deadlineAt: t0 + WARM_UP_LIMIT_MS } },
    );
    const body = result.body.kind === 'single' ? result.body.singleResult : undefined;
    const error = body?.errors?.[0];
    const evaluated = (body?.data as { recommend?: { evaluated: number } } | null | undefined)?.recommend
      ?.evaluated;
    log('info', 'warmed up', {
      ms: Math.round(performance.now() - t0),
      ...(error ? { refused: `${error.extensions?.code ?? 'error'}: ${error.message}` } : { evaluated }),
    });
  } catch (e) {
    log('warn', 'warm-up failed; serving without it', errorFields(e));
  } finally {
    // Its answer is nobody's: it must not take a cache entry from a user's.
    recommendCache.clear();
  }
}
