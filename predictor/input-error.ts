/** A bad request, named by the field at fault. The API turns it into BAD_USER_INPUT. */
export class InputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'InputError';
  }

  /** As every interface says it (GraphQL, HTTP, the CLI, a rejected run): the field, then why. */
  get withField(): string {
    return `${this.field}: ${this.message}`;
  }
}

/**
 * A value as an error message shows it (at most 40 characters). Numbers are printed as numbers:
 * JSON.stringify turns Infinity (what JSON.parse makes of 1e999) and NaN into "null", which
 * blamed the client for a null it never sent.
 */
export function shownValue(v: unknown): string {
  if (typeof v === 'number')
    return Number.isFinite(v) ? String(v) : `${v} (a number beyond the ±1.8e308 a double holds)`;
  return String(JSON.stringify(v)).slice(0, 40);
}
