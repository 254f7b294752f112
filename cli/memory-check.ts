// `trainplan memory-check`: the memory model against what really ran, as markdown tables (the figures
// of the issue-10 note; predictor/memory-check.ts computes them, the tests assert them).
import { getGpu, loadEfficiency, loadExcludedMeasurements, loadMeasurements } from '../seeds/catalog.js';
import {
  fitAllocatorFragmentation,
  fitRate,
  fitRatesByModel,
  fitsWithFragmentation,
  largestFittingBatch,
  llmCases,
  llmFitChecks,
  peakComparisons,
  splitByGpu,
  trainFitChecks,
  type FitCheck,
} from '../predictor/memory-check.js';
import { predict } from '../predictor/predict.js';
import { getModel } from '../predictor/zoo/index.js';
import { zooModelOf } from '../predictor/measured.js';
import type { Precision } from '../predictor/types.js';

const percent = (x: number) => `${(100 * x).toFixed(1)}%`;

/** Configurations the issue names as certainly impossible: each must be refused. */
export const IMPOSSIBLE: { what: string; model: string; gpu: string; batch: number; precision: Precision }[] =
  [
    {
      what: 'Llama-2-7B full fine-tuning, AMP, one 80 GB GPU, no sharding',
      model: 'llama2_7b',
      gpu: 'A100-SXM4-80GB',
      batch: 1,
      precision: 'AMP_BF16',
    },
    {
      what: 'GPT-2 1.5B, FP32, Adam, 16 GB',
      model: 'gpt2_1558m',
      gpu: 'V100-SXM2-16GB',
      batch: 1,
      precision: 'FP32',
    },
    {
      what: 'ResNet-50, FP32, batch 512, 16 GB',
      model: 'resnet50_v1.5',
      gpu: 'V100-SXM2-16GB',
      batch: 512,
      precision: 'FP32',
    },
    {
      what: 'BERT-large SQuAD, FP32, batch 32, 16 GB',
      model: 'bert_large_squad',
      gpu: 'V100-SXM2-16GB',
      batch: 32,
      precision: 'FP32',
    },
  ];

/** Model x GPU x precision whose largest measured batch the largest predicted-to-fit batch must reach. */
export const LARGEST_BATCH_CASES: { model: string; gpu: string; precision: Precision }[] = [
  { model: 'resnet50_v1.5', gpu: 'V100-SXM2-16GB', precision: 'AMP_FP16' },
  { model: 'resnet50_v1.5', gpu: 'H100-SXM5-80GB', precision: 'FP32' },
  { model: 'resnet50_v1.5', gpu: 'RTX-A6000', precision: 'FP16_PURE' },
  { model: 'bert_large_squad', gpu: 'GH200', precision: 'FP16' },
  { model: 'bert_base_squad', gpu: 'A100-SXM4-80GB', precision: 'FP16' },
  { model: 'ssd300_resnet50', gpu: 'A100-SXM4-80GB', precision: 'AMP_FP16' },
  { model: 'tacotron2', gpu: 'V100-SXM2-16GB', precision: 'AMP_FP16' },
  { model: 'transformerxl_large', gpu: 'H100-SXM5-80GB', precision: 'FP16' },
  { model: 'gnmt_v2', gpu: 'A100-SXM4-80GB', precision: 'FP16' },
  { model: 'vgg16', gpu: 'Quadro-RTX-8000', precision: 'AMP_FP16' },
];

export function impossibleRefusals(eff = loadEfficiency()) {
  return IMPOSSIBLE.map((c) => {
    const gpu = getGpu(c.gpu)!;
    const p = predict(
      {
        model: getModel(c.model)!,
        gpu,
        precision: c.precision,
        batchSizePerGpu: c.batch,
        gpusPerNode: 1,
        nodes: 1,
        interNodeGbps: 100,
      },
      eff,
    );
    return { ...c, predictedGb: p.memory.totalGb, capacityGb: gpu.usableMemoryGb, refused: !p.fitsInMemory };
  });
}

/**
 * Largest measured batch (as the predictor reads the row) against the largest predicted to fit, for
 * the model as that row's source ran it (seeds/measurements/as-run.json).
 */
export function largestBatches(
  eff = loadEfficiency(),
  checks: FitCheck[] = trainFitChecks(loadMeasurements(), eff),
) {
  const rows = new Map(loadMeasurements().map((r) => [r.id, r]));
  return LARGEST_BATCH_CASES.map((c) => {
    const largestRun = checks
      .filter((r) => r.model === c.model && r.gpu === c.gpu && r.precision === c.precision)
      .reduce<FitCheck | undefined>(
        (a, r) => (a && a.batchSizePerGpu >= r.batchSizePerGpu ? a : r),
        undefined,
      );
    const measured = largestRun?.batchSizePerGpu ?? 0;
    const row = largestRun && rows.get(largestRun.id);
    const model = (row ? zooModelOf(row) : getModel(c.model))!;
    const largest = largestFittingBatch(model, getGpu(c.gpu)!, c.precision, eff);
    return { ...c, measured, largest };
  });
}

