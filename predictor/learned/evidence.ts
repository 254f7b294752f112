// Measurements as evidence: how far the analytical estimate was off for the same model on other
// configurations (another precision on this GPU, this precision on other GPUs, anything else),
// the way a user's own calibration runs would be used. A configuration's own (model, GPU,
// precision) group never counts as evidence for itself, in training or in evaluation, so the
// model learns to use neighbours, not to copy the answer.
import { getGpu, loadMeasurements } from '../../seeds/catalog.js';
import { measuredLlmRuns } from '../published-runs.js';
import { POLICIES } from '../precision.js';
import { correctionPrecision } from './precision-twins.js';
import { gpuTwin } from './gpu-twins.js';
import type { GpuSpec, MathMode, Precision } from '../types.js';

export interface Evidence {
  /** Mean log(measured / analytical) of the same model on this GPU at other precisions, and how many rows. */
  sameGpu: number;
  sameGpuN: number;
  /** Same model, same precision, other GPUs. */
  samePrecision: number;
  samePrecisionN: number;
  /**
   * Same model and GPU, another precision whose matmuls run in the same math (AMP_FP16 vs FP16 vs
   * FP16_PURE), or at the same tensor rate (fp16 and bf16 where the GPU's datasheet gives both the
   * same peak: every NVIDIA GPU with bf16), so a model measured under AMP_FP16 calibrates its BF16.
   */
  sameGpuSameMath: number;
  sameGpuSameMathN: number;
  /** Same model and precision on a sibling GPU (same architecture generation). */
  sibling: number;
  siblingN: number;
  /** Same model, same precision, same framework, other GPUs: the same benchmark script elsewhere. */
  samePrecisionFramework: number;
  samePrecisionFrameworkN: number;
  /**
   * Same model and framework (and precision, unless the ablation) on the one other GPU nearest in
   * datasheet figures (fp32 and matmul peaks, memory bandwidth; log distance): the A100-40GB for an
   * A100-80GB, not the mean over every GPU.
   */
  nearestGpu: number;
  nearestGpuN: number;
  /** That GPU's distance (Euclidean, natural-log units); NO_NEAREST_DISTANCE when there is none. */
  nearestGpuDistance: number;
  /** Same model run in the same framework, any other (GPU, precision). */
  sameFramework: number;
  sameFrameworkN: number;
  /** Same model, any other (GPU, precision). */
  model: number;
  modelN: number;
  /**
   * Same model and precision on other GPUs, as a line through each GPU's mean residual against its
   * log matmul peak in this precision's math, read at this GPU's peak (see residualTrend): the mean
   * over other GPUs says how far off the roofline is for this model; the trend says whether it is
   * further off on bigger GPUs (small kernels that fill an A100 but not an H100) or on smaller ones
   * (a host-bound step that a fast GPU waits on). 0 with no other GPU.
   */
  trend: number;
  /** The line's slope (residual per log unit of peak), shrunk toward 0 by TREND_RIDGE. */
  trendSlope: number;
  /** How many other GPUs the line is through. */
  trendGpus: number;
  /** The points behind the line, so a user's runs on other GPUs can join them (mergeEvidence). */
  trendPoints: readonly TrendPoint[];
  /** This GPU's log matmul peak, where the line is read; 0 for a GPU outside the catalog. */
  trendLogPeak: number;
  /** Rows of this exact (model, GPU, precision) in the evidence, not used as a feature. */
  exactN: number;
  /** The measured GPU an unmeasured one read as (gpu-twins.ts): its rows are this GPU's evidence. */
  readAsGpu?: string;
  /** The precision one no row ran read as (precision-twins.ts): its rows are this precision's evidence. */
  readAsPrecision?: Precision;
}

/** Distance of "no nearest GPU": e^5 ~ 150x apart in every figure, beyond any measured pair. */
export const NO_NEAREST_DISTANCE = 5;

export const NO_EVIDENCE: Evidence = {
  sameGpu: 0,
  sameGpuN: 0,
  sameGpuSameMath: 0,
  sameGpuSameMathN: 0,
  samePrecision: 0,
  samePrecisionN: 0,
  sibling: 0,
  siblingN: 0,
  samePrecisionFramework: 0,
  samePrecisionFrameworkN: 0,
  nearestGpu: 0,
  nearestGpuN: 0,
  nearestGpuDistance: NO_NEAREST_DISTANCE,
  sameFramework: 0,
  sameFrameworkN: 0,
  model: 0,
  modelN: 0,
  trend: 0,
  trendSlope: 0,
  trendGpus: 0,
  trendPoints: [],
  trendLogPeak: 0,
  exactN: 0,
};

