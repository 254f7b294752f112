// `trainplan calibrate refit`: the learned correction refitted on the shipped rows plus one owner's
// recorded runs (predictor/learned/refit.ts), written next to the store as refit-predictor.onnx and
// refit-predictor.json (in the data dir, also when the runs live in PostgreSQL: each replica reads
// the refit from its own data dir). One refit per data dir; a new one replaces it.
// Which one answers a request: service/learned-choice.ts.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import {
  defaultInterNodeGbps,
  LEARNED_META_FILE,
  loadEfficiency,
  type Measurement,
} from '../seeds/catalog.js';
import type { LearnedMeta } from '../predictor/learned/model.js';
import { refitCorrection } from '../predictor/learned/refit.js';
import { examples, trainingExamples, type Example, type TrainParams } from '../predictor/learned/train.js';
import type { Efficiency } from '../predictor/step.js';
import type { MeasurementRunRow } from '../store/schema.js';
import { MeasurementStore } from '../store/store.js';
import { runtimeConfig } from './config.js';
import { checkOwner, measurementStore, runAttention, type RunConfiguration } from './measurements.js';
import { InputError } from './validate.js';
import { forgetRefit, refitFiles, shippedModelSha256 } from './learned-choice.js';

/**
 * A recorded run as a train.csv row, so the shipped rows' example builder (`examples()`) builds it:
 * the same analytical prediction (predictRow), the same features. Its throughput is the analytical
 * throughput scaled by analytical / measured step time (throughput is samples per step over the
 * step time, in the model's own unit). A string: why the run cannot be such a row.
 */
export function runMeasurement(row: MeasurementRunRow): Measurement | string {
  const c = JSON.parse(row.configuration) as RunConfiguration;
  const attention = runAttention(c, row.note);
  if (c.workload.customModel)
    return 'a custom model: the shipped rows, and so the refit, are zoo models (its runs still calibrate)';
  const p = c.parallelism;
  if (
    p &&
    ((p.contextParallel ?? 1) > 1 ||
      (p.virtualPipelineStages ?? 1) > 1 ||
      p.optimizerState ||
      p.masterWeights)
  )
    return 'context parallelism, virtual pipeline stages, an optimizer-state precision or a master-weight layout: no training row states them';
  if (c.nodes > 1 && c.interNodeGbps != null && c.interNodeGbps !== defaultInterNodeGbps(c.gpu))
    return 'an inter-node bandwidth other than the catalog default, which training rows assume';
  const flags = [c.fp32UsesTf32 ? 'fp32_on_tf32_capable_gpu' : '', c.xla ? 'xla' : ''].filter(Boolean);
  return {
    id: `run-${row.id}`,
    source: `recorded run (${row.owner})`,
    framework: row.framework,
    model: row.model,
    variant: '',
    gpu: row.gpu,
    system: '',
    numGpus: row.nodes * row.gpus_per_node,
    numNodes: row.nodes,
    gpusPerNode: row.gpus_per_node,
    batchSizePerGpu: row.batch_size_per_gpu,
    globalBatchSize: row.batch_size_per_gpu * row.nodes * row.gpus_per_node * row.grad_accum_steps,
    gradAccumSteps: row.grad_accum_steps,
    seqLenOrImageSize: c.workload.seqLen ?? null,
    precision: row.precision as Measurement['precision'],
    precisionRaw: row.precision,
    throughput: null,
    throughputUnit: '',
    software: '',
    confidence: '',
    flags: flags.join(' '),
    provenance: `measurement_run ${row.id}`,
    // predictRow reads the layout and the attention the run stated from the row's raw cells.
    raw: {
      ...(p
        ? {
            tensor_parallel: String(p.tensorParallel),
            pipeline_parallel: String(p.pipelineParallel),
            zero_stage: String(p.zeroStage),
            recompute: p.recompute,
            ...(p.recomputeModules ? { recompute_modules: p.recomputeModules.join(';') } : {}),
            ...(p.expertParallel !== undefined ? { expert_parallel: String(p.expertParallel) } : {}),
          }
        : {}),
      ...(attention ? { attention } : {}),
    },
  };
}

