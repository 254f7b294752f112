// Intervals for GPUs of a generation (or a vendor) with no measurement at all. A GPU that is the
// only unmeasured one of a measured generation is like a held-out GPU; one of an unmeasured
// generation (Blackwell, Ada) or vendor (AMD, Google) is not: its interval is calibrated on errors
// of a model that never saw that whole generation (leave-one-generation-out), and its coverage is
// measured the same way: each generation in turn is held out of the calibration too, and the
// interval from the other generations' errors is checked on it.
import { heldOutInterval as interval, type Interval } from './model.js';

export interface HeldOutError {
  /** The GPU generation of the row. */
  generation: string;
  /** log(actual step / predicted step) with the row's whole generation held out of training. */
  logError: number;
}

const covered = (errs: number[], iv: Pick<Interval, 'q10' | 'q90'>) =>
  errs.length ? errs.filter((e) => e >= iv.q10 && e <= iv.q90).length / errs.length : Number.NaN;

export interface GenerationCalibration {
  /** P10/P90 of all leave-one-generation-out errors: the interval of an unmeasured generation. */
  unmeasuredGeneration: Interval;
  /**
   * The widest per-generation P10/P90: for a vendor with no measurement, where no vendor can be
   * held out (every measured row is NVIDIA's), the worst generation seen is the honest floor.
   */
  unmeasuredVendor: Interval;
  /** Per held-out generation: its rows, and the share inside intervals calibrated without it. */
  coverage: {
    generation: string;
    rows: number;
    /** Of the pooled interval of the other generations (what an unmeasured generation gets). */
    generationInterval: number;
    /** Of the widest per-generation interval of the other generations (what an unmeasured vendor gets). */
    vendorInterval: number;
    /** Of a given interval (the leave-one-GPU-out one unmeasured GPUs had before). */
    gpuInterval: number;
  }[];
}

export function calibrateGenerations(errors: HeldOutError[], gpuInterval: Interval): GenerationCalibration {
  const generations = [...new Set(errors.map((e) => e.generation))].sort();
  const of = (g: string) => errors.filter((e) => e.generation === g).map((e) => e.logError);
  const widest = (gs: string[]): Interval => {
    const ivs = gs.map((g) => interval(of(g)));
    return {
      q10: Math.min(...ivs.map((i) => i.q10)),
      q90: Math.max(...ivs.map((i) => i.q90)),
      rows: ivs.reduce((a, i) => a + i.rows, 0),
    };
  };
  return {
    unmeasuredGeneration: interval(errors.map((e) => e.logError)),
    unmeasuredVendor: widest(generations),
    coverage: generations.map((g) => {
      const others = generations.filter((x) => x !== g);
      const rest = errors.filter((e) => e.generation !== g).map((e) => e.logError);
      const mine = of(g);
      return {
        generation: g,
        rows: mine.length,
        generationInterval: Number(covered(mine, interval(rest)).toFixed(4)),
        vendorInterval: Number(covered(mine, widest(others)).toFixed(4)),
        gpuInterval: Number(covered(mine, gpuInterval).toFixed(4)),
      };
    }),
  };
}
