// Accuracy of the predictor on measurement rows: MAPE overall and per group.
import { getGpu, type Measurement } from '../seeds/catalog.js';
import { ape, predictRow } from '../predictor/measured.js';
import { softwareRelease } from '../predictor/learned/evidence.js';
import type { Efficiency } from '../predictor/step.js';

export const GROUP_KEYS = {
  precision: (r: Measurement) => r.precision,
  gpu: (r: Measurement) => r.gpu,
  model: (r: Measurement) => r.model,
  source: (r: Measurement) => r.source,
  generation: (r: Measurement) => getGpu(r.gpu)?.generation ?? 'unknown',
  gpus: (r: Measurement) => (r.numGpus === 1 ? '1' : r.numNodes === 1 ? 'multi-gpu, 1 node' : 'multi-node'),
  release: (r: Measurement) => softwareRelease(r) ?? 'not stated',
} as const;
export type GroupKey = keyof typeof GROUP_KEYS;

export interface GroupError {
  group: string;
  rows: number;
  mape: number;
  medianApe: number;
}
export interface Evaluation {
  rows: number;
  predicted: number;
  mape: number;
  medianApe: number;
  groups: Record<string, GroupError[]>;
  skipped: { reason: string; count: number }[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length
    ? s.length % 2
      ? s[(s.length - 1) / 2]
      : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
    : NaN;
};
const summarize = (group: string, errs: number[]): GroupError => ({
  group,
  rows: errs.length,
  mape: errs.reduce((a, b) => a + b, 0) / errs.length,
  medianApe: median(errs),
});

/** `onRow(done)` after each row, for a progress bar. */
export function evaluate(
  rows: Measurement[],
  groupBy: GroupKey[],
  eff: Efficiency,
  onRow: (done: number) => void = () => {},
): Evaluation {
  const errs: number[] = [];
  const byGroup = new Map<GroupKey, Map<string, number[]>>(groupBy.map((k) => [k, new Map()]));
  const skipped = new Map<string, number>();
  for (const [index, row] of rows.entries()) {
    onRow(index + 1);
    if (row.throughput === null || row.throughput <= 0) {
      skipped.set('no measured throughput', (skipped.get('no measured throughput') ?? 0) + 1);
      continue;
    }
    const p = predictRow(row, eff);
    if (p.predictedThroughput === undefined) {
      const reason = (p.error ?? 'unknown').replace(/"[^"]*"/g, '"…"');
      skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
      continue;
    }
    const e = ape(p.predictedThroughput, row.throughput);
    errs.push(e);
    for (const k of groupBy) {
      const g = GROUP_KEYS[k](row);
      const m = byGroup.get(k)!;
      m.set(g, [...(m.get(g) ?? []), e]);
    }
  }
  const all = summarize('all', errs);
  return {
    rows: rows.length,
    predicted: errs.length,
    mape: all.mape,
    medianApe: all.medianApe,
    groups: Object.fromEntries(
      [...byGroup].map(([k, m]) => [
        k,
        [...m].map(([g, e]) => summarize(g, e)).sort((a, b) => b.rows - a.rows),
      ]),
    ),
    skipped: [...skipped].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count),
  };
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
export function formatEvaluation(e: Evaluation): string {
  const lines = [
    `rows ${e.rows}, predicted ${e.predicted}, MAPE ${pct(e.mape)}, median APE ${pct(e.medianApe)}`,
  ];
  for (const [key, groups] of Object.entries(e.groups)) {
    lines.push('', `| ${key} | rows | MAPE | median APE |`, '|---|---:|---:|---:|');
    for (const g of groups) lines.push(`| ${g.group} | ${g.rows} | ${pct(g.mape)} | ${pct(g.medianApe)} |`);
  }
  if (e.skipped.length) {
    lines.push('', 'rows not predicted:');
    for (const s of e.skipped) lines.push(`  ${s.count}  ${s.reason}`);
  }
  return lines.join('\n');
}
