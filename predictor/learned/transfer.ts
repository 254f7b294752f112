// A user's runs on a GPU with no shipped measurements, used the way a practitioner uses them: the
// runs tell how this GPU relates to each GPU the shipped measurements cover (on the same models,
// how much faster or slower than the roofline it ran compared with that GPU), and the same
// configuration measured on those GPUs, moved by that relation, predicts it here. Residuals are
// log(measured / analytical throughput), so a batch size or GPU count the neighbour measured
// differently is still comparable; the nearest configuration of the same model and precision on a
// neighbour stands in for the query's, discounted by how far it is. Neighbours whose relation the
// runs' models agree on count most (each model once, however many runs it has). The result is blended with the calibrated learned prediction by how
// much evidence it has (bench/calibration.ts chose the constants on half the GPUs). Pure: the
// shipped configurations and the runs are passed in.
import type { Precision } from '../types.js';
import type { TransferSettings } from '../../seeds/calibration.js';
import type { Example } from './train.js';
import { correctionPrecision } from './precision-twins.js';

/** One measured configuration: what identifies it for the nearest-neighbour match, and its residual. */
export interface TransferConfiguration {
  model: string;
  gpu: string;
  precision: Precision;
  seqOrImage: number;
  batchSizePerGpu: number;
  /** GPUs in all (nodes x GPUs per node). */
  gpus: number;
  /** log(measured / analytical throughput) = log(analytical / measured step time). */
  logResidual: number;
}

export type { TransferSettings };

export interface TransferredPrediction {
  /** Transferred log(measured / analytical throughput) for the query. */
  logResidual: number;
  /** Share of the transfer in the blend with the calibrated learned prediction (0..1). */
  share: number;
  /** The neighbour that counted most, its configuration used and how far it is from the query (0: the same), and how many neighbours counted. */
  neighbour: string;
  nearest: TransferConfiguration;
  distance: number;
  neighbours: number;
}

/**
 * The estimate's log(measured / analytical throughput) once the transfer is blended in: the
 * learned and calibrated one's (`calibrated`) and the transfer's residual, in log, by the
 * transfer's share of the evidence. The one place the blend is written (the predictor and the
 * calibration benches read it).
 */
export const blendTransfer = (calibrated: number, t: TransferredPrediction | null | undefined): number =>
  t ? (1 - t.share) * calibrated + t.share * t.logResidual : calibrated;

interface Neighbour {
  gpu: string;
  /** Mean of (run residual here - counterpart residual there) over the runs. */
  offset: number;
  weight: number;
}

/** A shipped measurement row as the transfer sees it (its analytical prediction already made). */
export const exampleConfiguration = (e: Example): TransferConfiguration => ({
  model: e.row.model,
  gpu: e.row.gpu,
  precision: e.row.precision,
  seqOrImage: e.model.seqOrImage,
  batchSizePerGpu: e.aware.exec.batchSizePerGpu,
  gpus: e.aware.exec.gpusPerNode * e.aware.exec.nodes,
  logResidual: Math.log(e.row.throughput! / e.aware.throughput),
});

// By the precision the learned correction reads (precision-twins.ts): no shipped row ran AMP_BF16,
// so a user's AMP_BF16 runs relate their GPU to the shipped GPUs through those GPUs' AMP_FP16
// measurements, and an AMP_BF16 query is carried over from them.
const keyOf = (model: string, precision: Precision) => `${model}|${correctionPrecision(precision)}`;

/** How far two configurations of the same model and precision are. */
/** Where a configuration sits for the match: log batch size, log GPU count, sequence/image size. */
interface Position {
  logBatch: number;
  logGpus: number;
  seqOrImage: number;
}
const positionOf = (c: Pick<TransferConfiguration, 'batchSizePerGpu' | 'gpus' | 'seqOrImage'>): Position => ({
  logBatch: Math.log(c.batchSizePerGpu),
  logGpus: Math.log(c.gpus),
  seqOrImage: c.seqOrImage,
});

/** How far two configurations of the same model and precision are. */
const distance = (a: Position, b: Position) =>
  Math.abs(a.logBatch - b.logBatch) +
  Math.abs(a.logGpus - b.logGpus) +
  (a.seqOrImage === b.seqOrImage ? 0 : 1);

/** The shipped configurations, indexed once per GPU by model and precision (positions computed once). */
export class ShippedConfigurations {
  private readonly byGpu = new Map<string, Map<string, { row: TransferConfiguration; at: Position }[]>>();
  constructor(rows: readonly TransferConfiguration[]) {
    for (const row of rows) {
      let m = this.byGpu.get(row.gpu);
      if (!m) this.byGpu.set(row.gpu, (m = new Map()));
      const k = keyOf(row.model, row.precision);
      let list = m.get(k);
      if (!list) m.set(k, (list = []));
      list.push({ row, at: positionOf(row) });
    }
  }

  get gpus(): string[] {
    return [...this.byGpu.keys()];
  }

  has(gpu: string): boolean {
    return this.byGpu.has(gpu);
  }

