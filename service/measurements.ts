// A user's own measured runs: checked against physics and stored (store/), listed, deleted, and
// turned into the evidence every prediction and plan uses (predictor/learned/calibration.ts).
// The evidence is rebuilt only when the store changes (its version: count and largest id), so a
// run recorded by one worker reaches the others on their next request.
import { EvidenceIndex, seedsMeasured, withRuns, type MeasuredSet } from '../predictor/learned/evidence.js';
import { RecordedRuns, type RecordedEvidence, type UserEvidence } from '../predictor/learned/calibration.js';
import type { Framework } from '../predictor/learned/features.js';
import { correctionInputOf } from '../predictor/corrected.js';
import type { CorrectionInput, LearnedState } from '../predictor/learned/model.js';
import { correctionConfiguration, learnedPredictor } from '../predictor/learned/model.js';
import {
  costOf,
  predict,
  utilizationAt,
  type Prediction,
  type PredictRequest,
} from '../predictor/predict.js';
import { parallelStructure, planParallelism, type PlanParallelism } from '../predictor/parallel.js';
import type { Utilization } from '../predictor/utilization.js';
import {
  activationScaleOf,
  allocatedGb,
  memoryCalibrations,
  recordedCapacities,
  memoryKey,
  type MemoryCalibration,
} from '../predictor/memory-calibration.js';
import { statedChannelsLast } from '../predictor/software.js';
import type { Precision } from '../predictor/types.js';
import {
  ATTENTION_IMPLEMENTATIONS,
  NETWORK_TRANSPORTS,
  type AttentionImplementation,
  type NetworkTransport,
} from '../seeds/types.js';
import { defaultInterNodeGbps, loadEfficiency, loadGpus, loadMeasurements } from '../seeds/catalog.js';
import { examples } from '../predictor/learned/train.js';
import {
  exampleConfiguration,
  NeighbourTransfer,
  ShippedConfigurations,
  type TransferConfiguration,
} from '../predictor/learned/transfer.js';
import { gpuChips } from '../predictor/learned/gpu-twins.js';
import { loadCalibrationSettings, type CalibrationSettings } from '../seeds/calibration.js';
import { runtimeConfig } from './config.js';
import { chooseLearned, refitFileKey } from './learned-choice.js';
import { MeasurementStore, type RunFilter, type StoreLocation } from '../store/store.js';
import type { MeasurementRunRow, NewMeasurementRun } from '../store/schema.js';
import { fullTrainingOnly, gpuById, workload } from './lookup.js';
import {
  finiteNumber,
  InputError,
  integer,
  LIMITS,
  parallelismOf,
  type ParallelismInput,
} from './validate.js';

/** A configuration as a request gives it (the GraphQL PredictInput's configuration fields). */
export interface RunConfiguration {
  workload: { model?: string | null; samples: number; seqLen?: number | null; customModel?: unknown };
  gpu: string;
  nodes: number;
  gpusPerNode: number;
  batchSizePerGpu: number;
  gradAccumSteps: number;
  precision: Precision;
  framework: Framework;
  xla: boolean;
  fp32UsesTf32: boolean;
  /** Convolution activations channels-last; absent or null = the framework's layout (predictRequestOf). */
  channelsLast?: boolean | null;
  interNodeGbps?: number | null;
  /** How NCCL crossed that network; absent or null = RDMA. */
  interNodeTransport?: NetworkTransport | null;
  parallelism?: ParallelismInput | null;
  /**
   * How the run's attention cores ran; absent or null = as predict's default (the model's code's).
   * A run of a model whose cores ran op by op, predicted with them fused, would read as a slow GPU.
   */
  attention?: AttentionImplementation | null;
}

export interface RunInput extends RunConfiguration {
  stepTimeMs: number;
  peakMemoryGb?: number | null;
  /**
   * What CUDA gave the run's process on its GPU, GiB (torch.cuda.get_device_properties' total_memory,
   * the harness's gpu_memory_gb): plans on that GPU are then fitted in it (memory-calibration.ts).
   */
  gpuMemoryGb?: number | null;
  source?: string | null;
  note?: string | null;
}

