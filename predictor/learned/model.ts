// The learned correction at run time: the committed ONNX file (seeds/predictor.onnx) and its
// metadata (seeds/predictor.json: feature names, measured evidence, interval quantiles), run with
// onnxruntime-node in batched runs (onnx.ts RUN_ROWS rows each, so that the event loop turns between
// them). If the file is missing or will not load, callers fall back to the analytical estimate and
// say so.
import { achievableBasis } from '../achievable.js';
import {
  DEFAULT_STACK,
  expertsEvidence,
  moeInterval,
  stackOfFramework,
  runsStackOf,
  type SoftwareStack,
} from '../software.js';
import type { Example } from './train.js';
import { readFileSync } from 'node:fs';
import { fusedAttention, stepMs, stragglerGpus, type Breakdown, type Execution } from '../step.js';
import type { GpuSpec, MathMode, Precision } from '../types.js';
import { POLICIES } from '../precision.js';
import {
  describePublishedRuns,
  measuredLlmRuns,
  publishedRunsOf,
  type PublishedRuns,
} from '../published-runs.js';
import {
  EvidenceIndex,
  evidenceCase,
  evidenceLevel,
  mergeEvidence,
  withPublishedRuns,
  withRuns,
  type MeasuredSet,
  seedsReleases,
  UNMEASURED_CASE,
  type Evidence,
  type EvidenceGroup,
  type EvidenceLevel,
} from './evidence.js';
import { calibrate, configurationKey, NO_CALIBRATION, type UserEvidence } from './calibration.js';
import { blendTransfer } from './transfer.js';
import {
  calibrateOnPublished,
  type PublishedCalibration,
  type PublishedResidual,
} from './published-calibration.js';
import { llmExamples, target } from './train.js';
import { fittedLlmRuns, isMoeRun, type LlmRun } from '../../seeds/llm.js';
import { loadCalibrationSettings } from '../../seeds/calibration.js';
import { correctionPrecision, TRAINED_AS } from './precision-twins.js';
import { gpuTwin } from './gpu-twins.js';
import {
  DEFAULT_SOFTWARE,
  FEATURE_VERSION,
  featureNames,
  writeFeatures,
  type ModelFeatures,
  type Software,
} from './features.js';
import { loadOnnxCorrection, type OnnxCorrection } from './onnx.js';
import { treeBoundsFromFile, type TreeEnsembleBounds } from './bounds.js';
import { Turns } from '../turns.js';
import { getGpu, LEARNED_META_FILE, LEARNED_MODEL_FILE, loadEfficiency } from '../../seeds/catalog.js';

/** Items written between two looks at the clock (a few milliseconds of work). */
const TURN_BLOCK = 256;

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
    /**
     * Whole (model, precision) pairs held out: a measured model in a precision no row of it ran on
     * any GPU, by the precision's matmul math (precisionMathOf; absent in older files).
     */
    unmeasuredPrecision?: Record<PrecisionMath, Interval>;
    /** Leave-one-generation-out errors: GPUs of a generation with no measured GPU (absent in older files). */
    unmeasuredGeneration?: Interval;
    /** The widest per-generation interval: GPUs of a vendor with no measured GPU. */
    unmeasuredVendor?: Interval;
    /**
     * LLM runs held out by model family: a tuned stack or a split layout (TP, PP, CP, ZeRO,
     * recomputation), what the LLM runs are and the benchmark rows are not (absent in older files).
     */
    llmRuns?: Interval;
    /**
     * The same per software stack with at least 30 runs (software.ts stackOfFramework): held out by
     * family, Megatron runs are predicted within 7% and the compiled stacks' (torchtitan, MaxText,
     * PaxML) within 29%, so one pooled interval covered 92% of the first and 31% of the second
     * (absent in older files).
     */
    llmRunsByStack?: Partial<Record<SoftwareStack, Interval>>;
    /**
     * Regimes where the GPU's figures set little of the step, so its error is wider than the
     * precision mode's: each with the held-out errors of the benchmark rows in it (absent in older
     * files).
     */
    byRegime?: RegimeInterval[];
  };
  validation: Record<string, unknown>;
  /** Present only in a model refitted on a user's runs (`trainplan calibrate refit`; refit.ts). */
  refit?: RefitInfo;
}

/**
 * What sets a step's time besides the GPU: the host (the roofline's overhead: kernel launches the GPU
 * waits for and the framework's per-step work, both on a CPU no GPU figure describes) or the exposed
 * gradient synchronisation (the links and the box). The held-out errors of rows where either is a
 * tenth of the step or more are wider than the rest (host-bound about twice): the per-precision
 * interval held a third of the host-bound rows (seeds/PREDICTOR_CARD.md, Intervals).
 */
export type Regime = 'host' | 'communication';
export const REGIMES: readonly Regime[] = ['host', 'communication'];
/**
 * A tenth of the step. Bands of 10-20% and 20% or more were measured apart too: the narrower band's
 * errors were as wide (host-bound P10/P90 -0.35/+0.35 against -0.44/+0.21), so one threshold.
 */
export const REGIME_MIN_SHARE = 0.1;

export interface RegimeInterval {
  regime: Regime;
  /** An item is in the regime when this share of its analytical step or more is the regime's. */
  minShare: number;
  /** Held out as combinations (the model and GPU measured otherwise). */
  measured: Interval;
  /** Held out as whole models. */
  unmeasuredModel: Interval;
  /** Held out as whole GPUs. */
  unmeasuredGpu: Interval;
}

/** The share of an analytical step the regime holds: the host's overhead, or exposed communication. */
export function regimeShare(regime: Regime, a: { breakdown: Breakdown; stepMs: number }): number {
  const ms = regime === 'host' ? a.breakdown.overheadMs : a.breakdown.communicationMs;
  return a.stepMs > 0 ? ms / a.stepMs : 0;
}

