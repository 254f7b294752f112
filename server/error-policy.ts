// Whose fault an error is, and what the client sees of it: a request's fault keeps its message and
// code (BAD_USER_INPUT, BAD_REQUEST, ...); a server fault becomes "internal error" and the request
// id outside development, with the details in the log only.
import type { GraphQLFormattedError } from 'graphql';
import { cappedMessage } from './limits.js';
import { requestStore } from './log.js';

export const isDev = () => process.env.NODE_ENV === 'development';

/**
 * A fault of the server, not of the request: an error without a code (or INTERNAL_SERVER_ERROR)
 * that code threw. graphql-js's own complaints about a request (a mutation on a schema without
 * mutations, too many variable errors) are GraphQLErrors without an original error: the request's fault.
 */
export function isServerFault(formatted: GraphQLFormattedError, error?: unknown): boolean {
  const code = formatted.extensions?.code;
  if (code !== undefined && code !== 'INTERNAL_SERVER_ERROR') return false;
  const e = error as { name?: string; originalError?: { name?: string } | null } | undefined;
  if (!e || e.name !== 'GraphQLError') return true;
  return !!e.originalError && e.originalError.name !== 'GraphQLError';
}

/** Outside development, a server fault becomes "internal error" and the request id; the details go to the log only. */
export function formatError(formatted: GraphQLFormattedError, error?: unknown): GraphQLFormattedError {
  formatted = { ...formatted, message: cappedMessage(formatted.message) };
  const requestId = requestStore.getStore()?.requestId;
  const id = requestId ? { requestId } : {};
  if (isServerFault(formatted, error)) {
    if (isDev()) return { ...formatted, extensions: { ...formatted.extensions, ...id } };
    return {
      message: `internal error${requestId ? ` (request id ${requestId})` : ''}`,
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: { code: 'INTERNAL_SERVER_ERROR', ...id },
    };
  }
  const code = formatted.extensions?.code;
  return {
    ...formatted,
    extensions: {
      ...formatted.extensions,
      code: code === undefined || code === 'INTERNAL_SERVER_ERROR' ? 'BAD_REQUEST' : code,
      ...id,
    },
  };
}