export interface StoredRun extends MeasurementRunRow {
  /** What the predictor says for this configuration without any of the user's runs: ms, or null if it no longer can. */
  predictedStepTimeMs: number | null;
  /** The memory PyTorch allocates at this configuration as trainplan counts it, before the runs' calibration: GB, or null. */
  predictedPeakMemoryGb: number | null;
  /** Model TFLOPS per GPU and MFU at the measured step time (predictor/utilization.ts): null as predictedStepTimeMs is. */
  modelTflopsPerGpu: number | null;
  mfu: number | null;
  /** The layout the run ran at, as a plan reports its own. */
  parallelism: PlanParallelism;
  /**
   * How its attention cores ran, as recorded or as its harness note tells (a PyTorch 1.x run ran
   * them op by op: attentionFromNote); null: not said (predict's default for the model).
   */
  attention: AttentionImplementation | null;
}

/**
 * A stored run's layout, as plans report theirs (plain data parallelism where it names none): a
 * tensor-parallel, ZeRO or recomputing run reads apart from a plain one of the same GPUs and batch.
 */
export function runParallelism(row: MeasurementRunRow, c: RunConfiguration): PlanParallelism {
  return planParallelism(row.nodes * row.gpus_per_node, parallelismOf(c.parallelism), row.grad_accum_steps);
}

/** Limits on what one call may record (a run is small; a batch is one transaction). */
export const RUN_LIMITS = {
  runsPerCall: 1000,
  ownerLength: 100,
  sourceLength: 200,
  noteLength: 2000,
  /** A step longer than an hour is not a training step time (a unit slip, a stalled job). */
  maxStepTimeMs: 3_600_000,
  /** More than this times the roofline estimate is not the GPU's speed (a CPU fallback, a stall, a unit slip). */
  maxSlowdown: 50,
  /**
   * A run's process given less of its GPU's label than this had a MIG slice or a share of it: a
   * whole GPU gives at least 91.5% of it in every capture of seeds/gpu-memory.csv (an L4's, ECC on).
   */
  minMemoryShare: 0.85,
} as const;

const location = (): StoreLocation => ({
  databaseUrl: runtimeConfig().databaseUrl,
  dataDir: runtimeConfig().dataDir,
});
const locationKey = (l: StoreLocation) => l.databaseUrl ?? l.dataDir;

let opened: { key: string; store: Promise<MeasurementStore> } | undefined;

/** The store of this process's configuration, opened (and migrated) on first use. */
export function measurementStore(): Promise<MeasurementStore> {
  const l = location();
  if (opened?.key !== locationKey(l)) {
    const previous = opened?.store;
    opened = { key: locationKey(l), store: MeasurementStore.open(l).then(rekeyModels) };
    snapshot = undefined;
    void previous?.then((s) => s.close()).catch(() => {});
    opened.store.catch(() => {
      opened = undefined; // let the next request try again (and report the error again)
    });
  }
  return opened.store;
}

/**
 * Brings each stored run's `model` column, what `measurements(model:)` filters on, to the id its
 * configuration builds today, once per process as the store opens. A model's id can change between
 * releases: a layer list's hashed its keys in the order written before aacc1dd and hashes them
 * sorted now, so a run filed under the old id was listed under a name no query asks for (the
 * evidence re-derives the model from the configuration and counted it all along). A run whose
 * configuration no longer builds keeps its id (userEvidence reports it skipped).
 */
async function rekeyModels(store: MeasurementStore): Promise<MeasurementStore> {
  const renamed: { id: number; model: string }[] = [];
  for (const row of await store.list()) {
    let id: string;
    try {
      id = predictRequestOf(JSON.parse(row.configuration) as RunConfiguration).model.id;
    } catch {
      continue;
    }
    if (id !== row.model) renamed.push({ id: row.id, model: id });
  }
  await store.setModels(renamed);
  return store;
}

/** Closes the store (server shutdown, tests). */
export async function closeMeasurementStore(): Promise<void> {
  const s = opened?.store;
  opened = undefined;
  snapshot = undefined;
  if (s) await (await s).close();
}

/**
 * A run's transport as given: absent is RDMA; anything but RDMA or TCP is refused (the CLI's JSON
 * rows reach here without GraphQL's enum check, and a misspelt TCP would read as RDMA).
 */