/** The regimes of `byRegime` an analytical step is in, with the share each holds. */
export function regimesIn(
  byRegime: readonly RegimeInterval[],
  a: { breakdown: Breakdown; stepMs: number },
): { regime: RegimeInterval; share: number }[] {
  return byRegime.flatMap((regime) => {
    const share = regimeShare(regime.regime, a);
    return share >= regime.minShare ? [{ regime, share }] : [];
  });
}

/** P10/P90 of held-out log(actual step / predicted step) errors, to 4 decimals, and how many. */
export function heldOutInterval(errs: readonly number[]): Interval {
  const s = [...errs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))];
  return { q10: Number(at(0.1).toFixed(4)), q90: Number(at(0.9).toFixed(4)), rows: errs.length };
}

/** The smallest interval holding both (the second's row count, as the widening case's). */
export const widenInterval = (iv: Interval, u: Interval): Interval => ({
  q10: Math.min(iv.q10, u.q10),
  q90: Math.max(iv.q90, u.q90),
  rows: u.rows,
});

/** One recorded run a refit trained on: what identifies it in the store. */
export interface RefitRun {
  id: number;
  recordedAt: string;
  stepTimeMs: number;
}

/** What a refitted model's meta says about its refit (absent in the shipped seeds/predictor.json). */
export interface RefitInfo {
  owner: string;
  /** ISO 8601 UTC. */
  refittedAt: string;
  /** The owner's runs it trained on: the refit is current while the owner's runs are exactly these. */
  runs: RefitRun[];
  /** The owner's runs it could not train on, and why. */
  skipped: { id: number; reason: string }[];
  shippedRows: number;
  /** sha256 of the shipped model file when refitted: a retrained shipped model makes the refit stale. */
  shippedModelSha256: string;
  /** sha256 of the refitted model file (the meta and the model are written one after the other). */
  modelSha256: string;
  /** The runs' evidence (log(measured / analytical) per model, GPU, precision), kept apart from the shipped rows'. */
  runEvidence: EvidenceGroup[];
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

/** An example as the shipped model's `correct` takes it: its analytical (precision-aware) view. */
export const correctionInputOf = (e: Example): CorrectionInput => ({
  modelId: e.row.model,
  model: e.model,
  gpu: e.gpu,
  exec: e.aware.exec,
  stepMs: e.aware.stepMs,
  breakdown: e.aware.breakdown,
  dominantMath: e.aware.dominantMath,
  software: e.software,
});

export interface Corrections {
  /** Multipliers on the analytical step time: estimate, P10, P90. */
  mid: Float64Array;
  lo: Float64Array;
  hi: Float64Array;
  /**
   * Which case prediction i is (measured / calibrated / unmeasured), in words: built when asked, as a
   * recommend shows a few dozen of the thousands of candidates it corrects (building every one was
   * about a quarter of the correction's time).
   */
  caseOf: (i: number) => string;
  levels: EvidenceLevel[];
  /** How many of the user's recorded runs moved each prediction. */
  runs: Int32Array;
  /**
   * What besides the GPU holds each step (regimesOf): its interval is at least those regimes', unless
   * the user's runs of the model on that GPU set it.
   */
  boundBy: Regime[][];
  /**
   * Per prediction: the model is measured, but no row of it ran this precision on any GPU
   * (unmeasuredPrecision); its interval is at least the held-out errors of such pairs.
   */
  precisionUnmeasured: boolean[];
}

export class LearnedPredictor {
  private evidenceCache = new Map<string, Evidence>();
  /** GPUs with at least one measurement in the evidence, and `model|gpu` pairs. */
  private readonly measuredGpus: Set<string>;
  private readonly measuredPairs: Set<string>;
  /** The shipped measurements as evidenceLevel reads them (benchmark rows and published LLM runs). */
  private readonly measured: MeasuredSet;
  /** Generations and vendors with at least one measured GPU. */
  private readonly measuredGenerations: Set<string>;
  private readonly measuredVendors: Set<string>;
  /** Where the features a candidate's node count moves sit in the feature vector (optimizer/pruned.ts). */
  readonly varyingFeatureIndex: VaryingFeatureIndex;
  private constructor(
    readonly meta: LearnedMeta,
    private readonly onnx: OnnxCorrection,
    private readonly index: EvidenceIndex,
    /** The range of the ensemble's output over a box of inputs: what lets a search skip candidates. */
    readonly bounds: TreeEnsembleBounds,
  ) {
    this.measuredGpus = new Set(meta.evidence.map((e) => e.gpu));
    this.measuredPairs = new Set(meta.evidence.map((e) => `${e.model}|${e.gpu}`));
    this.measured = withPublishedRuns({ gpus: this.measuredGpus, pairs: this.measuredPairs });
    const measured = [...this.measuredGpus].flatMap((id) => getGpu(id) ?? []);
    this.measuredGenerations = new Set(measured.map((g) => g.generation));
    this.measuredVendors = new Set(measured.map((g) => g.vendor));
    const at = (name: string) => {
      const i = meta.featureNames.indexOf(name);
      if (i < 0) throw new Error(`feature ${name} missing from the learned model`);
      return i;
    };
    this.varyingFeatureIndex = {
      logStep: at('log_analytical_step_ms'),
      fracForward: at('frac_forward'),
      fracBackward: at('frac_backward'),
      fracOptimizer: at('frac_optimizer'),
      fracMixedPrecision: at('frac_mixed_precision'),
      fracComm: at('frac_comm_exposed'),
      fracOverhead: at('frac_overhead'),
      logGpus: at('log_gpus'),
      logNodes: at('log_nodes'),
    };
  }

  get featureCount(): number {
    return this.onnx.featureCount;
  }

  get name(): string {
    return this.meta.name;
  }