/** One other GPU in a residual trend: its log matmul peak (TFLOPS) and the sum and count of its residuals. */
export interface TrendPoint {
  gpu: string;
  logPeak: number;
  sum: number;
  n: number;
}

/**
 * Ridge on the trend's slope (per squared log unit of peak): through two GPUs, or GPUs close in
 * peak, the line stays near their mean instead of extrapolating. Chosen on held-out GPUs (seeds 7
 * and 8): 0.3 and 1 gave the same error, 3 a worse one (the line flattened to the mean).
 */
export const TREND_RIDGE = 1;

/**
 * The residual trend across GPUs, read at `logPeak`: least squares of each GPU's mean residual
 * on its log peak, every GPU one point (the trend is across GPUs; a GPU with 45 rows is not 45
 * GPUs), the slope shrunk by TREND_RIDGE. Read where asked, also beyond the points' peaks (a new
 * generation): reading it at the nearest end of their range instead gave held-out GPUs 12.58%,
 * 12.45%, 12.59% and 12.67% at seeds 7-10 (mean 12.57%, against 12.6%), within the seed's noise, so
 * the extrapolation stays (npx tsx bench/held-out.ts gpu).
 */
export function residualTrend(
  points: readonly TrendPoint[],
  logPeak: number,
): Pick<Evidence, 'trend' | 'trendSlope' | 'trendGpus'> {
  if (!points.length) return { trend: 0, trendSlope: 0, trendGpus: 0 };
  const ys = points.map((p) => p.sum / p.n);
  const xMean = points.reduce((s, p) => s + p.logPeak, 0) / points.length;
  const yMean = ys.reduce((s, y) => s + y, 0) / ys.length;
  let sxx = 0,
    sxy = 0;
  points.forEach((p, i) => {
    sxx += (p.logPeak - xMean) ** 2;
    sxy += (p.logPeak - xMean) * (ys[i] - yMean);
  });
  const slope = sxy / (sxx + TREND_RIDGE);
  return { trend: yMean + slope * (logPeak - xMean), trendSlope: slope, trendGpus: points.length };
}

/** A GPU's log matmul peak in one math (its fp32 peak where the datasheet gives none). */
function logPeakOf(gpu: GpuSpec, math: MathMode): number {
  return Math.log(Math.max(gpu.peakTflops[math] ?? gpu.peakTflops.fp32 ?? 0, 1e-3));
}

export interface EvidenceRow {
  model: string;
  gpu: string;
  precision: Precision;
  framework: string;
  logResidual: number;
}
export interface EvidenceGroup {
  model: string;
  gpu: string;
  precision: Precision;
  framework: string;
  sum: number;
  n: number;
}

interface Acc {
  sum: number;
  n: number;
}

/**
 * Which case a prediction is, for the response; the evidence says which GPU and precision it read
 * an unmeasured GPU (gpu-twins.ts) or a precision no row ran (precision-twins.ts) as.
 */
export function evidenceCase(e: Evidence): string {
  const precision = e.readAsPrecision ?? 'this precision';
  const gpu = e.readAsGpu ?? 'this GPU';
  if (e.exactN > 0)
    return e.readAsPrecision || e.readAsGpu
      ? `measured: this model is in the measurements on ${gpu} at ${precision} (the estimate uses neighbouring configurations, not those rows)`
      : 'measured: this model, GPU and precision are in the measurements (the estimate uses neighbouring configurations, not those rows)';
  if (e.sameGpuN > 0) return `calibrated: this model measured on ${gpu} at other precisions`;
  if (e.samePrecisionN > 0) return `calibrated: this model measured at ${precision} on other GPUs`;
  if (e.modelN > 0) return 'calibrated: this model measured on other configurations';
  return UNMEASURED_CASE;
}

/** evidenceCase's answer for a model no benchmark row or recorded run measured. */
export const UNMEASURED_CASE = 'unmeasured: no measurements of this model; features only';

export class EvidenceIndex {
  private groups = new Map<string, Map<string, Acc>>();
  private readonly twins = new Map<string, string | undefined>();

