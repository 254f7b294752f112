// How the API reports a bad request: a GraphQL error with extensions.code BAD_USER_INPUT and the
// field at fault. The service layer and the libraries throw InputError; every resolver class turns
// it into this error with @UseMiddleware(BadUserInput), so no resolver needs its own try/catch.
import { GraphQLError } from 'graphql';
import type { MiddlewareFn } from 'type-graphql';
import { InputError } from '../predictor/input-error.js';
import { SearchTimeout } from '../optimizer/search-types.js';
import { assertFiniteAnswer } from '../service/finite.js';

export function badInput(field: string, message: string): GraphQLError {
  return new GraphQLError(`${field}: ${message}`, { extensions: { code: 'BAD_USER_INPUT', field } });
}

/**
 * Turns the libraries' InputError into the API's error, and a refused search into SEARCH_TIMEOUT
 * (with the budget, the search's size and the most a request may ask for); anything else passes through.
 */
export function asGraphQLError(e: unknown): unknown {
  if (e instanceof SearchTimeout)
    return new GraphQLError(e.message, {
      extensions: {
        code: 'SEARCH_TIMEOUT',
        budgetMs: Math.round(e.budgetMs),
        candidates: e.size,
        ...(e.maxBudgetMs !== undefined ? { maxBudgetMs: e.maxBudgetMs } : {}),
      },
    });
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

/**
 * The inputs that set each query's numbers, most likely culprit first: named when an answer would
 * hold a non-finite number (FiniteAnswer below). Only those the request gave are named.
 */
const INPUTS_BEHIND: Record<string, string[]> = {
  predict: [
    'workload.customModel',
    'interNodeGbps',
    'workload.samples',
    'batchSizePerGpu',
    'priceUsdPerGpuHour',
  ],
  recommend: ['workload.customModel', 'interNodeGbps', 'workload.samples', 'prices'],
  planFleet: ['jobs', 'inventory', 'prices', 'interNodeGbps'],
  planProcurement: ['jobs', 'options', 'prices', 'hoursPerMonth', 'interNodeGbps'],
  planFederatedRound: ['clients', 'workload', 'minSamplesPerRound', 'bytesPerParameter'],
  modelSummary: ['customModel', 'seqLen'],
};

const given = (input: unknown, path: string): boolean => {
  let v: unknown = input;
  for (const k of path.split('.'))
    v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v !== undefined && v !== null;
};

/**
 * Resolver middleware: an answer holding NaN or Infinity is refused as BAD_USER_INPUT naming the
 * output and the inputs behind it, instead of GraphQL's "Float cannot represent non numeric
 * value: Infinity" that names nothing (service/finite.ts). List it after BadUserInput.
 */
export const FiniteAnswer: MiddlewareFn = async ({ info, args }, next) => {
  const answer: unknown = await next();
  const source = (args.input ?? args) as unknown;
  const inputs = (INPUTS_BEHIND[info.fieldName] ?? ['input']).filter((f) => given(source, f));
  return assertFiniteAnswer(answer, inputs.length ? inputs : ['input']);
};