  static async load(
    model: string | URL = LEARNED_MODEL_FILE,
    meta: string | URL = LEARNED_META_FILE,
  ): Promise<LearnedPredictor> {
    const m = JSON.parse(readFileSync(meta, 'utf8')) as LearnedMeta;
    const names = featureNames(true);
    if (m.featureVersion !== FEATURE_VERSION || m.featureNames.join(',') !== names.join(',')) {
      throw new Error(
        `learned model was trained on feature version ${m.featureVersion} (${m.featureNames.length} features); this code builds version ${FEATURE_VERSION} (${names.length}): retrain with npm run train:predictor`,
      );
    }
    // One intra-op thread: with two, onnxruntime splits a batch between threads and sums a row's
    // trees in an order that depends on the batch, so a candidate's correction would change (in the
    // 8th digit) with the candidates beside it. With one it is a function of the row alone, which
    // the search's pruning relies on (optimizer/pruned.ts); pruning leaves a few hundred rows a
    // request, where a second thread gains nothing.
    const onnx = await loadOnnxCorrection(
      typeof model === 'string' ? model : model.pathname,
      names.length,
      1,
    );
    // An unmeasured GPU reads a measured same-die twin's rows (gpu-twins.ts); the GPUs of a refit's
    // runs are not measured by the shipped data, so their own rows join the twin's.
    const index = new EvidenceIndex([], new Set(m.evidence.map((e) => e.gpu)));
    index.addAggregated(m.evidence);
    // A refit's runs are evidence its trees were fitted with; they do not make a GPU "measured" by
    // the shipped data (the measured sets are built from m.evidence alone).
    if (m.refit) index.addAggregated(m.refit.runEvidence);
    return new LearnedPredictor(m, onnx, index, treeBoundsFromFile(model));
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

  /** How far from the shipped measurements a GPU is: measured, the only unmeasured one of its generation, of an unmeasured generation, or of an unmeasured vendor. */
  private gpuNovelty(gpu: GpuSpec): 'measured' | 'gpu' | 'generation' | 'vendor' {
    if (this.measuredGpus.has(gpu.id)) return 'measured';
    if (!this.measuredVendors.has(gpu.vendor)) return 'vendor';
    return this.measuredGenerations.has(gpu.generation) ? 'gpu' : 'generation';
  }

  /** The regimes an item is in (none for LLM-style items: the LLM runs' interval covers them). */
  regimesOf(it: CorrectionInput): { regime: RegimeInterval; share: number }[] {
    return isLlmLike(it) ? [] : regimesIn(this.meta.intervals.byRegime ?? [], it);
  }

  /**
   * The published runs of the item's architecture on its GPU under its stack, as a calibration of
   * the estimate (published-calibration.ts); undefined where no such run exists (another stack,
   * another GPU, a model no run measured, a mixture of experts: their runs train no tree).
   */
  publishedCalibrationOf(it: CorrectionInput): PublishedCalibration | undefined {
    const names = it.model.publishedAs;
    const runsGpu = names?.length ? publishedRunsGpuOf(it.gpu) : undefined;
    if (!names?.length || !runsGpu) return undefined;
    // TUNED answers are calibrated by the MEGATRON runs its effects are fitted on.
    const stack = runsStackOf(stackOf(it));
    const key = `${names.join(',')}|${it.gpu.id}|${stack}|${it.exec.precision}`;
    let hit = this.publishedCalibrations.get(key);
    if (hit === undefined) {
      const c = calibrateOnPublished(
        it.exec.precision,
        stack,
        this.publishedResiduals(names, runsGpu, stack),
        loadCalibrationSettings().published,
      );
      hit = c ? { ...c, ...(runsGpu !== it.gpu.id ? { readAsGpu: runsGpu } : {}) } : null;
      this.publishedCalibrations.set(key, hit);
    }
    return hit ?? undefined;
  }
  /** Keyed by architecture, GPU (one with published runs, or its twin), stack and precision: bounded by the data. */
  private readonly publishedCalibrations = new Map<string, PublishedCalibration | null>();

  /**
   * Each published run's error against this model's own prediction of it: the trees fitted the
   * latest runs, so their errors are in-sample, as bench/published-calibration.ts measures them (a
   * superseded run's, publishedRunsOnGpu, is a held-out error). The tree ensemble is evaluated
   * through its bounds (a box of one point) on float32 features, as onnxruntime reads them, so this
   * stays synchronous (they differ from onnxruntime's float32 sum by its rounding).
   */
  private publishedResiduals(
    names: readonly string[],
    gpuId: string,
    stack: SoftwareStack,
  ): PublishedResidual[] {
    const runs = (publishedRunsOnGpu().get(gpuId) ?? []).filter(
      (r) => names.includes(r.model) && stackOfFramework(r.framework) === stack,
    );
    if (!runs.length) return [];
    const x = new Float32Array(this.featureCount);
    return llmExamples(loadEfficiency(), runs).map((e) => {
      this.writeFeaturesOf(correctionInputOf(e), x);
      // A box of one point: the bounds are the output widened by their slack on each side.
      const [lo, hi] = this.bounds.range(x, x);
      const out = (lo + hi) / 2;
      return {
        id: e.row.id,
        framework: e.run!.framework,
        superseded: !e.run!.isLatest,
        precision: e.row.precision,
        logError: out - target(e, true),
      };
    });
  }

  /** The LLM runs' held-out interval of the item's software stack, where the stack has its own. */
  private stackInterval(it: CorrectionInput): Interval | undefined {
    return this.meta.intervals.llmRunsByStack?.[stackOf(it)];
  }

  private interval(
    it: CorrectionInput,
    ev: Evidence,
    regimes = this.regimesOf(it),
    published = this.publishedCalibrationOf(it),
  ): Interval {
    const precision = it.exec.precision,
      gpu = it.gpu,
      llmLike = isLlmLike(it),
      moe = moeStackOf(it);
    const ivs = this.meta.intervals;
    // A mixture-of-experts model: its stack's published MoE runs' held-out errors (software.json).
    const experts = moe !== undefined ? moeInterval(moe) : undefined;
    // The architecture's own published runs on this GPU and stack calibrate it: their interval.
    let iv =
      published?.interval ??
      experts?.interval ??
      (llmLike ? (this.stackInterval(it) ?? ivs.llmRuns) : undefined) ??
      ivs.byPrecision[correctionPrecision(precision)] ??
      ivs.measuredModel;
    // Never narrower than the held-out errors of the case at hand: leave-one-model-out for an
    // unmeasured model (or a layout no measurement used), leave-one-GPU-out for an unmeasured GPU,
    // leave-one-generation-out for a GPU of an unmeasured generation, the widest generation's for
    // an unmeasured vendor (seeds/PREDICTOR_CARD.md).
    const widen = (u: Interval | undefined) => {
      if (u) iv = widenInterval(iv, u);
    };
    const unmeasuredModel = unmeasuredModelOf(ev);
    if (!llmLike && unmeasuredPrecision(ev, precision))
      widen(ivs.unmeasuredPrecision?.[precisionMathOf(precision)]);
    // A tuned stack's effects (fused elementwise traffic, GEMM rate) were fitted on transformer LLM
    // runs only: on a convolutional model they are as unmeasured as a model no row ran.
    const stackOnConvolutions = llmLike && !!it.model.convolutional;
    // Every LLM is an unmeasured model here (its published runs give no evidence features), so its
    // LLM-runs interval is widened too, unless its own runs on this GPU and stack calibrate it. Held
    // out by family (bench/llm-intervals.ts) the pooled interval alone covers 79% of the runs but 54%
    // of GPT3's and 60% of Llama-2's; the stack's own, widened, 100% of the Megatron runs and 84% of
    // the compiled stacks'.
    if (!published && (unmeasuredModel || stackOnConvolutions || (llmLike && !ivs.llmRuns)))
      widen(ivs.unmeasuredModel);
    if (experts && !experts.measured) widen(ivs.unmeasuredModel);
    const novelty = this.gpuNovelty(gpu);
    if (novelty !== 'measured') widen(ivs.unmeasuredGpu);
    // A host- or communication-bound step: the same cases, measured on rows of that regime.
    for (const { regime } of regimes) {
      widen(regime.measured);
      if (unmeasuredModel) widen(regime.unmeasuredModel);
      if (novelty !== 'measured') widen(regime.unmeasuredGpu);
    }
    if (novelty === 'generation' || novelty === 'vendor') widen(ivs.unmeasuredGeneration);
    if (novelty === 'vendor') widen(ivs.unmeasuredVendor);
    return iv;
  }

  /** The evidence features of one item: shipped measurements, merged with a user's runs when given. */
  private evidenceOf(it: CorrectionInput, user?: UserEvidence): Evidence {
    const sw = it.software ?? DEFAULT_SOFTWARE;
    const shipped = this.evidence(it.modelId, it.gpu.id, it.exec.precision, sw.framework);
    return user
      ? mergeEvidence(shipped, user.index.query(it.modelId, it.gpu.id, it.exec.precision, sw.framework))
      : shipped;
  }

  /**
   * Writes the features `correct` runs the model on for one item: with the shipped measurements'
   * evidence, or with `user`'s runs merged in.
   */
  writeFeaturesOf(
    it: CorrectionInput,
    out: Float32Array | Float64Array,
    offset = 0,
    user?: UserEvidence,
  ): Evidence {
    const ev = this.evidenceOf(it, user);
    writeFeatures(
      out as Float32Array,
      offset,
      true,
      it.model,
      it.gpu,
      it.exec,
      it.stepMs,
      it.breakdown,
      it.dominantMath,
      ev,
      it.software ?? DEFAULT_SOFTWARE,
    );
    return ev;
  }

  /** The interval an item's estimate gets without a user's runs; it does not depend on the model's output. */
  intervalOf(it: CorrectionInput): Interval {
    return this.interval(it, this.evidenceOf(it));
  }

  /**
   * Corrected step times. `user`: a user's recorded runs, as evidence features (merged with the
   * shipped measurements) and as a calibration of the result (predictor/learned/calibration.ts).
   */
  async correct(items: CorrectionInput[], user?: UserEvidence): Promise<Corrections> {
    // Each plain data-parallel item's single-GPU reference goes in the same batch (one per distinct
    // reference); its corrected step is the item's floor (singleGpuReference).
    const refs: CorrectionInput[] = [];
    const refOf = new Int32Array(items.length).fill(-1);
    const refAt = new Map<string, number>();
    items.forEach((it, i) => {
      const ref = singleGpuReference(it);
      if (!ref) return;
      const key = referenceKey(ref);
      let j = refAt.get(key);
      if (j === undefined) {
        j = refs.length;
        refs.push(ref);
        refAt.set(key, j);
      }
      refOf[i] = j;
    });
    const all = refs.length ? [...items, ...refs] : items;
    const d = this.onnx.featureCount;
    const X = new Float32Array(all.length * d);
    // Tens of thousands of items take a while to write and to read back: the event loop is given
    // back between blocks of them, as the search gives it (predictor/turns.ts), and onnxruntime,
    // which runs on this thread, gives it back between its runs (onnx.ts RUN_ROWS).
    let turns = new Turns();
    const evs: Evidence[] = new Array<Evidence>(all.length);
    try {
      for (let i = 0; i < all.length; i++) {
        if (i % TURN_BLOCK === 0 && turns.due()) await turns.pause();
        evs[i] = this.writeFeaturesOf(all[i], X, i * d, user);
      }
    } finally {
      turns.end();
    }
    const out = await this.onnx.run(X, all.length);
    turns = new Turns();
    try {
      return await this.corrections(items, all, refOf, evs, out, turns, user);
    } finally {
      turns.end();
    }
  }

  /** correct(), once onnxruntime has answered: the factors, intervals, floors and evidence. */
  private async corrections(
    items: CorrectionInput[],
    all: CorrectionInput[],
    refOf: Int32Array,
    evs: Evidence[],
    out: Float32Array,
    turns: Turns,
    user?: UserEvidence,
  ): Promise<Corrections> {
    const mid = new Float64Array(all.length),
      lo = new Float64Array(all.length),
      hi = new Float64Array(all.length);
    const calibrations = all.map((it) => (user ? this.calibration(it, user) : NO_CALIBRATION));
    const publishedCal = all.map((it) => this.publishedCalibrationOf(it));
    const transfers = all.map((it) =>
      user?.transfer && !isLlmLike(it) ? this.transferred(it, user) : undefined,
    );
    if (turns.due()) await turns.pause();
    const regimes = all.map((it) => this.regimesOf(it));
    // Runs of this model on this GPU set the interval themselves (below), not the shipped errors.
    const runsSetInterval = all.map(
      (it, i) => !!user && calibrations[i].modelOnGpuRuns > 0 && !isLlmLike(it),
    );
    all.forEach((it, i) => {
      const c = calibrations[i];
      // The shipped GPUs' measurements of this configuration, carried over by the relation the
      // runs show (transfer.ts); no shipped benchmark row used a split layout or a tuned stack (the
      // LLM runs give no evidence), so none transfers to one.
      const t = transfers[i];
      // The model predicts log(measured throughput / analytical), which calibration divides by its
      // scale: time scales by the inverse; the transfer's residual is of the same kind.
      const k = Math.exp(-blendTransfer(out[i] - Math.log(c.scale * (publishedCal[i]?.scale ?? 1)), t));
      let iv = this.interval(it, evs[i], regimes[i], publishedCal[i]);
      // Runs of this model on this GPU: the interval is the calibrated one measured on the
      // benchmark, widened by how much the runs disagree (1.28 standard deviations: P10/P90);
      // runs of this very configuration: how far a repeat of one strays (train.csv's repeats),
      // widened by how far its own runs stray from each other.
      if (runsSetInterval[i] && user) {
        const cal = c.sameConfigurationRuns > 0 ? user.settings.sameConfiguration : user.settings.modelOnGpu;
        iv = {
          q10: Math.min(cal.q10, -1.28 * c.spread),
          q90: Math.max(cal.q90, 1.28 * c.spread),
          rows: cal.rows,
        };
      }
      mid[i] = k;
      lo[i] = k * Math.exp(iv.q10);
      hi[i] = k * Math.exp(iv.q90);
    });
    if (turns.due()) await turns.pause();
    const n = items.length;
    /** Per item floored by its single-GPU reference: what the evidence says of it. */
    const floorNotes = new Map<number, string>();
    const levels: EvidenceLevel[] = [];
    const boundBy: Regime[][] = [];
    const precisionUnmeasured = items.map(
      (it, i) => !isLlmLike(it) && unmeasuredPrecision(evs[i], it.exec.precision),
    );
    const runs = new Int32Array(n);
    // What the evidence level reads, decided where recommend's minEvidence decides it (evidence.ts
    // evidenceLevel): the shipped measurements, the published LLM runs and the user's recorded runs.
    const measured = user ? withRuns(this.measured, user.runs.all) : this.measured;
    items.forEach((it, i) => {
      // The floor: never a faster step than the same GPU alone at this batch plus the gradient
      // synchronisation the roofline leaves exposed (estimate, P10, P90), as factors of the item's
      // analytical step.
      if (refOf[i] >= 0) {
        const j = n + refOf[i];
        const r = all[j].stepMs / it.stepMs;
        const sync = it.breakdown.communicationMs / it.stepMs;
        if (r * mid[j] + sync > mid[i])
          floorNotes.set(
            i,
            `; floored at one ${it.gpu.id}'s step at this batch plus the gradient synchronisation left exposed (${it.breakdown.communicationMs.toPrecision(3)} ms), since data parallelism only adds that to it (the correction alone gave a ${pct(1 - mid[i] / (r * mid[j] + sync))} shorter step)`,
          );
        mid[i] = Math.max(mid[i], r * mid[j] + sync);
        lo[i] = Math.max(lo[i], r * lo[j] + sync);
        hi[i] = Math.max(hi[i], r * hi[j] + sync);
      }
      runs[i] = calibrations[i].runs;
      boundBy.push(regimes[i].map((x) => x.regime.regime));
      levels.push(evidenceLevel(measured, it.modelId, it.gpu.id, it.model.publishedAs));
    });
    const caseOf = (i: number): string => {
      const it = items[i];
      const c = calibrations[i];
      const t = transfers[i];
      const llmLike = isLlmLike(it);
      const novelty = this.gpuNovelty(it.gpu);
      const gpuMeasured = novelty === 'measured';
      const shippedPair = this.measuredPairs.has(`${it.modelId}|${it.gpu.id}`);
      const published = publishedEvidence(it);
      const twin = TRAINED_AS[it.exec.precision];
      const benchmarkCase = evidenceCase(evs[i]);
      return (
        (published === undefined
          ? benchmarkCase
          : benchmarkCase === UNMEASURED_CASE
            ? `published: ${published.text}`
            : `${benchmarkCase}; published: ${published.text}`) +
        (published && !llmLike && !published.runs.stacks.includes(DEFAULT_STACK) && published.runs.onGpu > 0
          ? ` (they ran tuned stacks; this estimate is of ${DEFAULT_STACK}, which none of them ran, so the interval is a benchmark model's)`
          : '') +
        (twin
          ? `; ${it.exec.precision} read as ${twin.as} by the learned correction (no ${it.exec.precision} run is measured; ${twin.why})`
          : '') +
        (precisionUnmeasured[i]
          ? `; no run of this model at ${evs[i].readAsPrecision ?? it.exec.precision} is measured on any GPU: its other precisions are (interval: at least a precision held out from its model)`
          : '') +
        (evs[i].readAsGpu
          ? `; ${it.gpu.id} read as ${evs[i].readAsGpu} by the evidence (no ${it.gpu.id} row is measured; ${evs[i].readAsGpu} has its die, SM count and clock, and no more memory bandwidth)`
          : '') +
        (gpuMeasured
          ? ''
          : c.gpuRuns > 0
            ? `; ${it.gpu.id} has no shipped measurements`
            : `; ${it.gpu.id} has no training measurements (${achievableBasis(it.gpu, it.dominantMath)})`) +
        shippedSoftware(it.modelId, it.gpu.id, shippedPair, llmLike) +
        (novelty === 'generation' && c.gpuRuns === 0
          ? `; no ${it.gpu.generation} GPU is measured (interval from leave-one-generation-out errors)`
          : novelty === 'vendor' && c.gpuRuns === 0
            ? `; no ${it.gpu.vendor} GPU is measured (interval: the widest of any held-out generation)`
            : '') +
        (publishedCal[i]
          ? `; ${describePublishedCalibration(publishedCal[i]!, it.gpu.id, stackOf(it), it.exec.precision)}`
          : moeStackOf(it) !== undefined
            ? `; ${expertsEvidence(moeStackOf(it))}`
            : llmLike && it.model.convolutional
              ? "; a tuned stack or split layout on a convolutional model: only transformer LLM runs were measured so, and the stacks' effects were fitted on them (interval: at least an unmeasured model's)"
              : llmLike && this.meta.intervals.llmRuns
                ? `; ${stackOf(it) === DEFAULT_STACK ? `a split layout under ${DEFAULT_STACK}, which no published LLM run ran (they are tuned stacks'; interval: their` : `a tuned stack or split layout as in the published LLM runs (interval: ${this.stackInterval(it) ? `the ${stackOf(it)} runs'` : 'their'}`} errors held out by model family${unmeasuredModelOf(evs[i]) ? ", widened to a held-out model's: no benchmark row measured this model" : ''})`
                : llmLike
                  ? '; no measurement used tensor/pipeline/context parallelism, ZeRO, recomputation or a tuned stack'
                  : '') +
        regimes[i]
          .map(({ regime, share }) => {
            const iv = runsSetInterval[i]
              ? 'interval from your runs of this model on this GPU'
              : 'interval at least that of such rows held out';
            return regime.regime === 'host'
              ? `; host-bound: kernel launches and per-step framework work on the CPU are ${pct(share)} of the roofline's step, and no GPU figure says how fast a host does them (${iv})`
              : `; communication-bound: exposed gradient synchronisation is ${pct(share)} of the roofline's step (${iv})`;
          })
          .join('') +
        synchronizationEvidence(it) +
        (it.exec.precision === 'FP4'
          ? '; no FP4 kernel is measured either (the roofline runs the FP8 kernel curve at the FP4 peak)'
          : '') +
        (c.runs > 0
          ? `; calibrated by ${c.runs} of your runs (${c.gpuRuns} on ${it.gpu.id}, ${c.modelOnGpuRuns} of this model on it${c.sameConfigurationRuns ? `, ${c.sameConfigurationRuns} of this exact configuration` : ''})`
          : '') +
        (user?.note ? `; ${user.note}` : '') +
        (t
          ? `; transferred from ${t.neighbour}'s measurement of ${t.distance === 0 ? `this configuration${t.nearest.precision === it.exec.precision ? '' : ` at ${t.nearest.precision}`}` : `this model at ${t.nearest.precision} (nearest configuration: batch ${t.nearest.batchSizePerGpu} per GPU on ${t.nearest.gpus} GPU${t.nearest.gpus > 1 ? 's' : ''})`}, related to ${it.gpu.id} by your runs (${t.neighbours} shipped GPU${t.neighbours > 1 ? 's' : ''} used, ${Math.round(100 * t.share)}% of the estimate)`
          : '') +
        (floorNotes.get(i) ?? '')
      );
    };