  /**
   * `twinsAmong`: the measured GPUs (the shipped or training rows') an unmeasured GPU may read as
   * (gpu-twins.ts); without it (a user's own runs) a GPU is only itself.
   */
  constructor(
    rows: EvidenceRow[],
    readonly twinsAmong?: ReadonlySet<string>,
  ) {
    for (const r of rows) {
      let m = this.groups.get(r.model);
      if (!m) this.groups.set(r.model, (m = new Map()));
      const key = `${r.gpu}|${correctionPrecision(r.precision)}|${r.framework}`;
      const a = m.get(key) ?? { sum: 0, n: 0 };
      a.sum += r.logResidual;
      a.n++;
      m.set(key, a);
    }
  }

  /** An index of measured rows whose GPUs are the measured ones: any other GPU may read its twin among them. */
  static ofMeasured(rows: EvidenceRow[]): EvidenceIndex {
    return new EvidenceIndex(rows, new Set(rows.map((r) => r.gpu)));
  }

  /** Adds pre-aggregated evidence (as stored in seeds/predictor.json). */
  addAggregated(groups: EvidenceGroup[]): void {
    for (const g of groups) {
      let m = this.groups.get(g.model);
      if (!m) this.groups.set(g.model, (m = new Map()));
      const key = `${g.gpu}|${correctionPrecision(g.precision)}|${g.framework}`;
      const a = m.get(key) ?? { sum: 0, n: 0 };
      a.sum += g.sum;
      a.n += g.n;
      m.set(key, a);
    }
  }

  /** The index's content, aggregated per (model, GPU, precision). */
  aggregated(): EvidenceGroup[] {
    const out: EvidenceGroup[] = [];
    for (const [model, m] of this.groups)
      for (const [key, a] of m) {
        const [gpu, precision, framework] = key.split('|') as [string, Precision, string];
        out.push({ model, gpu, precision, framework, sum: Number(a.sum.toFixed(6)), n: a.n });
      }
    return out.sort(
      (a, b) =>
        a.model.localeCompare(b.model) ||
        a.gpu.localeCompare(b.gpu) ||
        a.precision.localeCompare(b.precision) ||
        a.framework.localeCompare(b.framework),
    );
  }