/** Recorded runs as training examples (the shipped rows' builder), with the runs that cannot be one. */
export function runExamples(
  rows: MeasurementRunRow[],
  eff: Efficiency = loadEfficiency(),
): { examples: Example[]; used: MeasurementRunRow[]; skipped: { id: number; reason: string }[] } {
  const out: Example[] = [],
    used: MeasurementRunRow[] = [],
    skipped: { id: number; reason: string }[] = [];
  for (const row of rows) {
    const m = runMeasurement(row);
    if (typeof m === 'string') {
      skipped.push({ id: row.id, reason: m });
      continue;
    }
    // The analytical throughput at this configuration, then the measured one from the step times.
    const [analytical] = examples([{ ...m, throughput: 1 }], eff);
    if (!analytical) {
      skipped.push({ id: row.id, reason: 'its configuration no longer builds' });
      continue;
    }
    const throughput = (analytical.aware.throughput * analytical.aware.stepMs) / row.step_time_ms;
    const [e] = examples([{ ...m, throughput }], eff);
    out.push(e);
    used.push(row);
  }
  return { examples: out, used, skipped };
}

export interface RefitSummary {
  owner: string;
  runs: number;
  skipped: { id: number; reason: string }[];
  shippedRows: number;
  files: { model: string; meta: string };
}

/**
 * Refits the learned correction on the shipped rows and `owner`'s runs and writes it under the data
 * dir. Throws BAD_USER_INPUT (owner) when the owner has no run a refit can use. `params`: tests only.
 */
export async function refitOwner(
  owner: string,
  opts: { now?: Date; params?: TrainParams } = {},
): Promise<RefitSummary> {
  checkOwner(owner);
  const config = runtimeConfig();
  const where = config.databaseUrl ? 'the PostgreSQL store (DATABASE_URL)' : config.dataDir;
  const rows = MeasurementStore.exists({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })
    ? await (await measurementStore()).list({ owner })
    : [];
  if (!rows.length)
    throw new InputError(
      'owner',
      `no recorded runs of "${owner}" in ${where}: record runs first (trainplan calibrate import FILE --owner ${owner})`,
    );
  const eff = loadEfficiency();
  const runs = runExamples(rows, eff);
  if (!runs.examples.length)
    throw new InputError(
      'owner',
      `none of the ${rows.length} runs of "${owner}" can train the learned correction: ${runs.skipped.map((s) => `run ${s.id}: ${s.reason}`).join('; ')}`,
    );
  const shippedMeta = JSON.parse(readFileSync(LEARNED_META_FILE, 'utf8')) as LearnedMeta;
  const shipped = trainingExamples(eff);
  const refit = refitCorrection(
    shipped,
    runs.examples,
    {
      owner,
      refittedAt: (opts.now ?? new Date()).toISOString(),
      runs: runs.used.map((r) => ({ id: r.id, recordedAt: r.recorded_at, stepTimeMs: r.step_time_ms })),
      skipped: runs.skipped,
      shippedModelSha256: shippedModelSha256(),
    },
    shippedMeta,
    opts.params,
  );
  const files = refitFiles(config.dataDir);
  mkdirSync(config.dataDir, { recursive: true });
  // Model first, meta last (each written whole, then renamed): a reader that sees the new meta checks
  // the model's hash against it.
  writeAtomically(files.model, refit.onnx);
  writeAtomically(files.meta, JSON.stringify(refit.meta, null, 1) + '\n');
  forgetRefit();
  return { owner, runs: runs.used.length, skipped: runs.skipped, shippedRows: shipped.length, files };
}

function writeAtomically(path: string, data: Uint8Array | string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}