    return {
      mid: mid.subarray(0, n),
      lo: lo.subarray(0, n),
      hi: hi.subarray(0, n),
      caseOf,
      levels,
      runs,
      boundBy,
      precisionUnmeasured,
    };
  }

  private transferred(it: CorrectionInput, user: UserEvidence) {
    return user.transfer?.query({
      model: it.modelId,
      gpu: it.gpu.id,
      precision: it.exec.precision,
      seqOrImage: it.model.seqOrImage,
      batchSizePerGpu: it.exec.batchSizePerGpu,
      gpus: it.exec.gpusPerNode * it.exec.nodes,
    });
  }

  private calibration(it: CorrectionInput, user: UserEvidence) {
    const q = {
      model: it.modelId,
      gpu: it.gpu.id,
      precision: it.exec.precision,
      framework: (it.software ?? DEFAULT_SOFTWARE).framework,
      configuration: correctionConfiguration(it),
    };
    return calibrate(q, user.runs.relevant(q.model, q.gpu), user.settings.weights);
  }
}

/**
 * The exact-configuration key of what the correction is asked about (calibration.ts
 * configurationKey): the key a query's calibration looks its repeats up by, and the one a recorded
 * run is stored under (service/measurements.ts builds each run's correction input), so the two
 * always agree.
 */