  /** `precisionAware: false` is the ablation: evidence may not be split by precision. */
  query(
    model: string,
    gpu: string,
    precision: Precision,
    framework: string,
    precisionAware = true,
  ): Evidence {
    // Keyed and queried by the precision the trees read (precision-twins.ts): an AMP_BF16 run is
    // AMP_FP16 evidence, and an AMP_BF16 query finds AMP_FP16's measurements.
    const asked = precision;
    precision = correctionPrecision(precision);
    const m = this.groups.get(model);
    if (!m) return NO_EVIDENCE;
    // "This GPU" is the GPU and, when the measured GPUs do not include it, its same-die twin: the
    // twin's rows of the model are evidence about this GPU, as a user's runs on it are.
    const twin = this.twinOf(gpu);
    const isThis = (kg: string) => kg === gpu || kg === twin;
    const g = { sum: 0, n: 0 },
      gm = { sum: 0, n: 0 },
      p = { sum: 0, n: 0 },
      sib = { sum: 0, n: 0 },
      pf = { sum: 0, n: 0 },
      fw = { sum: 0, n: 0 },
      all = { sum: 0, n: 0 };
    const add = (x: Acc, a: Acc) => {
      x.sum += a.sum;
      x.n += a.n;
    };
    const spec = getGpu(gpu);
    const generation = spec?.generation;
    const math = POLICIES[precision].math.matmul;
    let exactN = 0;
    const nearCandidates = new Map<string, Acc>();
    const trendGpus = new Map<string, Acc>();
    for (const [key, a] of m) {
      const [kg, kp, kf] = key.split('|') as [string, Precision, string];
      if (isThis(kg) && kp === precision) {
        exactN += a.n;
        continue;
      }
      // Without precision, a row's own configuration is the model on this GPU: its other-precision
      // rows are the same configuration to an ablation that cannot tell them apart, and taking them
      // as evidence would tell it the row's precision (an AMP row's evidence would be the FP32 rows'
      // residual and the other way round).
      if (!precisionAware && isThis(kg)) continue;
      add(all, a);
      if (kf === framework) add(fw, a);
      if (!isThis(kg) && kf === framework && (!precisionAware || kp === precision)) {
        const c = nearCandidates.get(kg) ?? { sum: 0, n: 0 };
        add(c, a);
        nearCandidates.set(kg, c);
      }
      if (isThis(kg)) {
        add(g, a);
        if (precisionAware && sameTensorRate(spec, POLICIES[kp].math.matmul, math)) add(gm, a);
      }
      if (precisionAware && kp === precision && !isThis(kg)) {
        const t = trendGpus.get(kg) ?? { sum: 0, n: 0 };
        add(t, a);
        trendGpus.set(kg, t);
        add(p, a);
        if (kf === framework) add(pf, a);
        if (generation && getGpu(kg)?.generation === generation) add(sib, a);
      }
    }
    const mean = (x: Acc) => (x.n ? x.sum / x.n : 0);
    let near: Acc = { sum: 0, n: 0 },
      nearDistance = NO_NEAREST_DISTANCE,
      nearId = '';
    if (spec)
      for (const [kg, a] of nearCandidates) {
        const other = getGpu(kg);
        if (!other) continue;
        const d = specDistance(spec, other, precisionAware ? math : null);
        if (d < nearDistance || (d === nearDistance && kg < nearId)) {
          near = a;
          nearDistance = d;
          nearId = kg;
        }
      }
    const trendPoints: TrendPoint[] = [];
    if (spec)
      for (const [kg, a] of trendGpus) {
        const other = getGpu(kg);
        if (other) trendPoints.push({ gpu: kg, logPeak: logPeakOf(other, math), ...a });
      }
    const trendLogPeak = spec ? logPeakOf(spec, math) : 0;
    return {
      ...residualTrend(trendPoints, trendLogPeak),
      trendPoints,
      trendLogPeak,
      sameGpu: mean(g),
      sameGpuN: g.n,
      sameGpuSameMath: mean(gm),
      sameGpuSameMathN: gm.n,
      samePrecision: mean(p),
      samePrecisionN: p.n,
      sibling: mean(sib),
      siblingN: sib.n,
      samePrecisionFramework: mean(pf),
      samePrecisionFrameworkN: pf.n,
      nearestGpu: mean(near),
      nearestGpuN: near.n,
      nearestGpuDistance: nearDistance,
      sameFramework: mean(fw),
      sameFrameworkN: fw.n,
      model: mean(all),
      modelN: all.n,
      exactN,
      ...(twin ? { readAsGpu: twin } : {}),
      ...(precision !== asked ? { readAsPrecision: precision } : {}),
    };
  }

  /** The same-die GPU `gpu` reads as, when the measured GPUs do not include it (cached per GPU). */
  private twinOf(gpu: string): string | undefined {
    if (!this.twinsAmong) return undefined;
    if (!this.twins.has(gpu)) {
      const spec = getGpu(gpu);
      this.twins.set(gpu, spec ? gpuTwin(spec, this.twinsAmong, getGpu)?.id : undefined);
    }
    return this.twins.get(gpu);
  }
}

/** Two matmul maths run at one rate on this GPU: the same math, or fp16 and bf16 at equal peaks. */
function sameTensorRate(gpu: GpuSpec | undefined, a: MathMode, b: MathMode): boolean {
  if (a === b) return true;
  const half = (m: MathMode) => m === 'fp16' || m === 'bf16';
  return (
    !!gpu && half(a) && half(b) && gpu.peakTflops.fp16 !== null && gpu.peakTflops.fp16 === gpu.peakTflops.bf16
  );
}

/** Log distance of two GPUs' datasheet figures: fp32 peak, memory bandwidth and (unless null) a matmul math's peak. */
function specDistance(a: GpuSpec, b: GpuSpec, math: MathMode | null): number {
  const l = (x: number | null | undefined) => Math.log(Math.max(x ?? 0, 1e-3));
  const fp32 = l(a.peakTflops.fp32) - l(b.peakTflops.fp32);
  const bw = l(a.memoryBwGbps) - l(b.memoryBwGbps);
  const mm = math
    ? l(a.peakTflops[math] ?? a.peakTflops.fp32) - l(b.peakTflops[math] ?? b.peakTflops.fp32)
    : 0;
  return Math.sqrt(fp32 * fp32 + bw * bw + mm * mm);
}

/**
 * How much measurement stands behind a prediction, coarsest first: UNMEASURED (no run on this GPU
 * type at all: datasheet figures only), GPU_MEASURED (the GPU type has runs, of other models),
 * MODEL_MEASURED_ON_GPU (this model has runs on this GPU type, at some precision and layout).
 */
