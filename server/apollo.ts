// The Apollo server: the schema, the query limits checked while parsing and validating
// (server/limits.ts), the error policy (server/error-policy.ts), and a plugin that names each
// operation for the access log and logs every GraphQL error with the request id.
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { Kind, type OperationDefinitionNode } from 'graphql';
import type { RequestContext } from '../resolvers/context.js';
import { runtimeConfig, type ServerConfig } from '../service/config.js';
import { formatError, isDev, isServerFault } from './error-policy.js';
import { queryShapeRule } from './limits.js';
import { errorFields, log, requestStore } from './log.js';
import { trainplanSchema } from './schema.js';

const rootFieldNames = (op: OperationDefinitionNode | undefined) =>
  op?.selectionSet.selections.map((s) => (s.kind === Kind.FIELD ? s.name.value : '...')).join(',');

/** Names the operation for the access log and logs every GraphQL error with the request id. */
const observability: ApolloServerPlugin<RequestContext> = {
  async requestDidStart() {
    return {
      async didResolveOperation(rc) {
        const state = requestStore.getStore();
        if (state)
          state.operationName =
            rc.operationName ??
            (rootFieldNames(rc.operation) ? `{${rootFieldNames(rc.operation)}}` : undefined);
      },
      async didEncounterErrors(rc) {
        for (const e of rc.errors) {
          if (!isServerFault({ message: e.message, extensions: e.extensions }, e))
            log('debug', 'request error', {
              code: e.extensions?.code ?? 'BAD_REQUEST',
              error: e.message.slice(0, 500),
              operationName: rc.operationName,
            });
          else
            log('error', 'internal error', {
              operationName: rc.operationName,
              path: e.path?.join('.'),
              ...errorFields(e.originalError ?? e),
            });
        }
      },
    };
  },
};

export async function createApollo(
  config: ServerConfig = runtimeConfig(),
): Promise<ApolloServer<RequestContext>> {
  const server = new ApolloServer<RequestContext>({
    schema: await trainplanSchema(),
    plugins: [ApolloServerPluginLandingPageDisabled(), observability],
    includeStacktraceInErrorResponses: isDev(),
    // server/serve.ts drains on SIGTERM; Apollo's own handler would stop it mid-request.
    stopOnTerminationSignals: false,
    parseOptions: { maxTokens: config.maxTokens },
    validationRules: [queryShapeRule(config)],
    formatError,
    logger: {
      debug: (m) => log('debug', String(m)),
      info: (m) => log('info', String(m)),
      warn: (m) => log('warn', String(m)),
      error: (m) => log('error', String(m)),
    },
  });
  await server.start();
  return server;
}
