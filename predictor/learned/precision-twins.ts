// The precision the learned correction reads a configuration as. No public training row ran AMP_BF16
// or FP4, so a one-hot column for either was 0 on every row the trees were fitted on, and a tree
// that asks "AMP_FP16?" sent an AMP_BF16 configuration down the other side, with the FP32, TF32 and
// apex-O2 rows. Over the 365 AMP_FP16 rows on GPUs with a bf16 rate, the same configurations in
// AMP_BF16 came out at 0.919 of AMP_FP16's step (0.77 on A40, 0.55 at worst), where the roofline,
// which prices both, says 0.984 (bench/precision-twins.ts): a user was told to switch to bf16 for a
// speed-up no measurement showed.
//
// AMP_BF16 is AMP_FP16's recipe (autocast's casts, fp32 weights and optimizer state) on bf16 tensor
// cores, which run at the fp16 rate on every GPU that has both, less the loss scaling, which the
// roofline already removes; FP4 is FP8's recipe (Transformer Engine's scaled GEMM inputs, bf16
// elsewhere) at the FP4 rate. So the trees' precision columns, the evidence of measured
// configurations and the held-out interval read each as its twin, while the roofline under them
// prices the precision itself. A twin is dropped once rows of the precision itself are trained on
// (test/precision-twins.test.ts checks that none is).
import { PRECISIONS, type Precision } from '../types.js';

export interface Twin {
  as: Precision;
  /** Why the twin stands in, as a response's evidence says it. */
  why: string;
}

export const TRAINED_AS: Readonly<Partial<Record<Precision, Twin>>> = {
  AMP_BF16: {
    as: 'AMP_FP16',
    why: 'the same autocast recipe on tensor cores of the same rate, without loss scaling',
  },
  FP4: { as: 'FP8', why: "Transformer Engine's scaled-GEMM recipe, at the FP4 rate" },
};

/** The precision the trees, the evidence and the interval read `p` as. */
export const correctionPrecision = (p: Precision): Precision => TRAINED_AS[p]?.as ?? p;

/** The precisions with a column of their own in the trees' features. */
export const LEARNED_PRECISIONS: readonly Precision[] = PRECISIONS.filter((p) => TRAINED_AS[p] === undefined);
