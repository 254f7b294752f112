// A user's recorded runs as evidence on top of the learned correction, with no retraining: each
// run says how far the (uncalibrated) prediction was off for its configuration, and a query is
// moved by a weighted, shrunk mean of the runs that resemble it (the same model on the same GPU,
// other models on the same GPU, the same model on other GPUs), then towards the runs of the same
// configuration, where there are any (calibrate). A GPU's
// runs carry what its datasheet figures miss (clocks, drivers, cooling, the user's data loader)
// across models; a model's runs carry its code across GPUs. Pure: the runs are passed in.
import type { MemoryCalibrations, RecordedCapacities } from '../memory-calibration.js';
import type { Precision } from '../types.js';
import type { NetworkTransport } from '../../seeds/types.js';
import { POLICIES } from '../precision.js';
import type { EvidenceIndex } from './evidence.js';
import type { NeighbourTransfer } from './transfer.js';
import { correctionPrecision } from './precision-twins.js';
import type { CalibrationSettings, CalibrationWeights } from '../../seeds/calibration.js';

export type { CalibrationSettings, CalibrationWeights };

/** One recorded run, already compared with the prediction the predictor makes without any runs. */
export interface RecordedEvidence {
  model: string;
  gpu: string;
  precision: Precision;
  framework: string;
  /** Identity of the whole configuration (model, GPU, precision, batch, layout, framework). */
  configuration: string;
  /** log(measured step time / predicted step time): positive when the run was slower than predicted. */
  logError: number;
}

export interface CalibrationQuery {
  model: string;
  gpu: string;
  precision: Precision;
  framework: string;
  configuration: string;
}

export interface Calibration {
  /** Multiplier on the predicted step time. */
  scale: number;
  /** Runs that moved this prediction. */
  runs: number;
  /** Runs on this GPU (any model), and of this model on this GPU. */
  gpuRuns: number;
  modelOnGpuRuns: number;
  sameConfigurationRuns: number;
  /** Weighted standard deviation of the used runs' log errors around the correction (0 with one run). */
  spread: number;
}

export const NO_CALIBRATION: Calibration = {
  scale: 1,
  runs: 0,
  gpuRuns: 0,
  modelOnGpuRuns: 0,
  sameConfigurationRuns: 0,
  spread: 0,
};

const mathOf = (p: Precision) => (POLICIES[p].math.matmul === 'fp32' ? 'fp32' : 'tensor');

/**
 * The weight a run carries for a query (0: it says nothing about it). A run at a precision's twin
 * (AMP_BF16 and AMP_FP16: one autocast recipe on tensor cores of one rate; FP4 and FP8:
 * precision-twins.ts) counts as one at the query's precision: counted as another precision, two
 * AMP_BF16 runs 1.3x slower than predicted moved AMP_BF16 by 1.30x but AMP_FP16 by 1.18x, and
 * recommend would then have offered AMP_FP16 as 10% faster than the precision the user timed, on
 * no evidence but the runs it did not count.
 */
export function runWeight(q: CalibrationQuery, r: RecordedEvidence, w: CalibrationWeights): number {
  if (r.configuration === q.configuration) return w.sameConfiguration;
  const math = mathOf(r.precision) === mathOf(q.precision) ? w.sameMath : 1;
  const samePrecision = correctionPrecision(r.precision) === correctionPrecision(q.precision);
  if (r.gpu === q.gpu && r.model === q.model && samePrecision) return w.sameModelSamePrecision;
  if (r.gpu === q.gpu) return (r.model === q.model ? w.sameModelSameGpu : w.sameGpu) * math;
  if (r.model === q.model) return w.sameModelOtherGpu * (samePrecision ? 1 : 0.5);
  return 0;
}

