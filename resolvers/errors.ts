// How the API reports a bad request: a GraphQL error with extensions.code BAD_USER_INPUT and the
// field at fault. The service layer and the libraries throw InputError; every resolver class turns
// it into this error with @UseMiddleware(BadUserInput), so no resolver needs its own try/catch.
import { GraphQLError } from 'graphql';
import type { MiddlewareFn } from 'type-graphql';
import { InputError } from '../predictor/input-error.js';

export function badInput(field: string, message: string): GraphQLError {
  return new GraphQLError(`${field}: ${message}`, { extensions: { code: 'BAD_USER_INPUT', field } });
}

/** Turns the libraries' InputError into the API's error; anything else passes through. */
export function asGraphQLError(e: unknown): unknown {
  return e instanceof InputError ? badInput(e.field, e.message) : e;
}

/** Resolver middleware: an InputError thrown anywhere below a query becomes BAD_USER_INPUT. */
export const BadUserInput: MiddlewareFn = async (_action, next) => {
  try {
    return await next();
  } catch (e) {
    throw asGraphQLError(e);
  }
};
