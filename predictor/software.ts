// The software stack a prediction assumes (seeds/software.json). The fitted constants describe stock
// framework code, the stack the training measurements ran; faster stacks change what the roofline
// charges: fused attention never writes the scores, fused elementwise chains move fewer bytes, tuned
// GEMM calls run nearer the measured kernel rate, CUDA graphs hide launches.
import {
  loadSoftware,
  SOFTWARE_STACKS,
  type CompositeOp,
  type SoftwareFile,
  type SoftwareStack,
  type StackEffects,
} from '../seeds/tables.js';
import { fittedLlmRuns } from '../seeds/llm.js';
import { getGpu } from '../seeds/catalog.js';

export { SOFTWARE_STACKS, type CompositeOp, type SoftwareStack, type StackEffects, type SoftwareFile };
export const DEFAULT_STACK: SoftwareStack = 'PYTORCH_EAGER';

/**
 * Whether a step runs in a stock PyTorch training loop (the default stack), whose FP8 keeps the model
 * in fp32 (precision.ts stockLoopPolicy) where the other stacks train Megatron-Core's recipe.
 */
export const isStockLoop = (stack: SoftwareStack | undefined): boolean =>
  (stack ?? DEFAULT_STACK) === 'PYTORCH_EAGER';

export const softwareFile = loadSoftware;
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

/**
 * The frameworks of the published runs a stack's effects are fitted on: dense runs, latest versions,
 * on a GPU of the catalog (seeds/llm.ts fittedLlmRuns; a run on a GPU the catalog lacks cannot be
 * predicted, so it fits nothing). A stack is a family of frameworks, and which of them were measured
 * is what a reader needs: TORCH_COMPILE's runs are MaxText and PaxML on JAX/XLA and NeMo AutoModel,
 * not torch.compile.
 */
let fittedFrameworks: Map<SoftwareStack, string[]> | undefined;
function frameworksFitted(stack: SoftwareStack): readonly string[] {
  if (!fittedFrameworks) {
    fittedFrameworks = new Map();
    for (const r of fittedLlmRuns())
      if (getGpu(r.gpu)) {
        const of = fittedFrameworks.get(stackOfFramework(r.framework)) ?? [];
        if (!of.includes(r.framework))
          fittedFrameworks.set(stackOfFramework(r.framework), [...of, r.framework].sort());
      }
  }
  return fittedFrameworks.get(stack) ?? [];
}

/**
 * The stack whose published runs stand for `stack`'s: its own, except TUNED, which no published run
 * used and which takes MEGATRON's fitted effects (cli/evaluate-llm.ts writeSoftwareFit) with CUDA
 * graphs added. MEGATRON's runs fit its effects, so they also calibrate its answers.
 */
export const runsStackOf = (stack: SoftwareStack): SoftwareStack => (stack === 'TUNED' ? 'MEGATRON' : stack);

/** What `evidence` says about the stack an estimate assumes. */
export function stackEvidence(stack: SoftwareStack = DEFAULT_STACK): string {
  if (stack === DEFAULT_STACK)
    return 'software stack assumed: PYTORCH_EAGER (stock framework code, the default)';
  const from = runsStackOf(stack);
  const frameworks = frameworksFitted(from);
  const runs = !frameworks.length
    ? 'no published run used this stack: MEGATRON-like effects, an assumption'
    : from === stack
      ? `fitted on the published LLM runs of this stack: ${frameworks.join(', ')}`
      : `${from}'s, fitted on its published LLM runs (${frameworks.join(', ')}), with CUDA graphs hiding kernel launches, an assumption no run tests: no published run used ${stack}`;
  return `software stack assumed: ${stack} (analytical effects ${runs}; learned correction applied, trained on the benchmark rows and the LLM runs together)`;
}

/**
 * Whether a framework itself stores convolution activations channels-last in 16-bit training
 * (Execution.channelsLast), or undefined where the code decides and the stack's layout holds
 * (PyTorch: NCHW unless the code asks for torch.channels_last). TensorFlow's layout optimizer
 * converts a graph whose convolutions are mostly fp16 to NHWC on Volta and later GPUs (grappler's
 * generic_layout_optimizer.cc, GetSrcAndDstDataFormats); MXNet's ResNet-50 scripts pass
 * --conv-layout NHWC in float16.
 */
export function frameworkChannelsLast(framework: string | undefined): true | undefined {
  return /^(tensorflow|mxnet)/i.test(framework ?? '') ? true : undefined;
}

/**
 * The convolution layout a request or recorded run states: its own `channelsLast`, else what its
 * framework does itself; empty where neither says, and the stack's layout holds.
 */
export function statedChannelsLast(q: { channelsLast?: boolean | null; framework?: string }): {
  channelsLast?: boolean;
} {
  const channelsLast = q.channelsLast ?? frameworkChannelsLast(q.framework);
  return channelsLast === undefined ? {} : { channelsLast };
}

/** The stack a published run's framework label describes. */
export function stackOfFramework(framework: string): SoftwareStack {
  const f = framework.toLowerCase();
  // NeMo AutoModel is PyTorch-native (FSDP2 / DTensor with Transformer Engine kernels), not Megatron-Core.
  if (/automodel/.test(f)) return 'TORCH_COMPILE';
  if (/megatron|nemo|transformer engine|\bte\b/.test(f)) return 'MEGATRON';
  if (/torchtitan|maxtext|paxml|jax|xla|compile/.test(f)) return 'TORCH_COMPILE';
  return 'PYTORCH_EAGER';
}

/** The stack whose published mixture-of-experts runs an estimate on `stack` leans on (TUNED takes MEGATRON's). */
const moeFitOf = (stack: SoftwareStack) => {
  const own = stackEffects(stack);
  return own.moeHeldOutLogError ? own : undefined;
};

/**
 * P10/P90 of log(predicted / measured throughput) for a mixture-of-experts model on `stack`: its own
 * published MoE runs' errors with each model held out of the expert fit, or, for a stack no MoE run
 * used, MEGATRON's (the caller widens it: nothing measured the experts on that stack).
 */
export function moeInterval(stack: SoftwareStack = DEFAULT_STACK): {
  interval: { q10: number; q90: number; rows: number } | undefined;
  measured: boolean;
} {
  const own = moeFitOf(stack);
  if (own) return { interval: own.moeHeldOutLogError, measured: true };
  return { interval: stackEffects('MEGATRON').moeHeldOutLogError, measured: false };
}

/** What `evidence` says about a mixture-of-experts model's experts under a stack. */
export function expertsEvidence(stack: SoftwareStack = DEFAULT_STACK): string {
  const own = moeFitOf(stack);
  if (own)
    return `mixture of experts: expert GEMMs at ${own.expertGemmEfficiency ?? 1} of their roofline and all-to-alls at NCCL's measured rate (fitted on the ${own.moeHeldOutLogError!.rows} published MoE runs of this stack; interval: their errors with each model held out of that fit)`;
  return `mixture of experts: no published MoE run used ${stack}, so its experts are costed as grouped GEMMs at their roofline (a loop over the experts, as stock Hugging Face code runs them, is slower); interval: the MEGATRON MoE runs' held-out errors, widened to an unmeasured model's`;
}