export function correctionConfiguration(it: CorrectionInput): string {
  return configurationKey({
    model: it.modelId,
    seqOrImage: it.model.seqOrImage,
    gpu: it.gpu.id,
    precision: it.exec.precision,
    framework: (it.software ?? DEFAULT_SOFTWARE).framework,
    batchSizePerGpu: it.exec.batchSizePerGpu,
    gpusPerNode: it.exec.gpusPerNode,
    nodes: it.exec.nodes,
    gradAccumSteps: it.exec.gradAccumSteps,
    interNodeGbps: it.exec.interNodeGbps,
    interNodeTransport: it.exec.interNodeTransport,
    parallelism: it.exec.parallelism,
    // Which way the step ran its attention cores.
    eagerAttention:
      !!it.model.attentionCores &&
      !fusedAttention(it.exec, { attention: it.model.attention }, loadEfficiency()),
  });
}

/**
 * Which framework releases the shipped measurements behind an estimate ran (the model's on this GPU,
 * else any model's on it): the correction learned what those releases did, and Lambda's
 * configurations measured under two PyTorch releases ran up to 1.12x faster on the newer one
 * (seeds/README.md), so a reader of an estimate that rests on PyTorch 1.4 rows knows it does.
 */
function shippedSoftware(modelId: string, gpuId: string, shippedPair: boolean, llmLike: boolean): string {
  // An LLM-style estimate rests on the published LLM runs (their stacks are in its evidence), not on these rows.
  if (llmLike) return '';
  const releases = seedsReleases();
  const ofPair = shippedPair ? releases.byPair.get(`${modelId}|${gpuId}`) : undefined;
  if (ofPair?.length) return `; its measurements on ${gpuId} ran ${ofPair.join(', ')}`;
  const ofGpu = releases.byGpu.get(gpuId);
  return ofGpu?.length ? `; the measurements on ${gpuId} ran ${ofGpu.join(', ')}` : '';
}

