// Every answer is checked before it leaves: GraphQL refuses a non-finite Float ("Float cannot
// represent non numeric value: Infinity", naming no input), and a NaN or Infinity that slipped into
// an answer is a wrong answer. The check names the output and the inputs that set it.
import { InputError } from './validate.js';

/** Where `value` holds a number that is not finite, as output paths ("clients[3].computeSeconds"); at most `max`. */
export function nonFinitePaths(value: unknown, max = 5, path = '', out: string[] = []): string[] {
  if (out.length >= max) return out;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) out.push(`${path || 'the answer'} = ${value}`);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => nonFinitePaths(v, max, `${path}[${i}]`, out));
  } else if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    for (const [k, v] of Object.entries(value)) nonFinitePaths(v, max, path ? `${path}.${k}` : k, out);
  }
  return out;
}

/**
 * Throws BAD_USER_INPUT when `answer` holds a non-finite number. `inputs` are the input fields that
 * set the outputs, most likely first; the error names the first one in `extensions.field` and
 * lists them all: with every input inside its range this should not happen, so the message says
 * which outputs overflowed and from what.
 */
export function assertFiniteAnswer<T>(answer: T, inputs: string[]): T {
  const bad = nonFinitePaths(answer);
  if (bad.length)
    throw new InputError(
      inputs[0] ?? 'input',
      `the answer would hold numbers that are not finite (${bad.join(', ')}); they are computed from ${inputs.join(', ')}: bring those toward typical values`,
    );
  return answer;
}