function transportOf(t: string | null | undefined): NetworkTransport {
  if (t == null) return 'RDMA';
  if (!(NETWORK_TRANSPORTS as readonly string[]).includes(t))
    throw new InputError(
      'interNodeTransport',
      `must be one of ${NETWORK_TRANSPORTS.join(', ')} (got "${t.slice(0, 20)}")`,
    );
  return t as NetworkTransport;
}

/**
 * A run's attention as given: absent says nothing; anything but fused or eager is refused (the CLI's
 * JSON rows reach here without GraphQL's enum check, and a misspelt EAGER would read as the default).
 */
function attentionOf(a: string | null | undefined): AttentionImplementation | undefined {
  if (a == null) return undefined;
  if (!(ATTENTION_IMPLEMENTATIONS as readonly string[]).includes(a))
    throw new InputError(
      'attention',
      `must be one of ${ATTENTION_IMPLEMENTATIONS.map((x) => x.toUpperCase()).join(', ')} (got "${a.slice(0, 20)}")`,
    );
  return a as AttentionImplementation;
}

/**
 * How a run's attention cores ran, where it does not say but its note does: a note the harness
 * wrote names what built the model and the PyTorch it ran on ("builder ...; torch 1.13.1"), and a
 * PyTorch before 2.0 has no fused attention kernel, so every harness builder ran the cores op by op
 * there (the layer replay, transformers, torchvision's ViT). A run the harness wrote before it had
 * an `attention` column would otherwise read as a fused run on a slow GPU. Another note says nothing
 * (a user's own code on PyTorch 1.x may have called flash-attn).
 */
export function attentionFromNote(note: string | null | undefined): AttentionImplementation | undefined {
  return note && /(^|; )builder [^;]+;/.test(note) && /(^|; )torch 1\.\d/.test(note) ? 'eager' : undefined;
}

/**
 * A stored run's attention: as it was recorded, else as its harness note tells where its model has
 * attention cores (predictRequestOf); null where neither says (predict's default for the model).
 */
export function runAttention(c: RunConfiguration, note: string | null): AttentionImplementation | null {
  if (c.attention != null || !attentionFromNote(note)) return c.attention ?? null;
  try {
    return predictRequestOf(c, note).attention ?? null;
  } catch {
    return null; // a configuration that no longer builds: listed, not predicted
  }
}

/**
 * A configuration -> the predictor's request; throws BAD_USER_INPUT naming the field. A run's
 * `note` says how its attention ran where the run does not (attentionFromNote).
 */
export function predictRequestOf(c: RunConfiguration, note?: string | null): PredictRequest {
  // The store keeps full-training runs only (no column says which weights a run trained).
  fullTrainingOnly('workload.fineTuning', c.workload as { fineTuning?: string | null }, 'in recorded runs');
  const { model } = workload({ ...(c.workload as object), samples: 1 } as Parameters<typeof workload>[0]);
  const gpu = gpuById('gpu', c.gpu);
  const fromNote = attentionFromNote(note);
  const attention =
    attentionOf(c.attention) ??
    (fromNote && parallelStructure(costOf(model)).hasAttention ? fromNote : undefined);
  return {
    model,
    gpu,
    precision: c.precision,
    batchSizePerGpu: integer('batchSizePerGpu', c.batchSizePerGpu, 1, LIMITS.batchSize),
    gpusPerNode: integer('gpusPerNode', c.gpusPerNode, 1, LIMITS.gpusPerNode),
    nodes: integer('nodes', c.nodes, 1, LIMITS.nodes),
    gradAccumSteps: integer('gradAccumSteps', c.gradAccumSteps, 1, LIMITS.gradAccum),
    fp32UsesTf32: c.fp32UsesTf32,
    interNodeGbps:
      c.interNodeGbps == null
        ? defaultInterNodeGbps(gpu.id)
        : finiteNumber('interNodeGbps', c.interNodeGbps, 0, LIMITS.gbps, { exclusiveMin: true }),
    ...(transportOf(c.interNodeTransport) === 'TCP' ? { interNodeTransport: 'TCP' as const } : {}),
    parallelism: parallelismOf(c.parallelism),
    ...statedChannelsLast(c),
    ...(attention ? { attention } : {}),
  };
}

