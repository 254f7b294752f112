// Where the held-out-GPU error sits, row by row: every GPU of train.csv held out in turn (the
// learned correction fitted on the other GPUs' rows, as bench/calibration.ts's "no runs"), each of
// its rows predicted by the roofline and by that fold's correction, then grouped. A group's share of
// the total absolute error says where a fix would move the headline figure; its mean log error
// (learned and roofline) says which way each is off.
//
//   npx tsx bench/held-out-rows.ts [--group-by model|gpu|source|precision|gpus|software|gpu,model,...]
//                                  [--out rows.csv] [--top 20]      (about 3 minutes on two cores)
//
// --out writes every row (id, the fields above, measured, roofline and learned throughput).
import { writeFileSync } from 'node:fs';
import { loadEfficiency, loadMeasurements } from '../seeds/catalog.js';
import { examples, featuresOf, fit, PARAMS, type Example } from '../predictor/learned/train.js';
import { predictEnsemble } from '../predictor/learned/gbdt.js';

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

const ex = examples(loadMeasurements(), loadEfficiency());
const rows: HeldOutRow[] = [];
for (const gpu of [...new Set(ex.map((e) => e.row.gpu))].sort()) {
  const model = fit(
    ex.filter((e) => e.row.gpu !== gpu),
    true,
    PARAMS,
  );
  const learned = (e: Example) =>
    e.aware.throughput *
    Math.exp(
      predictEnsemble(
        model.ensemble,
        featuresOf(
          e,
          true,
          model.evidence.query(e.row.model, e.row.gpu, e.row.precision, e.software.framework),
        ),
      ),
    );
  for (const e of ex.filter((x) => x.row.gpu === gpu))
    rows.push({
      id: e.row.id,
      gpu,
      model: e.row.model,
      source: e.row.source,
      framework: e.software.framework,
      software: e.row.software,
      precision: e.row.precision,
      gpus: e.aware.exec.gpusPerNode * e.aware.exec.nodes,
      batch: e.aware.exec.batchSizePerGpu,
      measured: e.row.throughput!,
      roofline: e.aware.throughput,
      learned: learned(e),
    });
  console.error(`${gpu}: fitted`);
}

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
const groups = new Map<string, HeldOutRow[]>();
for (const r of rows) {
  const k = groupBy.map((f) => r[f]).join(' | ');
  groups.set(k, [...(groups.get(k) ?? []), r]);
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const signed = (x: number) => (x >= 0 ? '+' : '') + x.toFixed(3);
console.log(
  `held out by whole GPU: ${rows.length} rows, MAPE ${((100 * total) / rows.length).toFixed(1)}% (mean over rows), by ${groupBy.join(' x ')}; the ${top} groups with the most absolute error\n`,
);
console.log(
  `| ${groupBy.join(' | ')} | rows | learned MAPE | share of all error | mean log(predicted / measured): learned | roofline |`,
);
console.log(`|${groupBy.map(() => '---').join('|')}|---:|---:|---:|---:|---:|`);
const sorted = [...groups].sort(
  ([, a], [, b]) => b.reduce((s, r) => s + ape(r), 0) - a.reduce((s, r) => s + ape(r), 0),
);
for (const [k, g] of sorted.slice(0, top)) {
  const err = g.reduce((s, r) => s + ape(r), 0);
  console.log(
    `| ${k} | ${g.length} | ${(100 * mean(g.map(ape))).toFixed(1)}% | ${((100 * err) / total).toFixed(1)}% | ${signed(mean(g.map((r) => Math.log(r.learned / r.measured))))} | ${signed(mean(g.map((r) => Math.log(r.roofline / r.measured))))} |`,
  );
}
