// Where the held-out-GPU error sits, row by row: the card's leave-one-GPU-out cross-validation
// (bench/held-out.ts at the shipped seed: crossValidate over train.csv's rows and the LLM runs, the
// tuned stacks refitted per fold), its benchmark rows' out-of-fold predictions beside the roofline's,
// then grouped. A group's share of the total absolute error says where a fix would move the headline
// figure; its mean log error (learned and roofline) says which way each is off.
//
//   npx tsx bench/held-out-rows.ts [--group-by model|gpu|source|precision|gpus|software|gpu,model,...]
//                                  [--out rows.csv] [--top 20]      (about 3 minutes on two cores)
//
// --out writes every row (id, the fields above, measured, roofline and learned throughput).
import { writeFileSync } from 'node:fs';
import { loadEfficiency } from '../seeds/catalog.js';
import { crossValidate, PARAMS, trainingExamples } from '../predictor/learned/train.js';
import { stackRefitView } from '../cli/train-predictor.js';

const flag = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};

interface HeldOutRow {
  id: string;
  gpu: string;
  model: string;
  source: string;
  framework: string;
  software: string;
  precision: string;
  gpus: number;
  batch: number;
  measured: number;
  roofline: number;
  learned: number;
}
type Field = Exclude<keyof HeldOutRow, 'id' | 'measured' | 'roofline' | 'learned'>;
const FIELDS: readonly Field[] = [
  'gpu',
  'model',
  'source',
  'framework',
  'software',
  'precision',
  'gpus',
  'batch',
];

const groupBy = (flag('group-by') ?? 'model').split(',') as Field[];
for (const f of groupBy)
  if (!FIELDS.includes(f)) throw new Error(`--group-by: ${f} is not one of ${FIELDS.join(', ')}`);
const top = Number(flag('top') ?? 20);

const ex = trainingExamples();
const predicted = crossValidate(
  ex,
  'gpu',
  true,
  PARAMS,
  (l) => console.error(l),
  stackRefitView(loadEfficiency()),
);
const rows: HeldOutRow[] = ex.flatMap((e, i) =>
  e.kind !== 'benchmark'
    ? []
    : [
        {
          id: e.row.id,
          gpu: e.row.gpu,
          model: e.row.model,
          source: e.row.source,
          framework: e.software.framework,
          software: e.row.software,
          precision: e.row.precision,
          gpus: e.aware.exec.gpusPerNode * e.aware.exec.nodes,
          batch: e.aware.exec.batchSizePerGpu,
          measured: e.row.throughput!,
          roofline: e.aware.throughput,
          learned: predicted[i],
        },
      ],
);

const out = flag('out');
if (out) {
  const cols = ['id', ...FIELDS, 'measured', 'roofline', 'learned'] as const;
  const cell = (v: string | number) =>
    typeof v === 'string' && /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : String(v);
  writeFileSync(
    out,
    [cols.join(','), ...rows.map((r) => cols.map((c) => cell(r[c])).join(','))].join('\n') + '\n',
  );
  console.error(`wrote ${rows.length} rows to ${out}`);
}

const ape = (r: HeldOutRow) => Math.abs(r.learned / r.measured - 1);
const total = rows.reduce((a, r) => a + ape(r), 0);
const groups = new Map<string, { rows: HeldOutRow[]; error: number }>();
for (const r of rows) {
  const k = groupBy.map((f) => r[f]).join(' | ');
  const g = groups.get(k) ?? { rows: [], error: 0 };
  g.rows.push(r);
  g.error += ape(r);
  groups.set(k, g);
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const signed = (x: number) => (x >= 0 ? '+' : '') + x.toFixed(3);
console.log(
  `held out by whole GPU (seed ${PARAMS.seed}): ${rows.length} benchmark rows, MAPE ${((100 * total) / rows.length).toFixed(1)}% (mean over rows), by ${groupBy.join(' x ')}; the ${top} groups with the most absolute error\n`,
);
console.log(
  `| ${groupBy.join(' | ')} | rows | learned MAPE | share of all error | mean log(predicted / measured): learned | roofline |`,
);
console.log(`|${groupBy.map(() => '---').join('|')}|---:|---:|---:|---:|---:|`);
const sorted = [...groups].sort(([, a], [, b]) => b.error - a.error);
for (const [k, { rows: g, error }] of sorted.slice(0, top))
  console.log(
    `| ${k} | ${g.length} | ${(100 * mean(g.map(ape))).toFixed(1)}% | ${((100 * error) / total).toFixed(1)}% | ${signed(mean(g.map((r) => Math.log(r.learned / r.measured))))} | ${signed(mean(g.map((r) => Math.log(r.roofline / r.measured))))} |`,
  );