/**
 * Why a measured run cannot be what it claims, or undefined. A step cannot beat the GPU's fastest
 * datasheet peak on the model's FLOPs; one far slower than the roofline is not the GPU's speed;
 * a run cannot have allocated more memory than the GPU has, nor had more than its label; a process
 * given under RUN_LIMITS.minMemoryShare of the label had a MIG slice or a share of the GPU, not the
 * GPU its plans are for (a whole one gives at least 91.5% of its label: seeds/gpu-memory.csv).
 */
export function physicsProblem(
  req: PredictRequest,
  p: Prediction,
  stepTimeMs: number,
  peakMemoryGb: number | null | undefined,
  gpuMemoryGb?: number | null,
): string | undefined {
  if (!Number.isFinite(stepTimeMs) || stepTimeMs <= 0)
    return `stepTimeMs: must be a positive number of milliseconds (got ${stepTimeMs})`;
  if (stepTimeMs > RUN_LIMITS.maxStepTimeMs)
    return `stepTimeMs: ${stepTimeMs} ms is more than an hour per optimizer step; give one step's time in milliseconds`;
  const cost = costOf(req.model);
  // Each GPU's share of the step's work: its TP share of its pipeline stage, of its 1/CP of each sequence.
  const split =
    (req.parallelism?.tensorParallel ?? 1) *
    (req.parallelism?.pipelineParallel ?? 1) *
    (req.parallelism?.contextParallel ?? 1);
  const flops =
    ((cost.forwardFlops + cost.backwardFlops) * req.batchSizePerGpu * (req.gradAccumSteps ?? 1)) / split;
  const peak = Math.max(...Object.values(req.gpu.peakTflops).map((x) => x ?? 0));
  if (peak > 0) {
    const floorMs = (flops / (peak * 1e12)) * 1e3;
    if (stepTimeMs < floorMs)
      return `stepTimeMs: ${stepTimeMs} ms is faster than ${req.gpu.id} can run this step: ${(flops / 1e9).toPrecision(4)} GFLOP per GPU at its fastest datasheet peak (${peak} TFLOPS) take at least ${floorMs.toPrecision(4)} ms`;
  }
  if (stepTimeMs > RUN_LIMITS.maxSlowdown * p.stepTimeMs)
    return `stepTimeMs: ${stepTimeMs} ms is more than ${RUN_LIMITS.maxSlowdown}x the roofline estimate (${p.stepTimeMs.toPrecision(4)} ms): not the GPU's speed (a CPU fallback, a stalled input pipeline, or seconds given as ms?)`;
  if (peakMemoryGb != null) {
    if (!Number.isFinite(peakMemoryGb) || peakMemoryGb <= 0)
      return `peakMemoryGb: must be a positive number of GB (got ${peakMemoryGb})`;
    if (peakMemoryGb > req.gpu.memoryGb)
      return `peakMemoryGb: ${peakMemoryGb} GB is more than ${req.gpu.id} has (${req.gpu.memoryGb} GB)`;
  }
  if (gpuMemoryGb != null) {
    const label = req.gpu.memoryGb,
      least = RUN_LIMITS.minMemoryShare * label;
    if (!Number.isFinite(gpuMemoryGb) || gpuMemoryGb < least || gpuMemoryGb > label)
      return `gpuMemoryGb: must be ${+least.toFixed(2)} to ${label} GiB on ${req.gpu.id} (its label is ${label} GB; under ${RUN_LIMITS.minMemoryShare * 100}% of it is a MIG slice or a shared GPU, not the whole one) (got ${gpuMemoryGb})`;
    if (peakMemoryGb != null && peakMemoryGb > gpuMemoryGb)
      return `peakMemoryGb: ${peakMemoryGb} GB is more than the run's process had (gpuMemoryGb ${gpuMemoryGb})`;
  }
  return undefined;
}

const text = (field: string, v: string | null | undefined, max: number): string | null => {
  if (v == null) return null;
  if (v.length > max) throw new InputError(field, `at most ${max} characters (got ${v.length})`);
  return v;
};

export function checkOwner(owner: string): string {
  if (!owner.trim() || owner.length > RUN_LIMITS.ownerLength)
    throw new InputError('owner', `must be 1 to ${RUN_LIMITS.ownerLength} characters`);
  return owner;
}

const reasonOf = (e: unknown) =>
  e instanceof InputError ? e.withField : e instanceof Error ? e.message : String(e);

