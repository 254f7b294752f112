// Golden tests of docs/coupled-planning.md: every answer block marked `<!-- answer: FILE -->` is what
// the graphql block above it gives with `$input` = FILE (docs/examples/), and every input block
// marked `<!-- input: FILE -->` is FILE. Numbers are compared to 6 significant digits, everything else
// exactly, so a change that moves a plan (a retrained correction, a new solver rule) fails here until
// the doc shows the new answer: re-run the query (`npx trainplan query --file Q.graphql --variables
// '{"input": ...}'`) and update the block in the same commit, saying why.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { apolloForTests } from './graphql-client.js';

const DOC = 'docs/coupled-planning.md';
const text = readFileSync(new URL(`../${DOC}`, import.meta.url), 'utf8');
const fileJson = (path: string) => JSON.parse(readFileSync(new URL(`../${path}`, import.meta.url), 'utf8'));

interface Marked {
  kind: 'input' | 'answer';
  file: string;
  block: unknown;
  /** For an answer: the nearest graphql block above it. */
  query?: string;
  line: number;
}

/** The marked json blocks of the doc, with the query each answer belongs to. */
export function markedBlocks(doc: string): Marked[] {
  const out: Marked[] = [];
  const token = /<!-- (input|answer): (\S+) -->\n\n?```json\n([\s\S]*?)```|```graphql\n([\s\S]*?)```/g;
  let query: string | undefined;
  for (let m = token.exec(doc); m; m = token.exec(doc)) {
    if (m[4] !== undefined) {
      query = m[4];
      continue;
    }
    const line = doc.slice(0, m.index).split('\n').length;
    out.push({
      kind: m[1] as 'input' | 'answer',
      file: m[2],
      block: JSON.parse(m[3]),
      ...(m[1] === 'answer' ? { query } : {}),
      line,
    });
  }
  return out;
}

/** Numbers to 6 significant digits (a last-bit difference in a sum is not a changed plan). */
function rounded(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? v : Number(v.toPrecision(6));
  if (Array.isArray(v)) return v.map(rounded);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, rounded(x)]));
  return v;
}

describe(`${DOC} examples`, () => {
  const run = apolloForTests();
  const blocks = markedBlocks(text);

  it('marks every json block of the doc (none is left unchecked)', () => {
    const jsonBlocks = text.match(/^```json$/gm)?.length ?? 0;
    expect(blocks.length).toBe(jsonBlocks);
    expect(blocks.filter((b) => b.kind === 'answer').length).toBe(10);
    for (const b of blocks)
      if (b.kind === 'answer') expect(b.query, `answer at line ${b.line}`).toBeDefined();
  });

  for (const b of blocks) {
    if (b.kind === 'input')
      it(`the input shown at line ${b.line} is ${b.file}`, () => {
        expect(b.block).toEqual(fileJson(b.file));
      });
    else
      it(
        `the answer at line ${b.line} is what the query gives with ${b.file}`,
        { timeout: 180_000 },
        async () => {
          const result = await run(b.query!, { input: fileJson(b.file) });
          expect(rounded(JSON.parse(JSON.stringify(result)))).toEqual(rounded(b.block));
        },
      );
  }
});