  /** The configuration of the same model and precision nearest to `c` on `gpu`, and its distance. */
  nearest(
    gpu: string,
    c: Pick<TransferConfiguration, 'model' | 'precision'>,
    at: Position,
  ): { row: TransferConfiguration; distance: number } | undefined {
    const rows = this.byGpu.get(gpu)?.get(keyOf(c.model, c.precision));
    if (!rows) return undefined;
    let best: { row: TransferConfiguration; distance: number } | undefined;
    for (const r of rows) {
      const d = distance(at, r.at);
      if (!best || d < best.distance) best = { row: r.row, distance: d };
    }
    return best;
  }
}

/** A GPU's relation to every shipped GPU, learned from its runs (runs on shipped GPUs are not transferred). */
export class NeighbourTransfer {
  private readonly neighbours = new Map<string, Neighbour[]>();
  private readonly cache = new Map<string, TransferredPrediction | undefined>();
  /** Per GPU, the models (at the precision the correction reads) its own runs measured. */
  private readonly ownModels = new Map<string, Set<string>>();

  constructor(
    private readonly shipped: ShippedConfigurations,
    runs: readonly TransferConfiguration[],
    private readonly settings: TransferSettings,
    /** GPU id -> its chip (chipOf); a neighbour of the same chip counts `sameChipWeight` times. */
    chips: ReadonlyMap<string, string>,
  ) {
    const byGpu = new Map<string, TransferConfiguration[]>();
    for (const r of runs) if (!shipped.has(r.gpu)) byGpu.set(r.gpu, [...(byGpu.get(r.gpu) ?? []), r]);
    for (const [gpu, own] of byGpu) {
      this.ownModels.set(gpu, new Set(own.map((r) => keyOf(r.model, r.precision))));
      const list: Neighbour[] = [];
      for (const other of shipped.gpus) {
        // One difference per model (its runs' mean): the relation between two GPUs varies from
        // model to model, and a model timed at nine batch sizes is one model, not nine. Counted
        // per run, nine runs of one model on a held-out GPU weighed the relation they showed nine
        // times and took other models' errors from 14.2% to 16.3% (mean over GPUs); per model,
        // the relation waits for runs of `minimumMatches` models, as 3 runs of 3 models always did.
        const perModel = new Map<string, number[]>();
        for (const r of own) {
          const m = shipped.nearest(other, r, positionOf(r));
          if (m) perModel.set(r.model, [...(perModel.get(r.model) ?? []), r.logResidual - m.row.logResidual]);
        }
        const differences = [...perModel.values()].map((d) => d.reduce((a, b) => a + b, 0) / d.length);
        if (differences.length < Math.max(1, settings.minimumMatches)) continue;
        const offset = differences.reduce((a, b) => a + b, 0) / differences.length;
        const variance = differences.reduce((a, d) => a + (d - offset) ** 2, 0) / differences.length;
        const sameChip = chips.get(other) !== undefined && chips.get(other) === chips.get(gpu);
        list.push({
          gpu: other,
          offset,
          weight:
            (differences.length / (variance + settings.consistencyFloor ** 2)) *
            (sameChip ? settings.sameChipWeight : 1),
        });
      }
      if (list.length) this.neighbours.set(gpu, list);
    }
  }

  /** GPUs whose runs relate them to at least one shipped GPU. */
  covers(gpu: string): boolean {
    return this.neighbours.has(gpu);
  }

  /**
   * The transferred residual of one configuration on a GPU with runs; undefined where no neighbour
   * measured its model at its precision, or where the GPU's own runs did. Those runs say how this
   * GPU runs this model better than any neighbour (the calibration weighs them most), while the
   * transfer's share grows with the number of runs: left in, a store of many runs of one model
   * would let the neighbours' measurements outweigh the user's own runs of that very configuration.
   * On the held-out-GPU benchmark leaving them to the calibration also errs less on the recorded
   * models' other rows (bench/calibration.ts).
   */
  query(c: Omit<TransferConfiguration, 'logResidual'>): TransferredPrediction | undefined {
    const list = this.neighbours.get(c.gpu);
    if (!list || this.ownModels.get(c.gpu)?.has(keyOf(c.model, c.precision))) return undefined;
    const key = `${c.gpu}|${c.model}|${c.precision}|${c.seqOrImage}|${c.batchSizePerGpu}|${c.gpus}`;
    if (this.cache.has(key)) return this.cache.get(key);
    let sw = 0,
      swx = 0,
      used = 0,
      top: { gpu: string; weight: number; row: TransferConfiguration; distance: number } | undefined;
    const at = positionOf(c);
    for (const n of list) {
      const m = this.shipped.nearest(n.gpu, c, at);
      if (!m) continue;
      const w = n.weight * Math.exp(-this.settings.distancePenalty * m.distance);
      sw += w;
      swx += w * (m.row.logResidual + n.offset);
      used++;
      if (!top || w > top.weight) top = { gpu: n.gpu, weight: w, row: m.row, distance: m.distance };
    }
    const out =
      used && top
        ? {
            logResidual: swx / sw,
            share: sw / (sw + this.settings.evidenceHalfWeight),
            neighbour: top.gpu,
            nearest: top.row,
            distance: top.distance,
            neighbours: used,
          }
        : undefined;
    // Bounded: a long recommend sweep over one store version asks for many configurations.
    if (this.cache.size > 200_000) this.cache.clear();
    this.cache.set(key, out);
    return out;
  }
}