/** The configuration as stored: every default filled in, so it rebuilds the same request later. */
const storedConfiguration = (r: RunInput): RunConfiguration => ({
  workload: { ...r.workload, samples: 1 },
  gpu: r.gpu,
  nodes: r.nodes,
  gpusPerNode: r.gpusPerNode,
  batchSizePerGpu: r.batchSizePerGpu,
  gradAccumSteps: r.gradAccumSteps,
  precision: r.precision,
  framework: r.framework,
  xla: r.xla,
  fp32UsesTf32: r.fp32UsesTf32,
  channelsLast: r.channelsLast ?? null,
  interNodeGbps: r.interNodeGbps ?? null,
  interNodeTransport: r.interNodeTransport ?? null,
  parallelism: r.parallelism ?? null,
  attention: r.attention ?? null,
});

export interface RecordResult {
  stored: number;
  ids: number[];
  rejected: { index: number; reason: string }[];
}

/**
 * Checks every run and stores those that pass, all in one transaction; a rejected run is stored
 * in no part and says why.
 */
export async function recordRuns(runs: RunInput[], owner: string, now = new Date()): Promise<RecordResult> {
  checkOwner(owner);
  if (runs.length > RUN_LIMITS.runsPerCall)
    throw new InputError('runs', `at most ${RUN_LIMITS.runsPerCall} runs per call (got ${runs.length})`);
  const rows: NewMeasurementRun[] = [];
  const rejected: RecordResult['rejected'] = [];
  runs.forEach((r, index) => {
    try {
      const req = predictRequestOf(r, r.note);
      const p = predict(req, loadEfficiency()); // throws when the configuration cannot be built (precision, layout, ...)
      const problem = physicsProblem(req, p, r.stepTimeMs, r.peakMemoryGb, r.gpuMemoryGb);
      if (problem) {
        rejected.push({ index, reason: problem });
        return;
      }
      rows.push({
        owner,
        recorded_at: now.toISOString(),
        model: req.model.id,
        gpu: req.gpu.id,
        precision: r.precision,
        framework: r.framework,
        nodes: req.nodes,
        gpus_per_node: req.gpusPerNode,
        batch_size_per_gpu: req.batchSizePerGpu,
        grad_accum_steps: req.gradAccumSteps ?? 1,
        configuration: JSON.stringify(storedConfiguration(r)),
        step_time_ms: r.stepTimeMs,
        peak_memory_gb: r.peakMemoryGb ?? null,
        gpu_memory_gb: r.gpuMemoryGb ?? null,
        source: text(`runs[${index}].source`, r.source, RUN_LIMITS.sourceLength) ?? 'user',
        note: text(`runs[${index}].note`, r.note, RUN_LIMITS.noteLength),
      });
    } catch (e) {
      rejected.push({ index, reason: reasonOf(e) });
    }
  });
  const ids = rows.length ? await (await measurementStore()).insert(rows) : [];
  snapshot = undefined;
  return { stored: ids.length, ids, rejected };
}

export async function deleteRuns(owner: string, ids?: number[] | null): Promise<number> {
  checkOwner(owner);
  if (!MeasurementStore.exists(location())) return 0;
  const n = await (await measurementStore()).delete(owner, ids ?? undefined);
  snapshot = undefined;
  return n;
}

export async function listRuns(filter: RunFilter): Promise<StoredRun[]> {
  if (!MeasurementStore.exists(location())) return [];
  const rows = await (await measurementStore()).list(filter);
  const ev = await userEvidence();
  return rows.map((r) => {
    const c = JSON.parse(r.configuration) as RunConfiguration;
    return {
      ...r,
      predictedStepTimeMs: ev?.predicted.get(r.id) ?? null,
      predictedPeakMemoryGb: ev?.predictedMemory.get(r.id) ?? null,
      modelTflopsPerGpu: ev?.measuredUse.get(r.id)?.modelTflopsPerGpu ?? null,
      mfu: ev?.measuredUse.get(r.id)?.mfu ?? null,
      parallelism: runParallelism(r, c),
      attention: runAttention(c, r.note),
    };
  });
}

let measuredGpus: ReadonlySet<string> | undefined;
/** The GPUs the shipped measurements cover (once per process: every evidence pass asks, run by run). */
function shippedGpus(): ReadonlySet<string> {
  measuredGpus ??= new Set(loadMeasurements().map((m) => m.gpu));
  return measuredGpus;
}