function fitTable(checks: FitCheck[]): string[] {
  const lines = [
    '| model | configurations | predicted to fit | rate | misses (id: GPU, batch, precision, predicted / GPU GB) |',
  ];
  lines.push('|---|---:|---:|---:|---|');
  for (const r of fitRatesByModel(checks))
    lines.push(
      `| ${r.model} | ${r.checked} | ${r.fit} | ${percent(r.fit / r.checked)} | ${r.misses
        .map(
          (m) =>
            `${m.id}: ${m.gpu}, ${m.batchSizePerGpu}, ${m.precision}, ${m.predictedGb.toFixed(1)} / ${m.capacityGb}`,
        )
        .join('; ')} |`,
    );
  lines.push(
    `| all | ${checks.length} | ${checks.filter((c) => c.fits).length} | ${percent(fitRate(checks))} | |`,
  );
  return lines;
}

export function memoryCheckReport(): string {
  const eff = loadEfficiency();
  const constants = eff.memory;
  const out: string[] = [];
  const checks = trainFitChecks(loadMeasurements(), eff);
  const { fitting, heldOut } = splitByGpu(checks);
  const fitted = fitAllocatorFragmentation(fitting, 0.995);
  const rate = (cs: FitCheck[], f: number) =>
    cs.filter((c) => fitsWithFragmentation(c, f)).length / cs.length;
  out.push('## Allocator fragmentation, fitted on half the GPUs of train.csv');
  out.push(
    `fitting GPUs: ${new Set(fitting.map((c) => c.gpu)).size} (${fitting.length} configurations); held out: ${new Set(heldOut.map((c) => c.gpu)).size} (${heldOut.length})`,
  );
  out.push(
    `fitted (largest fraction with >= 99.5% of the fitting configurations fitting, and >= 97% of each model's with 20 or more): ${fitted}; in seeds/memory.json: ${constants.allocatorFragmentation}`,
  );
  out.push(
    `at ${constants.allocatorFragmentation}: fitting ${percent(rate(fitting, constants.allocatorFragmentation))}, held out ${percent(rate(heldOut, constants.allocatorFragmentation))}`,
  );
  out.push(
    '',
    '## train.csv: configurations that ran (with a stated batch size), predicted to fit',
    ...fitTable(checks),
  );
  const cases = llmCases();
  const llm = llmFitChecks(
    cases.filter((c) => !c.moe),
    eff,
  );
  // The LLM frameworks' fragmentation by the same rule, on their own rows: all of them, since a split
  // by model leaves too few models on each side (one outlier row decides the fit).
  const allLlm = llmFitChecks(cases, eff);
  const framework = constants.frameworkAllocatorFragmentation;
  out.push(
    '',
    "## The LLM frameworks' allocator fragmentation (MEGATRON, TUNED, TORCH_COMPILE), fitted on llm_train.csv",
    `configurations: ${allLlm.length} (dense and mixture-of-experts); fitted (largest fraction with >= 99.5% fitting, and >= 97% of each model's with 20 or more): ${fitAllocatorFragmentation(allLlm, 0.995)}; in seeds/memory.json: ${framework}; at it ${percent(rate(allLlm, framework))} fit`,
  );
  out.push(
    '',
    '## llm_train.csv rows that give their layout (TP, PP, micro-batch, sequence), dense decoders',
    ...fitTable(llm),
  );
  // Experts are sharded as the rows state (EP), with what Megatron-Core's MoE layer keeps for backward
  // and the selective-recomputation modules the rows' performance configurations set (seeds/memory.json
  // sourceRecipes); reported apart from the dense figure above, which they do not change.
  out.push(
    '',
    "## The same for mixture-of-experts decoders (experts over the stated EP; recompute modules from the runs' configurations)",
    ...fitTable(
      llmFitChecks(
        cases.filter((c) => c.moe),
        eff,
      ),
    ),
  );
  const skipped = new Map<string, number>();
  for (const c of cases)
    if (c.skipped)
      skipped.set(`${c.model}: ${c.skipped}`, (skipped.get(`${c.model}: ${c.skipped}`) ?? 0) + 1);
  out.push('', 'Not checked (rows):', ...[...skipped].map(([why, n]) => `- ${why} (${n})`));
  out.push('', '## Published peak memory (torchtitan: peak reserved by the caching allocator)');
  out.push(
    '| row | model | published GB | predicted GB | predicted / published |',
    '|---|---|---:|---:|---:|',
  );
  for (const p of peakComparisons(cases, eff))
    out.push(
      `| ${p.id} | ${p.model} | ${p.publishedGb} | ${p.predictedGb.toFixed(1)} | ${p.ratio.toFixed(2)} |`,
    );
  out.push(
    '',
    '## Certainly impossible configurations',
    '| configuration | predicted GB | GPU GB | refused |',
    '|---|---:|---:|---|',
  );
  for (const r of impossibleRefusals(eff))
    out.push(`| ${r.what} | ${r.predictedGb.toFixed(1)} | ${r.capacityGb} | ${r.refused} |`);
  out.push(
    '',
    '## Largest batch predicted to fit vs largest measured',
    '| model | GPU | precision | largest measured | largest predicted to fit |',
    '|---|---|---|---:|---:|',
  );
  for (const r of largestBatches())
    out.push(`| ${r.model} | ${r.gpu} | ${r.precision} | ${r.measured} | ${r.largest} |`);
  const excluded = loadExcludedMeasurements();
  out.push(
    '',
    `## train.csv rows left out of every check and fit (${excluded.length}): they contradict the configuration they state`,
    ...excluded.map(
      (e) => `- ${e.row.id} (${e.row.framework}, ${e.row.gpu}, ${e.row.precision}): ${e.reason}`,
    ),
  );
  return out.join('\n');
}
