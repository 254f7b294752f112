// Golden tests of the docs' examples: every json block marked `<!-- answer: ... -->` is what the
// graphql block above it answers, and every one marked `<!-- input: FILE -->` is FILE, so a change
// that moves an answer (a retrained correction, a new solver rule, a new memory term) fails here until
// the page shows the new one: re-run the query (`npx trainplan query --file Q.graphql --variables ...`)
// and update the block in the same commit, saying why. An answer marker names the query's variables,
// each `name=FILE` (FILE's JSON), `name=text:FILE` (its text) or `name=base64:FILE` (its bytes), and
// `at FIELD` when the page shows only `data.FIELD`. Numbers are compared to 6 significant digits
// (a last-bit difference in a sum is not a changed answer), everything else exactly. Plain blocks:
// `<!-- input-csv: FILE -->` is FILE as it is; `<!-- predict-csv: FILE -->` is what `trainplan
// predict-csv --in FILE` writes, in the columns and rows shown, each number at the precision shown.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { predictCsv } from '../cli/predict-csv.js';
import { parseCsv } from '../seeds/catalog.js';
import { apolloForTests } from './graphql-client.js';

const DOCS = ['docs/coupled-planning.md', 'docs/custom-models-and-parallelism.md'];
const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url));

interface Marked {
  kind: 'input' | 'answer';
  /** input: the file shown; answer: the marker's words. */
  spec: string;
  block: unknown;
  /** For an answer: the nearest graphql block above it. */
  query?: string;
  line: number;
}

/** The marked json blocks of a page, with the query each answer belongs to. */
export function markedBlocks(doc: string): Marked[] {
  const out: Marked[] = [];
  const token =
    /<!-- (input|answer)(?:: ([^>]*?))? -->\n\n?```json\n([\s\S]*?)```|```graphql\n([\s\S]*?)```/g;
  let query: string | undefined;
  for (let m = token.exec(doc); m; m = token.exec(doc)) {
    if (m[4] !== undefined) {
      query = m[4];
      continue;
    }
    out.push({
      kind: m[1] as 'input' | 'answer',
      spec: m[2] ?? '',
      block: JSON.parse(m[3]),
      ...(m[1] === 'answer' ? { query } : {}),
      line: doc.slice(0, m.index).split('\n').length,
    });
  }
  return out;
}

/** An answer marker's variables and the field of `data` the page shows. */
function answerSpec(spec: string): { variables: Record<string, unknown>; at?: string } {
  const variables: Record<string, unknown> = {};
  let at: string | undefined;
  const words = spec.split(/\s+/).filter(Boolean);
  for (let i = 0; i < words.length; i++) {
    if (words[i] === 'at') {
      at = words[++i];
      continue;
    }
    const [name, value] = words[i].split('=');
    if (value.startsWith('text:')) variables[name] = read(value.slice(5)).toString('utf8');
    else if (value.startsWith('base64:')) variables[name] = read(value.slice(7)).toString('base64');
    else variables[name] = JSON.parse(read(value).toString('utf8'));
  }
  return { variables, ...(at ? { at } : {}) };
}

/** The marked plain (CSV) blocks of a page. */
function csvBlocks(
  doc: string,
): { kind: 'input-csv' | 'predict-csv'; file: string; text: string; line: number }[] {
  const out: { kind: 'input-csv' | 'predict-csv'; file: string; text: string; line: number }[] = [];
  const token = /<!-- (input-csv|predict-csv): (\S+) -->\n\n?```\n([\s\S]*?)```/g;
  for (let m = token.exec(doc); m; m = token.exec(doc))
    out.push({
      kind: m[1] as 'input-csv' | 'predict-csv',
      file: m[2],
      text: m[3],
      line: doc.slice(0, m.index).split('\n').length,
    });
  return out;
}

/** A shown cell against the fresh one: a number to the decimals shown, anything else exactly. */
function sameAsShown(shown: string, fresh: string): boolean {
  const decimals = /^-?\d+(?:\.(\d+))?$/.exec(shown);
  if (!decimals || fresh === '') return shown === fresh;
  return Math.abs(Number(fresh) - Number(shown)) <= 0.5 * 10 ** -(decimals[1]?.length ?? 0) + 1e-12;
}

/** Numbers to 6 significant digits. */
function rounded(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? v : Number(v.toPrecision(6));
  if (Array.isArray(v)) return v.map(rounded);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, rounded(x)]));
  return v;
}

for (const doc of DOCS) {
  describe(`${doc} examples`, () => {
    const run = apolloForTests();
    const text = read(doc).toString('utf8');
    const blocks = markedBlocks(text);

    for (const b of csvBlocks(text)) {
      if (b.kind === 'input-csv')
        it(`the CSV shown at line ${b.line} is ${b.file}`, () => {
          expect(b.text).toBe(read(b.file).toString('utf8'));
        });
      else
        it(
          `the predict-csv output at line ${b.line} is what ${b.file} gives`,
          { timeout: 180_000 },
          async () => {
            const out = join(mkdtempSync(join(tmpdir(), 'trainplan-docs-')), 'out.csv');
            const quiet = { update: () => {}, finish: () => {} };
            await predictCsv(new URL(`../${b.file}`, import.meta.url).pathname, out, () => quiet);
            const fresh = parseCsv(readFileSync(out, 'utf8'));
            const shown = parseCsv(b.text);
            expect(shown.length).toBe(fresh.length);
            shown.forEach((row, i) => {
              for (const [column, cell] of Object.entries(row))
                expect(
                  sameAsShown(cell, fresh[i][column] ?? ''),
                  `row ${i + 1} ${column}: shown ${cell}, now ${fresh[i][column]}`,
                ).toBe(true);
            });
          },
        );
    }

    it('marks every json block of the page (none is left unchecked)', () => {
      expect(blocks.length).toBe(text.match(/^```json$/gm)?.length ?? 0);
      expect(blocks.some((b) => b.kind === 'answer')).toBe(true);
      for (const b of blocks)
        if (b.kind === 'answer') expect(b.query, `answer at line ${b.line}`).toBeDefined();
    });

    for (const b of blocks) {
      if (b.kind === 'input')
        it(`the input shown at line ${b.line} is ${b.spec}`, () => {
          expect(b.block).toEqual(JSON.parse(read(b.spec).toString('utf8')));
        });
      else
        it(
          `the answer at line ${b.line} is what its query gives (${b.spec || 'no variables'})`,
          { timeout: 180_000 },
          async () => {
            const { variables, at } = answerSpec(b.spec);
            const result = JSON.parse(JSON.stringify(await run(b.query!, variables)));
            if (at) {
              expect(result.errors).toBeUndefined();
              expect(rounded(result.data[at])).toEqual(rounded(b.block));
            } else expect(rounded(result)).toEqual(rounded(b.block));
          },
        );
    }
  });
}