export const EVIDENCE_LEVELS = ['UNMEASURED', 'GPU_MEASURED', 'MODEL_MEASURED_ON_GPU'] as const;
export type EvidenceLevel = (typeof EVIDENCE_LEVELS)[number];

/** What has been measured: GPU ids with any run, and `model|gpu` pairs. A user's own recorded runs add to it. */
export interface MeasuredSet {
  gpus: ReadonlySet<string>;
  pairs: ReadonlySet<string>;
}

export function measuredSetOf(rows: Iterable<{ model: string; gpu: string }>): MeasuredSet {
  const gpus = new Set<string>(),
    pairs = new Set<string>();
  for (const r of rows) {
    gpus.add(r.gpu);
    pairs.add(`${r.model}|${r.gpu}`);
  }
  return { gpus, pairs };
}

/** A MeasuredSet with more runs added (a user's recorded runs). */
export function withRuns(base: MeasuredSet, rows: Iterable<{ model: string; gpu: string }>): MeasuredSet {
  const more = measuredSetOf(rows);
  return { gpus: new Set([...base.gpus, ...more.gpus]), pairs: new Set([...base.pairs, ...more.pairs]) };
}

/** `publishedAs`: the published LLM architectures the model is (published-runs.ts), whose runs count as its own. */
export function evidenceLevel(
  measured: MeasuredSet,
  modelId: string,
  gpuId: string,
  publishedAs: readonly string[] = [],
): EvidenceLevel {
  if (
    measured.pairs.has(`${modelId}|${gpuId}`) ||
    publishedAs.some((name) => measured.pairs.has(`${name}|${gpuId}`))
  )
    return 'MODEL_MEASURED_ON_GPU';
  return measured.gpus.has(gpuId) ? 'GPU_MEASURED' : 'UNMEASURED';
}

export const evidenceRank = (level: EvidenceLevel): number => EVIDENCE_LEVELS.indexOf(level);

/**
 * Benchmark measurements plus the published LLM runs' (model, GPU) pairs under their architecture
 * names (published-runs.ts): a published run on a GPU measured its architecture there. Their GPUs do
 * not become measured GPUs, as the learned correction's intervals do not count them.
 */
export function withPublishedRuns(benchmark: MeasuredSet): MeasuredSet {
  return {
    gpus: benchmark.gpus,
    pairs: new Set([...benchmark.pairs, ...measuredSetOf(measuredLlmRuns()).pairs]),
  };
}

let seedsMeasuredCache: MeasuredSet | undefined;
/**
 * The seeds' measured runs (seeds/measurements) as a MeasuredSet: the benchmark rows, and the
 * published LLM runs' (model, GPU) pairs under their architecture names. Only the benchmark rows'
 * GPUs count as measured GPUs, as the learned correction's intervals count them.
 */
export function seedsMeasured(): MeasuredSet {
  seedsMeasuredCache ??= withPublishedRuns(
    measuredSetOf(loadMeasurements().filter((m) => m.throughput !== null)),
  );
  return seedsMeasuredCache;
}

/**
 * The framework release a train.csv row ran, as its source states it in `software`: Lambda's logs
 * give the framework's own version ('PyTorch 1.13', 'TensorFlow 2.4'), DeepLearningExamples' tables
 * the NGC container ('NGC PyTorch 20.06', year.month). Undefined where the row states none.
 */
export function softwareRelease(m: { software: string; framework: string }): string | undefined {
  const s = m.software ?? '';
  if (/\bNGC\b/.test(s)) {
    const tag = /\b(\d\d\.\d\d)\b/.exec(s);
    return tag ? `NGC ${m.framework} ${tag[1]}` : undefined;
  }
  const own = /^(pytorch|tensorflow) (\d+\.\d+)/i.exec(s);
  if (!own) return undefined;
  return `${own[1].toLowerCase() === 'pytorch' ? 'PyTorch' : 'TensorFlow'} ${own[2]}`;
}

/** What software the shipped measurements ran, per `model|gpu` pair and per GPU (releases in version order). */
export interface ShippedReleases {
  byPair: ReadonlyMap<string, readonly string[]>;
  byGpu: ReadonlyMap<string, readonly string[]>;
}