let shippedIndex: ShippedConfigurations | undefined;
/** The shipped measurements with their analytical predictions, indexed once per process (about half a second). */
function shippedConfigurations(): ShippedConfigurations {
  shippedIndex ??= new ShippedConfigurations(
    examples(loadMeasurements(), loadEfficiency()).map(exampleConfiguration),
  );
  return shippedIndex;
}

interface Snapshot {
  key: string;
  version: string;
  evidence: UserEvidence;
  /** Run id -> the predictor's step time (ms) for it without the runs' calibration. */
  predicted: Map<number, number>;
  /** Run id -> the memory PyTorch allocates at its configuration as trainplan counts it, without the runs' calibration (GB). */
  predictedMemory: Map<number, number>;
  /** Run id -> its model TFLOPS per GPU and MFU at its measured step time (predictor/utilization.ts). */
  measuredUse: Map<number, Utilization>;
  /** Runs whose configuration no longer builds (a zoo change): id and why. */
  skipped: { id: number; reason: string }[];
  /** The learned correction the runs were compared with: a current refit, else the shipped one. */
  learned: LearnedState;
  /** The runs whose configurations build, with their analytical predictions. */
  runs: BuiltRun[];
  /** The shipped correction (a refit trained on the runs cannot judge them one at a time). */
  shipped: LearnedState;
  /** Run id -> its step predicted from the other runs (heldOutPredictions), once asked for. */
  heldOut?: Promise<Map<number, number>>;
}
let snapshot: Snapshot | undefined;

/** What counts as measured once the user's runs count too (evidence levels, minEvidence); undefined without runs. */
export const measuredWithRuns = (user: Pick<UserEvidence, 'runs'> | undefined): MeasuredSet | undefined =>
  user ? withRuns(seedsMeasured(), user.runs.all) : undefined;

/**
 * The recorded runs as evidence for the predictor; undefined when there are none. Without a learned
 * model (onnxruntime did not load) the runs still size their models' memory and their GPUs'
 * capacity, and count as measurements; their steps calibrate nothing, the analytical estimate
 * having no correction to calibrate.
 */
export async function userEvidence(learned?: LearnedState): Promise<
  | (UserEvidence & {
      predicted: Map<number, number>;
      predictedMemory: Map<number, number>;
      measuredUse: Map<number, Utilization>;
      version: string;
      learned: LearnedState;
    })
  | undefined
> {
  const l = location();
  if (!MeasurementStore.exists(l)) return undefined;
  const store = await measurementStore();
  const v = await store.version();
  if (v.count === 0) return undefined;
  const shipped = learned ?? (await learnedPredictor());
  // A refit written (or replaced) by `trainplan calibrate refit` changes the answers too, and so does
  // answering without the learned model.
  const refitKey = refitFileKey();
  const version = `${v.count}.${v.maxId}${refitKey ? `|${refitKey}` : ''}${shipped.predictor ? '' : '|analytical'}`;
  if (snapshot && snapshot.key === locationKey(l) && snapshot.version === version)
    return {
      ...snapshot.evidence,
      predicted: snapshot.predicted,
      predictedMemory: snapshot.predictedMemory,
      measuredUse: snapshot.measuredUse,
      version,
      learned: snapshot.learned,
    };
  const rows = await store.list();
  // The refitted correction when it is current for these runs (service/refit.ts), else the shipped one.
  const choice = await chooseLearned(rows);
  const state = choice.learned ?? shipped;
  const built = buildRuns(rows);
  const settings = loadCalibrationSettings();
  // Runs a current refit trained on are in its evidence already: merged in again they would count twice.
  const { evidence, predicted } = await evidenceFrom(
    built.runs,
    built.runs.filter(({ row }) => !choice.trainedRunIds.has(row.id)),
    state,
    settings,
  );
  const memory = memoryFrom(built.runs, settings);
  const capacities = recordedCapacities(
    built.runs.map(({ row }) => ({ gpu: row.gpu, gpuMemoryGb: row.gpu_memory_gb })),
  );
  snapshot = {
    key: locationKey(l),
    version,
    evidence: {
      ...evidence,
      ...(choice.note ? { note: choice.note } : {}),
      ...(memory.size ? { memory } : {}),
      ...(capacities.size ? { capacities } : {}),
    },
    predicted,
    predictedMemory: new Map(built.runs.map(({ row, p }) => [row.id, allocatedGb(p.memory)])),
    // The model's FLOPs over the step the run measured, as an answer's MFU counts them over its predicted one.
    measuredUse: new Map(
      built.runs.map(({ row, req, p }) => [row.id, utilizationAt(p, req.gpu, row.step_time_ms)]),
    ),
    skipped: built.skipped,
    learned: state,
    runs: built.runs,
    shipped,
  };
  return {
    ...snapshot.evidence,
    predicted,
    predictedMemory: snapshot.predictedMemory,
    measuredUse: snapshot.measuredUse,
    version,
    learned: state,
  };
}