/**
 * A measured model in a precision none of its rows ran, on any GPU (BF16 for a CNN): the trees have no
 * evidence at that precision and answer from the precision's rows of other models, whose errors held
 * out this way are wider than a measured combination's (the card's whole (model, precision) split).
 * Never TF32: FP32 rows on TF32-capable GPUs ran TF32 matmuls under NGC and TensorFlow defaults
 * (train.csv flags 1,436 of them), so TF32 is measured under the FP32 label, which the evidence keys
 * apart; a model whose FP32 rows all predate Ampere is the case this leaves unflagged.
 */
export const unmeasuredPrecision = (ev: Evidence, precision: Precision): boolean =>
  precision !== 'TF32' && ev.modelN > 0 && ev.exactN === 0 && ev.samePrecisionN === 0;

/**
 * FP32 and TF32 matmuls against tensor-core math in 16 bits or fewer. Held out as whole (model,
 * precision) pairs the two err in opposite directions (the 16-bit pairs' P90 is a 1.57x longer step,
 * the FP32 pairs' P10 a 0.70x one), so each gets its own interval.
 */
export type PrecisionMath = 'fp32' | 'reduced';
export const PRECISION_MATHS: readonly PrecisionMath[] = ['fp32', 'reduced'];
export const precisionMathOf = (p: Precision): PrecisionMath =>
  POLICIES[p].math.matmul === 'fp32' || POLICIES[p].math.matmul === 'tf32' ? 'fp32' : 'reduced';

