// The learned correction at run time: the committed ONNX file (seeds/predictor.onnx) and its
// metadata (seeds/predictor.json: feature names, measured evidence, interval quantiles), run with
// onnxruntime-node in one batched call per request. If the file is missing or will not load,
// callers fall back to the analytical estimate and say so.
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import type { Breakdown, Execution } from '../step.js';
import type { GpuSpec, MathMode, Precision } from '../types.js';
import { achievableBasis } from '../achievable.js';
import {
  EvidenceIndex,
  evidenceCase,
  mergeEvidence,
  type Evidence,
  type EvidenceGroup,
  type EvidenceLevel,
} from './evidence.js';
import { calibrate, configurationKey, NO_CALIBRATION, type UserEvidence } from './calibration.js';
import {
  DEFAULT_SOFTWARE,
  FEATURE_VERSION,
  featureNames,
  writeFeatures,
  type ModelFeatures,
  type Software,
} from './features.js';
import { loadOnnxCorrection, type OnnxCorrection } from './onnx.js';

export const MODEL_FILE = new URL('../../seeds/predictor.onnx', import.meta.url);
export const META_FILE = new URL('../../seeds/predictor.json', import.meta.url);

/** log(actual step / predicted step) quantiles: the interval is [step x e^q10, step x e^q90]. */
export interface Interval {
  q10: number;
  q90: number;
  rows: number;
}

export interface LearnedMeta {
  name: string;
  featureVersion: number;
  featureNames: string[];
  params: Record<string, number | number[] | undefined>;
  trainedRows: number;
  /** Measured log(measured / analytical) per (model, GPU, precision), aggregated. */
  evidence: EvidenceGroup[];
  intervals: {
    byPrecision: Partial<Record<Precision, Interval>>;
    measuredModel: Interval;
    unmeasuredModel: Interval;
    unmeasuredGpu: Interval;
  };
  validation: Record<string, unknown>;
}

export interface CorrectionInput {
  modelId: string;
  model: ModelFeatures;
  gpu: GpuSpec;
  exec: Execution;
  stepMs: number;
  breakdown: Breakdown;
  dominantMath: MathMode;
  /** Framework and compiler; PyTorch without XLA when the caller does not say. */
  software?: Software;
}

export interface Corrections {
  /** Multipliers on the analytical step time: estimate, P10, P90. */
  mid: Float64Array;
  lo: Float64Array;
  hi: Float64Array;
  /** Which case each prediction is (measured / calibrated / unmeasured). */
  cases: string[];
  levels: EvidenceLevel[];
  /** How many of the user's recorded runs moved each prediction. */
  runs: Int32Array;
}

export class LearnedPredictor {
  private evidenceCache = new Map<string, Evidence>();
  /** GPUs with at least one measurement in the evidence, and `model|gpu` pairs. */
  private readonly measuredGpus: Set<string>;
  private readonly measuredPairs: Set<string>;
  private constructor(
    readonly meta: LearnedMeta,
    private readonly onnx: OnnxCorrection,
    private readonly index: EvidenceIndex,
  ) {
    this.measuredGpus = new Set(meta.evidence.map((e) => e.gpu));
    this.measuredPairs = new Set(meta.evidence.map((e) => `${e.model}|${e.gpu}`));
  }

  get name(): string {
    return this.meta.name;
  }

  static async load(
    model: string | URL = MODEL_FILE,
    meta: string | URL = META_FILE,
  ): Promise<LearnedPredictor> {
    const m = JSON.parse(readFileSync(meta, 'utf8')) as LearnedMeta;
    const names = featureNames(true);
    if (m.featureVersion !== FEATURE_VERSION || m.featureNames.join(',') !== names.join(',')) {
      throw new Error(
        `learned model was trained on feature version ${m.featureVersion} (${m.featureNames.length} features); this code builds version ${FEATURE_VERSION} (${names.length}): retrain with npm run train:predictor`,
      );
    }
    // One intra-op thread per process in --workers mode (the workers already fill the cores).
    const threads = Number(process.env.TRAINPLAN_ORT_THREADS ?? (cluster.isWorker ? 1 : 2));
    const onnx = await loadOnnxCorrection(
      typeof model === 'string' ? model : model.pathname,
      names.length,
      threads,
    );
    const index = new EvidenceIndex([]);
    index.addAggregated(m.evidence);
    return new LearnedPredictor(m, onnx, index);
  }

  evidence(modelId: string, gpuId: string, precision: Precision, framework: string): Evidence {
    const key = `${modelId}|${gpuId}|${precision}|${framework}`;
    let e = this.evidenceCache.get(key);
    if (!e) {
      e = this.index.query(modelId, gpuId, precision, framework);
      this.evidenceCache.set(key, e);
    }
    return e;
  }

  private interval(precision: Precision, ev: Evidence, gpuMeasured: boolean, splitLayout: boolean): Interval {
    let iv = this.meta.intervals.byPrecision[precision] ?? this.meta.intervals.measuredModel;
    // Never narrower than the held-out errors of the case at hand: leave-one-model-out for an
    // unmeasured model (or a layout no measurement used), leave-one-GPU-out for an unmeasured GPU.
    const widen = (u: Interval) => {
      iv = { q10: Math.min(iv.q10, u.q10), q90: Math.max(iv.q90, u.q90), rows: u.rows };
    };
    if ((ev.modelN === 0 && ev.exactN === 0) || splitLayout) widen(this.meta.intervals.unmeasuredModel);
    if (!gpuMeasured) widen(this.meta.intervals.unmeasuredGpu);
    return iv;
  }

