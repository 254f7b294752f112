// Model FLOPs utilization (MFU): the FLOPs the model needs per second of a step, over what the GPUs
// could do at the peak of the math its GEMMs run in. LLM practice judges a throughput by it
// (dgxc-benchmarking publishes 0.62 for Llama 3.1 8B in BF16 on H100s), so an answer quoted as MFU
// can be checked against the runs a reader knows. The published runs' own model TFLOPS and MFU are
// the check of the count (cli/evaluate-llm.ts modelFlopsChecks, test/utilization.test.ts).
import { peakTflops } from './precision.js';
import type { GpuSpec, MathMode, ModelCost } from './types.js';

/**
 * How a count takes attention under a causal mask: every key (Megatron-LM's and PaLM's papers,
 * NeMo's and dgxc-benchmarking's published figures), or half of them (Megatron-Bridge's and NeMo
 * Automodel's published figures): what the two kinds of published figure mean, so they can be told apart.
 */
export type AttentionCount = 'ALL_KEYS' | 'CAUSAL_HALF';

/**
 * Model FLOPs of one sample's training step: forward and backward of every GEMM and convolution
 * (a multiply-add is 2 FLOPs; backward forms the data and the weight gradient), the attention's
 * score and context GEMMs over every key, causal or not, and no recomputation: the count of
 * Megatron-LM's MFU (Narayanan et al. 2021, arXiv:2104.04473, appendix: 72 B s l h^2 (1 + s/6h +
 * V/12lh) per step for GPT) and PaLM's (Chowdhery et al. 2022, appendix B), whatever the step
 * reruns or skips. A mixture-of-experts layer counts the experts each token is routed to. Under
 * `frozenBase` (LoRA) a frozen layer's backward is its input gradient alone, as the step runs it:
 * the adapters' own FLOPs are left out, as the step leaves them out. `CAUSAL_HALF` counts the
 * attention GEMMs under a causal mask at half.
 */
export function modelFlopsPerSample(
  cost: ModelCost,
  frozenBase = false,
  attention: AttentionCount = 'ALL_KEYS',
): number {
  let flops = 0;
  for (const l of cost.layers) {
    if (l.opClass !== 'matmul') continue;
    const frozen = frozenBase && l.parameters > 0;
    const share = attention === 'CAUSAL_HALF' && l.causalKeys ? 0.5 : 1;
    flops += share * l.count * (l.forwardFlops + (frozen ? l.backwardFlops / 2 : l.backwardFlops));
  }
  return flops;
}

export interface Utilization {
  /** Model FLOPs per second each GPU does, in TFLOPS (modelFlopsPerSample x samples per second / GPUs). */
  modelTflopsPerGpu: number;
  /**
   * modelTflopsPerGpu over the GPU's dense peak in the math most of the step's GEMM FLOPs run in
   * (FP8 against the FP8 peak, BF16 against BF16's, FP32 on a TF32-capable GPU against TF32's when
   * its GEMMs run TF32); null when the catalog gives no peak for it.
   */
  mfu: number | null;
}

/** How much of the GPUs' peak a step of `modelFlopsPerStep` (all GPUs together) in `stepTimeMs` uses. */
export function utilization(
  modelFlopsPerStep: number,
  stepTimeMs: number,
  gpus: number,
  gpu: GpuSpec,
  math: MathMode,
): Utilization {
  const modelTflopsPerGpu = modelFlopsPerStep / (stepTimeMs / 1e3) / gpus / 1e12;
  const peak = peakTflops(gpu, math, 'matmul');
  return { modelTflopsPerGpu, mfu: peak && peak > 0 ? modelTflopsPerGpu / peak : null };
}
