// Golden tests of the README: every example query under "## Ask it" (a ```graphql block followed by
// the ```json block of its answer) is run in-process and must give the answer README.md shows, with
// numbers compared as the README prints them (4 significant digits; long lists abridged). The README is the one place
// the expected answers live: a change that alters one on purpose re-runs the query
// (`npx trainplan query --file q.graphql`) and updates README.md in the same commit, saying why.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { apolloForTests } from './graphql-client.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The (query, answer) pairs of the README's "Ask it" section, in order. */
export function readmeExamples(text: string): { query: string; answer: unknown }[] {
  const section = text.slice(text.indexOf('## Ask it'), text.indexOf('\n## ', text.indexOf('## Ask it') + 1));
  const pairs: { query: string; answer: unknown }[] = [];
  const block = /```(graphql|json)\n([\s\S]*?)```/g;
  let pending: string | undefined;
  for (let m = block.exec(section); m; m = block.exec(section)) {
    if (m[1] === 'graphql') pending = m[2];
    else if (pending !== undefined) {
      pairs.push({ query: pending, answer: JSON.parse(m[2]) });
      pending = undefined;
    }
  }
  return pairs;
}

/**
 * The answer as the README prints it: numbers to 4 significant digits, and lists cut to the length
 * the README shows (it abridges long lists, e.g. the Pareto front, to their first entries).
 */
function asPrinted(value: unknown, printed: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toPrecision(4));
  if (Array.isArray(value)) {
    const shown = Array.isArray(printed) ? printed : [];
    return value
      .slice(0, Array.isArray(printed) ? shown.length : undefined)
      .map((v, i) => asPrinted(v, shown[i]));
  }
  if (value && typeof value === 'object') {
    const shown = (printed && typeof printed === 'object' ? printed : {}) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asPrinted(v, shown[k])]));
  }
  return value;
}

describe('README examples', () => {
  const run = apolloForTests();
  const examples = readmeExamples(readme);

  it('the README shows the three examples: ranked plans, one configuration, bad input', () => {
    expect(examples.map((e) => e.query.match(/^\{\s*(\w+)/)?.[1])).toEqual([
      'recommend',
      'predict',
      'predict',
    ]);
  });

  for (const [i, example] of examples.entries()) {
    it(`example ${i + 1} gives the answer README.md shows`, { timeout: 120_000 }, async () => {
      const result = await run(example.query);
      expect(asPrinted(JSON.parse(JSON.stringify(result)), example.answer)).toEqual(example.answer);
    });
  }
});