/**
 * The correction `runs` give query `q`, in two levels. The runs of other configurations give a
 * weighted mean of their errors shrunk towards none (`prior` runs' worth of zero); the runs of
 * this very configuration then move that towards their own mean, each counting
 * `sameConfiguration` runs' worth against `prior` of it. In one weighted mean, a few hundred runs of
 * the model at other batch sizes (8 each) outvoted nine of the configuration asked about (20
 * each), so a configuration timed nine times was answered with the model's average error, not
 * its own; two levels keep the configuration's runs decisive however many others there are, and
 * answer as one mean did when they are few.
 */
export function calibrate(
  q: CalibrationQuery,
  runs: readonly RecordedEvidence[],
  w: CalibrationWeights,
): Calibration {
  let sw = 0,
    swx = 0,
    gpuRuns = 0,
    modelOnGpuRuns = 0;
  const used: { weight: number; x: number }[] = [];
  const own: number[] = [];
  // Runs that speak of this GPU through other models, or of this model through other GPUs, count
  // once per model (per GPU): how a GPU runs one model is one observation of it, however many
  // batch sizes it was timed at. Counted per run, nine runs of one model on a GPU held out of the
  // shipped data moved the other models there by about half that model's error and left their
  // error no better than without runs (14.2%); once per model, 13.9% (bench/calibration-one-model.ts;
  // three runs of three models, one each, are unchanged).
  const across = (r: RecordedEvidence) =>
    r.gpu === q.gpu
      ? r.model === q.model
        ? undefined
        : `m|${r.model}`
      : r.model === q.model
        ? `g|${r.gpu}`
        : undefined;
  const counts = new Map<string, number>();
  for (const r of runs) {
    const k = across(r);
    if (k !== undefined) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  for (const r of runs) {
    const k = across(r);
    const weight = runWeight(q, r, w) / (k === undefined ? 1 : counts.get(k)!);
    if (weight <= 0) continue;
    if (r.gpu === q.gpu) {
      gpuRuns++;
      if (r.model === q.model) modelOnGpuRuns++;
    }
    if (r.configuration === q.configuration) {
      own.push(r.logError);
      continue;
    }
    sw += weight;
    swx += weight * r.logError;
    used.push({ weight, x: r.logError });
  }
  if (!used.length && !own.length) return NO_CALIBRATION;
  const others = swx / (sw + w.prior);
  const spreadAround = (xs: { weight: number; x: number }[]) => {
    const total = xs.reduce((a, u) => a + u.weight, 0);
    const mean = xs.reduce((a, u) => a + u.weight * u.x, 0) / total;
    return Math.sqrt(xs.reduce((a, u) => a + u.weight * (u.x - mean) ** 2, 0) / total);
  };
  let offset = others,
    spread = used.length ? spreadAround(used) : 0;
  if (own.length) {
    const mean = own.reduce((a, x) => a + x, 0) / own.length;
    const k = own.length * w.sameConfiguration;
    offset = others + (k / (k + w.prior)) * (mean - others);
    // The configuration's own runs say how far a repeat of it strays.
    spread = spreadAround(own.map((x) => ({ weight: 1, x })));
  }
  return {
    scale: Math.exp(offset),
    runs: used.length + own.length,
    gpuRuns,
    modelOnGpuRuns,
    sameConfigurationRuns: own.length,
    spread,
  };
}

/** What identifies one configuration (two runs with the same key measured the same thing). */
export interface ConfigurationFields {
  model: string;
  /** The model's sequence length or image size (a zoo model can be asked for at another). */
  seqOrImage: number;
  gpu: string;
  precision: Precision;
  framework: string;
  batchSizePerGpu: number;
  gpusPerNode: number;
  nodes: number;
  gradAccumSteps: number;
  /** Across nodes, the network (Gbps) and how NCCL crossed it: a run over TCP did not measure RDMA. */
  interNodeGbps: number;
  interNodeTransport?: NetworkTransport;
  parallelism?: {
    tensorParallel: number;
    pipelineParallel: number;
    zeroStage: number;
    recompute: string;
    contextParallel?: number;
    virtualPipelineStages?: number;
    expertParallel?: number;
    optimizerState?: string;
    recomputeModules?: readonly string[];
  };
  /** The attention cores ran op by op, their scores in memory: a run of them did not time the fused kernel. */
  eagerAttention?: boolean;
}

export function configurationKey(c: ConfigurationFields): string {
  const p = c.parallelism;
  return [
    c.model,
    c.seqOrImage,
    c.gpu,
    c.precision,
    c.framework,
    c.batchSizePerGpu,
    c.gpusPerNode,
    c.nodes,
    c.gradAccumSteps,
    // Every field of the layout that changes the step: a run at EP 8 did not measure EP 1.
    p
      ? `${p.tensorParallel}x${p.pipelineParallel}z${p.zeroStage}${p.recompute}` +
        ((p.contextParallel ?? 1) > 1 ? `cp${p.contextParallel}` : '') +
        ((p.virtualPipelineStages ?? 1) > 1 ? `v${p.virtualPipelineStages}` : '') +
        ((p.expertParallel ?? 1) > 1 ? `ep${p.expertParallel}` : '') +
        (p.optimizerState ? `o${p.optimizerState}` : '') +
        recomputedModules(p)
      : 'dp',
    // One node never crosses the network: its key does not depend on it.
    ...(c.nodes > 1 ? [`net${c.interNodeGbps}${c.interNodeTransport === 'TCP' ? 'tcp' : ''}`] : []),
    ...(c.eagerAttention ? ['eager'] : []),
  ].join('|');
}

/** Selective recomputation's modules when they are not its default (the attention core alone), in one order. */
function recomputedModules(p: { recompute: string; recomputeModules?: readonly string[] }): string {
  const modules = [...new Set(p.recomputeModules ?? [])].sort();
  if (p.recompute !== 'selective' || modules.length === 0) return '';
  return modules.length === 1 && modules[0] === 'core_attn' ? '' : `m${modules.join('+')}`;
}

/** Recorded runs indexed by GPU and by model: a query looks only at the runs that can count for it. */
export class RecordedRuns {
  private readonly byGpu = new Map<string, RecordedEvidence[]>();
  private readonly byModel = new Map<string, RecordedEvidence[]>();
  constructor(readonly all: readonly RecordedEvidence[]) {
    for (const r of all) {
      this.byGpu.set(r.gpu, [...(this.byGpu.get(r.gpu) ?? []), r]);
      this.byModel.set(r.model, [...(this.byModel.get(r.model) ?? []), r]);
    }
  }
  /** Runs on this GPU or of this model (each once). */
  relevant(model: string, gpu: string): RecordedEvidence[] {
    const onGpu = this.byGpu.get(gpu) ?? [];
    return [...onGpu, ...(this.byModel.get(model) ?? []).filter((r) => r.gpu !== gpu)];
  }
  hasGpu(gpu: string): boolean {
    return this.byGpu.has(gpu);
  }
  hasModelOnGpu(model: string, gpu: string): boolean {
    return (this.byGpu.get(gpu) ?? []).some((r) => r.model === model);
  }
}

/**
 * A user's recorded runs as the predictor takes them: as evidence rows (log(measured / analytical
 * throughput), like the shipped measurements, for the learned model's evidence features) and as
 * errors of the uncalibrated prediction (for `calibrate`).
 */
export interface UserEvidence {
  index: EvidenceIndex;
  runs: RecordedRuns;
  settings: CalibrationSettings;
  /** Runs on GPUs with no shipped measurements, related to the shipped GPUs (transfer.ts); absent without such runs. */
  transfer?: NeighbourTransfer;
  /** Said in every prediction's evidence: which learned correction answered (a refit on the runs, or why not). */
  note?: string;
  /** The runs' measured peaks, per model and precision (memory-calibration.ts); absent without usable peaks. */
  memory?: MemoryCalibrations;
  /** What CUDA gave the runs' processes, per GPU (memory-calibration.ts); absent where no run says. */
  capacities?: RecordedCapacities;
}