/**
 * The published LLM runs of the item's architecture (published-runs.ts), with the one nearest its layout;
 * undefined for a model with none. What stands behind the answer, not evidence the trees read.
 */
function publishedEvidence(it: CorrectionInput): { runs: PublishedRuns; text: string } | undefined {
  const names = it.model.publishedAs;
  if (!names?.length) return undefined;
  const par = it.exec.parallelism;
  const shape = {
    gpus: it.exec.gpusPerNode * it.exec.nodes,
    tensorParallel: par?.tensorParallel ?? 1,
    pipelineParallel: par?.pipelineParallel ?? 1,
    contextParallel: par?.contextParallel ?? 1,
    microBatch: it.exec.batchSizePerGpu,
    seqLen: it.model.seqOrImage,
  };
  // A search corrects thousands of candidates that share a few shapes: each is described once.
  const key = `${names.join(',')}|${it.gpu.id}|${it.exec.precision}|${Object.values(shape).join('|')}`;
  let hit = publishedEvidenceCache.get(key);
  if (hit === undefined) {
    const runs = publishedRunsOf(names, it.gpu.id, it.exec.precision, shape);
    const text = describePublishedRuns(runs, it.gpu.id, it.exec.precision);
    hit = text === undefined ? null : { runs, text };
    if (publishedEvidenceCache.size >= 10_000) publishedEvidenceCache.clear();
    publishedEvidenceCache.set(key, hit);
  }
  return hit ?? undefined;
}
const publishedEvidenceCache = new Map<string, { runs: PublishedRuns; text: string } | null>();

/** What `evidence` says of a calibration by the architecture's published runs. */
function describePublishedCalibration(
  c: PublishedCalibration,
  gpuId: string,
  stack: SoftwareStack,
  precision: Precision,
): string {
  const moved = c.scale >= 1 ? `${pct(c.scale - 1)} longer` : `${pct(1 - c.scale)} shorter`;
  const runsStack = runsStackOf(stack);
  const under = runsStack === stack ? stack : `${runsStack}, whose effects ${stack} takes`;
  const on = c.readAsGpu
    ? `${c.readAsGpu} (${gpuId} reads as it: the same die, SM count and clock, and no more memory bandwidth; none ran on ${gpuId})`
    : gpuId;
  return (
    `calibrated by the ${c.runs} ${c.superseded ? '' : 'latest '}published run${c.runs > 1 ? 's' : ''} of this architecture on ${on} under ${under} (${c.frameworks.join(', ')}; ${c.samePrecision} at ${precision}; ${c.superseded ? `${c.superseded} superseded in their source by tables without this GPU, never fitted by the trees` : 'superseded versions left out'}): ` +
    `their errors against this predictor made the step ${moved} (interval: runs held out of the trees and of this calibration a layout at a time${c.widenedBySpread ? ", widened to the runs' own disagreement" : ''})`
  );
}

/**
 * The dense published runs that calibrate, by GPU: those the trees fitted (fittedLlmRuns, the latest
 * version of each), and a superseded run where no latest run measured its model on its GPU under its
 * stack. Those are the only runs of Llama 2 13B and 70B and Llama 3 8B and 70B on A100s (torchtitan's
 * 2024 tables, which its later ones replaced with H100 tables); the trees never fitted them, so their
 * errors are held-out ones.
 */
let calibratingRunsByGpu: Map<string, LlmRun[]> | undefined;
function publishedRunsOnGpu(): Map<string, LlmRun[]> {
  if (!calibratingRunsByGpu) {
    const key = (r: LlmRun) => `${r.model}|${r.gpu}|${stackOfFramework(r.framework)}`;
    const fitted = fittedLlmRuns();
    const latest = new Set(fitted.map(key));
    const superseded = measuredLlmRuns().filter((r) => !r.isLatest && !isMoeRun(r) && !latest.has(key(r)));
    calibratingRunsByGpu = new Map();
    for (const r of [...fitted, ...superseded])
      calibratingRunsByGpu.set(r.gpu, [...(calibratingRunsByGpu.get(r.gpu) ?? []), r]);
  }
  return calibratingRunsByGpu;
}