/** A stored run whose configuration builds, with its analytical prediction and correction input. */
interface BuiltRun {
  row: MeasurementRunRow;
  req: PredictRequest;
  p: Prediction;
  item: CorrectionInput;
}

function buildRuns(rows: readonly MeasurementRunRow[]): { runs: BuiltRun[]; skipped: Snapshot['skipped'] } {
  const runs: BuiltRun[] = [];
  const skipped: Snapshot['skipped'] = [];
  for (const row of rows) {
    try {
      const c = JSON.parse(row.configuration) as RunConfiguration;
      const req = predictRequestOf(c, row.note);
      const p = predict(req, loadEfficiency());
      runs.push({
        row,
        req,
        p,
        item: correctionInputOf(req, p, {
          framework: row.framework as Framework,
          xla: c.xla === true,
        }),
      });
    } catch (e) {
      skipped.push({ id: row.id, reason: reasonOf(e) });
    }
  }
  return { runs, skipped };
}

/**
 * What the runs' peaks say of their models' memory (predictor/memory-calibration.ts): each PyTorch
 * run with a peak against the prediction at its configuration. (The peak is PyTorch's
 * max_memory_allocated, which another framework's run does not report.)
 */
function memoryFrom(
  runs: readonly BuiltRun[],
  settings: CalibrationSettings,
): Map<string, MemoryCalibration> {
  const observations: { key: string; scale: number }[] = [];
  for (const { row, req, p } of runs) {
    if (row.peak_memory_gb == null || row.framework !== 'PyTorch') continue;
    const scale = activationScaleOf(p.memory, row.peak_memory_gb, settings.memory);
    if (scale !== null) observations.push({ key: memoryKey(req.model.id, req.precision), scale });
  }
  return memoryCalibrations(observations);
}

/** A run's exact-configuration identity: the key calibration gives its repeats (calibration.ts). */
const runConfiguration = (run: BuiltRun): string => correctionConfiguration(run.item);

/**
 * The evidence a set of runs gives every prediction: `indexRuns` (of `runs`) as evidence rows like
 * the shipped measurements, and each run's error against the prediction made with that evidence but
 * without calibration by the runs (the calibration's input; also `predicted`, run id -> ms).
 */
