// What the pages share: this server's /graphql, and an element by id.

export interface GraphQLError {
  message: string;
  /** SEARCH_TIMEOUT adds the budget the search had and the most this server lets a request ask for. */
  extensions?: { code?: string; field?: string; budgetMs?: number; maxBudgetMs?: number };
}

export const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

export async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: T; errors?: GraphQLError[] };
  if (body.errors?.length) throw new RequestErrors(body.errors);
  return body.data as T;
}
export class RequestErrors extends Error {
  constructor(readonly errors: GraphQLError[]) {
    super(errors.map((e) => e.message).join('; '));
  }
}
