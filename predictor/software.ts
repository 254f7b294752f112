// The software stack a prediction assumes (seeds/software.json). The fitted constants describe stock
// framework code, the stack the training measurements ran; faster stacks change what the roofline
// charges: fused attention never writes the scores, fused elementwise chains move fewer bytes, tuned
// GEMM calls run nearer the measured kernel rate, CUDA graphs hide launches.
import { readFileSync } from 'node:fs';

export const SOFTWARE_STACKS = ['PYTORCH_EAGER', 'TORCH_COMPILE', 'MEGATRON', 'TUNED'] as const;
export type SoftwareStack = (typeof SOFTWARE_STACKS)[number];
export const DEFAULT_STACK: SoftwareStack = 'PYTORCH_EAGER';

export interface StackEffects {
  description: string;
  /** Attention cores (scores, mask, softmax, dropout, context) run as one fused kernel that keeps the scores on chip. */
  flashAttention: boolean;
  /** Fraction of the elementwise and normalization layers' memory traffic left after fusion. */
  pointwiseBytesFactor: number;
  /** Fraction of the measured GEMM kernel rate reached; null = the fitted constant (efficiency.json). */
  matmulEfficiency: number | null;
  /** Fraction of the per-kernel CPU launch cost left. */
  kernelOverheadFactor: number;
  /**
   * Fraction of the compute that hides data-parallel / ZeRO communication (prefetched FSDP gathers,
   * overlapped distributed-optimizer all-gathers); null = the fitted constant (efficiency.json).
   */
  commOverlap: number | null;
  /**
   * P10/P90 of log(predicted / measured throughput) of this stack's published LLM runs, each predicted
   * with effects fitted on other model families: the interval of an estimate on this stack.
   */
  heldOutLogError?: { q10: number; q90: number; rows: number };
  /** Fraction of tensor-parallel and context-parallel collectives hidden behind the GEMMs they feed (Megatron's TP comm overlap); 0 = none. */
  tensorParallelOverlap: number;
}

export interface SoftwareFile {
  stacks: Record<SoftwareStack, StackEffects>;
}
export const SOFTWARE_FILE = new URL('../seeds/software.json', import.meta.url);
let file: SoftwareFile | undefined;
export function softwareFile(): SoftwareFile {
  return (file ??= JSON.parse(readFileSync(SOFTWARE_FILE, 'utf8')) as SoftwareFile);
}
export function stackEffects(stack: SoftwareStack = DEFAULT_STACK): StackEffects {
  return softwareFile().stacks[stack];
}

/**
 * Replaces one stack's effects in this process (the fit in cli/evaluate-llm.ts tries candidates this
 * way); returns the function that restores the previous ones.
 */
export function overrideStackEffects(stack: SoftwareStack, effects: Partial<StackEffects>): () => void {
  const before = softwareFile().stacks[stack];
  softwareFile().stacks[stack] = { ...before, ...effects };
  return () => {
    softwareFile().stacks[stack] = before;
  };
}

/** What `evidence` says about the stack an estimate assumes. */
export function stackEvidence(stack: SoftwareStack = DEFAULT_STACK): string {
  if (stack === DEFAULT_STACK)
    return 'software stack assumed: PYTORCH_EAGER (stock framework code, the default)';
  return `software stack assumed: ${stack} (analytical estimate with effects fitted on published LLM runs; the learned correction was trained on stock-framework runs and is not applied)`;
}

/** The stack a published run's framework label describes. */
export function stackOfFramework(framework: string): SoftwareStack {
  const f = framework.toLowerCase();
  if (/megatron|nemo|transformer engine|\bte\b/.test(f)) return 'MEGATRON';
  if (/torchtitan|maxtext|paxml|jax|xla|compile/.test(f)) return 'TORCH_COMPILE';
  return 'PYTORCH_EAGER';
}