async function evidenceFrom(
  runs: readonly BuiltRun[],
  indexRuns: readonly BuiltRun[],
  learned: LearnedState,
  settings: CalibrationSettings,
): Promise<{ evidence: UserEvidence; predicted: Map<number, number> }> {
  // Evidence rows as the shipped measurements are: log(measured / analytical throughput), which
  // for one configuration is log(analytical / measured step time).
  const index = new EvidenceIndex(
    // The model as its configuration builds it today, as calibration keys it below (a stored
    // run's model column keeps the id it was recorded under).
    indexRuns.map(({ row, req, p }) => ({
      model: req.model.id,
      gpu: row.gpu,
      precision: row.precision as Precision,
      framework: row.framework,
      logResidual: Math.log(p.stepTimeMs / row.step_time_ms),
    })),
  );
  // Without the learned model a run's prediction is the analytical step (no correction: factor 1).
  const k = learned.predictor
    ? await learned.predictor.correct(
        runs.map((r) => r.item),
        { index, runs: new RecordedRuns([]), settings },
      )
    : { mid: runs.map(() => 1) };
  const predicted = new Map<number, number>();
  const recorded: RecordedEvidence[] = runs.map((run, i) => {
    const { row, req } = run;
    const predictedMs = run.p.stepTimeMs * k.mid[i];
    predicted.set(row.id, predictedMs);
    return {
      model: req.model.id,
      gpu: req.gpu.id,
      precision: row.precision as Precision,
      framework: row.framework,
      configuration: runConfiguration(run),
      logError: Math.log(row.step_time_ms / predictedMs),
    };
  });
  // Runs on a GPU the shipped measurements never saw relate it to the GPUs they did (transfer.ts).
  const transferRuns: TransferConfiguration[] = runs.map(({ row, req, p, item }) => ({
    model: req.model.id,
    gpu: req.gpu.id,
    precision: row.precision as Precision,
    seqOrImage: item.model.seqOrImage,
    batchSizePerGpu: p.execution.batchSizePerGpu,
    gpus: p.execution.gpusPerNode * p.execution.nodes,
    logResidual: Math.log(p.stepTimeMs / row.step_time_ms),
  }));
  // The shipped index costs about half a second: built only once a run is on an unmeasured GPU.
  const transfer = transferRuns.some((r) => !shippedGpus().has(r.gpu))
    ? new NeighbourTransfer(shippedConfigurations(), transferRuns, settings.transfer, gpuChips(loadGpus()))
    : undefined;
  return {
    evidence: { index, runs: new RecordedRuns(recorded), settings, ...(transfer ? { transfer } : {}) },
    predicted,
  };
}

/**
 * Configurations are held out in at most this many folds: with more, each fold holds several and a
 * run is predicted from the runs outside its fold (about 95% of them), so a store of N runs costs
 * 20 calibrations of N runs, not N of N (bench/held-out-runs.ts).
 */
export const HELD_OUT_FOLDS = 20;

/**
 * Above this many runs the store's runs are not each predicted from the others: 20 folds cost
 * about 1.4 ms a run on two cores (0.3 s for 200 runs, 1.4 s for 1,000: bench/held-out-runs.ts),
 * once per store version; this bounds that wait near 3 s.
 */
export const HELD_OUT_RUNS_LIMIT = 2000;

/**
 * Each run's step as the other recorded runs predict it: the shipped correction, calibrated and
 * given evidence by every stored run of another configuration, exactly as a prediction for a
 * configuration nobody has run yet is. A configuration's repeats are held out together: left in,
 * a repeat predicts its twin almost exactly (calibration weighs "this exact configuration" most),
 * which says nothing about the next configuration. With more than HELD_OUT_FOLDS configurations,
 * they are dealt into that many folds (in order of their first run) and a fold's runs are
 * predicted from the runs of the other folds. A refit is not used: it was trained on the run
 * itself. Empty with fewer than two configurations or more than HELD_OUT_RUNS_LIMIT runs.
 */
export async function heldOutPredictions(): Promise<Map<number, number>> {
  if (!(await userEvidence()) || !snapshot) return new Map();
  const s = snapshot;
  // The analytical fallback learns nothing from the other runs: no held-out predictions to show.
  if (!s.shipped.predictor) return new Map();
  s.heldOut ??= (async () => {
    const out = new Map<number, number>();
    if (s.runs.length > HELD_OUT_RUNS_LIMIT) return out;
    const keys = s.runs.map(runConfiguration);
    const configurations = [...new Set(keys)];
    if (configurations.length < 2) return out;
    const folds = Math.min(configurations.length, HELD_OUT_FOLDS);
    const foldOf = new Map(configurations.map((c, i) => [c, i % folds]));
    const runFold = keys.map((k) => foldOf.get(k)!);
    for (let f = 0; f < folds; f++) {
      const held = s.runs.filter((_, i) => runFold[i] === f);
      const others = s.runs.filter((_, i) => runFold[i] !== f);
      const { evidence } = await evidenceFrom(others, others, s.shipped, s.evidence.settings);
      const k = await s.shipped.predictor!.correct(
        held.map((r) => r.item),
        evidence,
      );
      held.forEach((run, i) => {
        const ms = run.p.stepTimeMs * k.mid[i];
        if (Number.isFinite(ms) && ms > 0) out.set(run.row.id, ms);
      });
    }
    return out;
  })().catch((e: unknown) => {
    // Not kept: the next request tries again rather than failing until the store changes.
    s.heldOut = undefined;
    throw e;
  });
  return s.heldOut;
}