export function releasesOf(
  rows: Iterable<{ model: string; gpu: string; software: string; framework: string }>,
): ShippedReleases {
  const byPair = new Map<string, Set<string>>(),
    byGpu = new Map<string, Set<string>>();
  const add = (m: Map<string, Set<string>>, k: string, r: string) => {
    let set = m.get(k);
    if (!set) m.set(k, (set = new Set()));
    set.add(r);
  };
  for (const row of rows) {
    const r = softwareRelease(row);
    if (!r) continue;
    add(byPair, `${row.model}|${row.gpu}`, r);
    add(byGpu, row.gpu, r);
  }
  const sorted = (m: Map<string, Set<string>>) =>
    new Map(
      [...m].map(
        ([k, v]) => [k, [...v].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))] as const,
      ),
    );
  return { byPair: sorted(byPair), byGpu: sorted(byGpu) };
}

let seedsReleasesCache: ShippedReleases | undefined;
/** The releases seeds/measurements/train.csv's rows ran (see softwareRelease). */
export function seedsReleases(): ShippedReleases {
  seedsReleasesCache ??= releasesOf(loadMeasurements().filter((m) => m.throughput !== null));
  return seedsReleasesCache;
}

/** Two evidence summaries as one: each mean weighted by its row count (shipped measurements and a user's runs). */
export function mergeEvidence(a: Evidence, b: Evidence): Evidence {
  const m = (x: number, xn: number, y: number, yn: number) => (xn + yn ? (x * xn + y * yn) / (xn + yn) : 0);
  return {
    sameGpu: m(a.sameGpu, a.sameGpuN, b.sameGpu, b.sameGpuN),
    sameGpuN: a.sameGpuN + b.sameGpuN,
    sameGpuSameMath: m(a.sameGpuSameMath, a.sameGpuSameMathN, b.sameGpuSameMath, b.sameGpuSameMathN),
    sameGpuSameMathN: a.sameGpuSameMathN + b.sameGpuSameMathN,
    samePrecision: m(a.samePrecision, a.samePrecisionN, b.samePrecision, b.samePrecisionN),
    samePrecisionN: a.samePrecisionN + b.samePrecisionN,
    sibling: m(a.sibling, a.siblingN, b.sibling, b.siblingN),
    siblingN: a.siblingN + b.siblingN,
    samePrecisionFramework: m(
      a.samePrecisionFramework,
      a.samePrecisionFrameworkN,
      b.samePrecisionFramework,
      b.samePrecisionFrameworkN,
    ),
    samePrecisionFrameworkN: a.samePrecisionFrameworkN + b.samePrecisionFrameworkN,
    // The nearer of the two (a user's run on a sibling GPU can be nearer than any shipped one).
    ...(b.nearestGpuDistance < a.nearestGpuDistance
      ? { nearestGpu: b.nearestGpu, nearestGpuN: b.nearestGpuN, nearestGpuDistance: b.nearestGpuDistance }
      : { nearestGpu: a.nearestGpu, nearestGpuN: a.nearestGpuN, nearestGpuDistance: a.nearestGpuDistance }),
    sameFramework: m(a.sameFramework, a.sameFrameworkN, b.sameFramework, b.sameFrameworkN),
    sameFrameworkN: a.sameFrameworkN + b.sameFrameworkN,
    model: m(a.model, a.modelN, b.model, b.modelN),
    modelN: a.modelN + b.modelN,
    ...mergedTrend(a, b),
    exactN: a.exactN + b.exactN,
    ...(a.readAsGpu || b.readAsGpu ? { readAsGpu: a.readAsGpu ?? b.readAsGpu } : {}),
    ...(a.readAsPrecision || b.readAsPrecision
      ? { readAsPrecision: a.readAsPrecision ?? b.readAsPrecision }
      : {}),
  };
}

/** Two summaries' trend points as one line: a GPU in both is one point with both sets of rows. */
function mergedTrend(
  a: Evidence,
  b: Evidence,
): Pick<Evidence, 'trend' | 'trendSlope' | 'trendGpus' | 'trendPoints' | 'trendLogPeak'> {
  const byGpu = new Map<string, TrendPoint>();
  for (const p of [...a.trendPoints, ...b.trendPoints]) {
    const q = byGpu.get(p.gpu);
    byGpu.set(p.gpu, q ? { ...q, sum: q.sum + p.sum, n: q.n + p.n } : p);
  }
  const trendPoints = [...byGpu.values()];
  const trendLogPeak = a.trendLogPeak || b.trendLogPeak;
  return { ...residualTrend(trendPoints, trendLogPeak), trendPoints, trendLogPeak };
}