  /**
   * Corrected step times. `user`: a user's recorded runs, as evidence features (merged with the
   * shipped measurements) and as a calibration of the result (predictor/learned/calibration.ts).
   */
  async correct(items: CorrectionInput[], user?: UserEvidence): Promise<Corrections> {
    const d = this.onnx.featureCount;
    const X = new Float32Array(items.length * d);
    const evs: Evidence[] = [];
    items.forEach((it, i) => {
      const sw = it.software ?? DEFAULT_SOFTWARE;
      const shipped = this.evidence(it.modelId, it.gpu.id, it.exec.precision, sw.framework);
      const ev = user
        ? mergeEvidence(shipped, user.index.query(it.modelId, it.gpu.id, it.exec.precision, sw.framework))
        : shipped;
      evs.push(ev);
      writeFeatures(
        X,
        i * d,
        true,
        it.model,
        it.gpu,
        it.exec,
        it.stepMs,
        it.breakdown,
        it.dominantMath,
        ev,
        sw,
      );
    });
    const out = await this.onnx.run(X, items.length);
    const mid = new Float64Array(items.length),
      lo = new Float64Array(items.length),
      hi = new Float64Array(items.length);
    const cases: string[] = [];
    const levels: EvidenceLevel[] = [];
    const runs = new Int32Array(items.length);
    items.forEach((it, i) => {
      const c = user ? this.calibration(it, user) : NO_CALIBRATION;
      // The model predicts log(measured throughput / analytical): time scales by its inverse.
      const k = Math.exp(-out[i]) * c.scale;
      const gpuMeasured = this.measuredGpus.has(it.gpu.id);
      const par = it.exec.parallelism;
      // Every training row ran plain data parallelism: a sharded or split layout is extrapolation.
      const split =
        !!par &&
        (par.tensorParallel > 1 ||
          par.pipelineParallel > 1 ||
          (par.contextParallel ?? 1) > 1 ||
          par.zeroStage > 0 ||
          par.recompute !== 'none');
      let iv = this.interval(it.exec.precision, evs[i], gpuMeasured, split);
      // Runs of this model on this GPU: the interval is the calibrated one measured on the
      // benchmark, widened by how much the runs disagree (1.28 standard deviations: P10/P90).
      if (c.modelOnGpuRuns > 0 && user && !split) {
        const cal = user.settings.modelOnGpu;
        iv = {
          q10: Math.min(cal.q10, -1.28 * c.spread),
          q90: Math.max(cal.q90, 1.28 * c.spread),
          rows: cal.rows,
        };
      }
      mid[i] = k;
      lo[i] = k * Math.exp(iv.q10);
      hi[i] = k * Math.exp(iv.q90);
      runs[i] = c.runs;
      const shippedPair = this.measuredPairs.has(`${it.modelId}|${it.gpu.id}`);
      levels.push(
        shippedPair || c.modelOnGpuRuns > 0
          ? 'MODEL_MEASURED_ON_GPU'
          : gpuMeasured || c.gpuRuns > 0
            ? 'GPU_MEASURED'
            : 'UNMEASURED',
      );
      cases.push(
        evidenceCase(evs[i]) +
          (gpuMeasured
            ? ''
            : c.gpuRuns > 0
              ? `; ${it.gpu.id} has no shipped measurements`
              : `; ${it.gpu.id} has no training measurements (${achievableBasis(it.gpu, it.dominantMath)})`) +
          (split ? '; no measurement used tensor/pipeline/context parallelism, ZeRO or recomputation' : '') +
          (it.exec.precision === 'FP4'
            ? '; FP4 is unmeasured: no FP4 training run or FP4 kernel in the data (FP8 kernel curve at the FP4 peak)'
            : '') +
          (c.runs > 0
            ? `; calibrated by ${c.runs} of your runs (${c.gpuRuns} on ${it.gpu.id}, ${c.modelOnGpuRuns} of this model on it${c.sameConfigurationRuns ? `, ${c.sameConfigurationRuns} of this exact configuration` : ''})`
            : ''),
      );
    });
    return { mid, lo, hi, cases, levels, runs };
  }

  private calibration(it: CorrectionInput, user: UserEvidence) {
    const framework = (it.software ?? DEFAULT_SOFTWARE).framework;
    const q = {
      model: it.modelId,
      gpu: it.gpu.id,
      precision: it.exec.precision,
      framework,
      configuration: configurationKey({
        model: it.modelId,
        seqOrImage: it.model.seqOrImage,
        gpu: it.gpu.id,
        precision: it.exec.precision,
        framework,
        batchSizePerGpu: it.exec.batchSizePerGpu,
        gpusPerNode: it.exec.gpusPerNode,
        nodes: it.exec.nodes,
        gradAccumSteps: it.exec.gradAccumSteps,
        parallelism: it.exec.parallelism,
      }),
    };
    return calibrate(q, user.runs.relevant(q.model, q.gpu), user.settings.weights);
  }
}

export interface LearnedState {
  predictor: LearnedPredictor | null;
  reason: string;
}
let state: Promise<LearnedState> | undefined;

/** The process-wide learned predictor, loaded once; `predictor: null` with the reason on failure. */
export function learnedPredictor(): Promise<LearnedState> {
  state ??= LearnedPredictor.load().then(
    (predictor) => ({ predictor, reason: '' }),
    (e: unknown) => {
      const reason = `learned model unavailable (${e instanceof Error ? e.message.split('\n')[0] : String(e)}); using the analytical estimate`;
      console.error(JSON.stringify({ level: 'warn', msg: reason }));
      return { predictor: null, reason };
    },
  );
  return state;
}