/**
 * The GPU whose published runs calibrate a query on `gpu`: itself where runs measured it, else the GPU
 * of runs it reads as (gpu-twins.ts: an H200-SXM the H100-SXM5's, the same die, SM count and clock with
 * no more memory bandwidth), as its benchmark evidence does. Without it an H200 answer kept the trees'
 * error the H100 runs correct, and a Llama 3 8B step under Megatron came out 5% slower on an H200 than
 * on an H100; the roofline keeps each GPU's own bandwidth and memory.
 */
function publishedRunsGpuOf(gpu: GpuSpec): string | undefined {
  // Asked for every candidate of a search: once per GPU object (not per id: a federated client's
  // custom device may carry a catalog GPU's name with other figures).
  if (!runsGpuCache.has(gpu)) {
    const byGpu = publishedRunsOnGpu();
    runsGpuCache.set(gpu, byGpu.has(gpu.id) ? gpu.id : gpuTwin(gpu, new Set(byGpu.keys()), getGpu)?.id);
  }
  return runsGpuCache.get(gpu);
}
const runsGpuCache = new WeakMap<GpuSpec, string | undefined>();

/** The software stack an item runs on (PYTORCH_EAGER where it says none). */
const stackOf = (it: CorrectionInput): SoftwareStack => it.exec.stack ?? DEFAULT_STACK;

/** No benchmark row or recorded run measured the model, at any configuration. */
const unmeasuredModelOf = (ev: Evidence): boolean => ev.modelN === 0 && ev.exactN === 0;

/**
 * What only the LLM runs measured: a stack other than stock framework code, or a sharded or split
 * layout (every benchmark row ran plain data parallelism in stock code).
 */
function isLlmLike(it: CorrectionInput): boolean {
  const par = it.exec.parallelism;
  if (stackOf(it) !== DEFAULT_STACK || it.model.mixtureOfExperts) return true;
  return (
    !!par &&
    (par.tensorParallel > 1 ||
      par.pipelineParallel > 1 ||
      (par.contextParallel ?? 1) > 1 ||
      (par.expertParallel ?? 1) > 1 ||
      par.zeroStage > 0 ||
      par.recompute !== 'none')
  );
}

/** The stack of a mixture-of-experts item (whose MoE runs set its interval); undefined for a dense model. */
const moeStackOf = (it: CorrectionInput): SoftwareStack | undefined =>
  it.model.mixtureOfExperts ? stackOf(it) : undefined;

/**
 * The same configuration on one GPU, for plain data parallelism (no tensor, pipeline or context
 * split, no ZeRO sharding): there every GPU runs exactly what a lone GPU runs at this batch and then
 * synchronises gradients, so no number of them finishes a step sooner than one does. The learned
 * correction is fitted row by row and can say otherwise (it put ResNet-50 on two single-GPU GH200
 * instances 2.5% ahead of one on cost, at twice the price per hour), so `correct` floors such a
 * step at this reference's corrected step plus the item's exposed gradient synchronisation (the
 * roofline's; without it equal floors tied one instance with three on cost), and the search's
 * pruning bounds the floor
 * (optimizer/pruned.ts). Null where the floor does not apply (one GPU, or a split or sharded
 * layout, whose per-GPU work is not a lone GPU's).
 */
export function singleGpuReference(it: CorrectionInput): CorrectionInput | null {
  const e = it.exec,
    par = e.parallelism;
  if (e.gpusPerNode * e.nodes <= 1) return null;
  if (
    par &&
    (par.tensorParallel > 1 ||
      par.pipelineParallel > 1 ||
      (par.contextParallel ?? 1) > 1 ||
      par.zeroStage > 0)
  )
    return null;
  const b = it.breakdown;
  return {
    ...it,
    exec: { ...e, gpusPerNode: 1, nodes: 1 },
    // Every term of the step but communication (without a split, the gradient all-reduce is all
    // of it), summed by the same function as the step, so equal compute gives an equal reference.
    stepMs: stepMs(b, { exposedMs: 0 }),
    breakdown: {
      ...b,
      communicationMs: 0,
      communicationTotalMs: 0,
      dataParallelCommMs: 0,
      synchronizationWaitMs: 0,
      pipelineCommMs: 0,
    },
  };
}

/** Items whose references share this key get the same correction (features, evidence and calibration keys). */
function referenceKey(ref: CorrectionInput): string {
  const e = ref.exec;
  const sw = ref.software ?? DEFAULT_SOFTWARE;
  return JSON.stringify([
    ref.modelId,
    ref.model.seqOrImage,
    ref.gpu.id,
    e.precision,
    e.batchSizePerGpu,
    e.gradAccumSteps,
    e.fp32UsesTf32,
    e.stack ?? null,
    e.attention ?? null,
    e.parallelism ?? null,
    sw.framework,
    sw.xla,
    ref.stepMs,
    ref.dominantMath,
  ]);
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/**
 * The wait for the slowest GPU, where it is an extrapolation: more GPUs than any measured run the
 * spread of one GPU's step was fitted on (efficiency.json stragglerFittedGpus), where step.ts holds it.
 */
function synchronizationEvidence(it: Pick<CorrectionInput, 'breakdown' | 'stepMs' | 'exec'>): string {
  const gpus = it.exec.gpusPerNode * it.exec.nodes;
  const held = stragglerGpus(gpus, loadEfficiency());
  if (!(it.breakdown.synchronizationWaitMs > 0) || held === gpus) return '';
  return `; waits for the slowest GPU, ${pct(it.breakdown.synchronizationWaitMs / it.stepMs)} of the roofline's step, as for ${held} GPUs: the spread of one GPU's step was fitted on measured runs of up to ${held} GPUs, and the wait is held there at ${gpus} (measured runs of 32-512 GPUs do not slow further), an extrapolation`;
}

export interface VaryingFeatureIndex {
  logStep: number;
  fracForward: number;
  fracBackward: number;
  fracOptimizer: number;
  fracMixedPrecision: number;
  fracComm: number;
  fracOverhead: number;
  logGpus: number;
  logNodes: number;
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
