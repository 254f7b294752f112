// The domain's nouns, kept apart as Calculon keeps them: the model (layers and their sizes),
// the system (GPU, links, network), the execution (precision, batch, GPUs). A prediction is a
// pure function of the three. Nothing here knows about GraphQL.

// The hardware vocabulary is the data's (seeds/types.ts): precision and math modes, GPU records.
export { PRECISIONS, MATH_MODES } from '../seeds/types.js';
export type { Precision, MathMode, Generation, GpuSpec, SampleUnit, OptimizerKind } from '../seeds/types.js';
import type { AttentionImplementation, OpClass, OptimizerKind, SampleUnit } from '../seeds/types.js';

/** Element storage types (bytes per element follow from these). */
export type DType = 'fp32' | 'fp16' | 'bf16' | 'fp8';

// ---------------------------------------------------------------- model (layers)

/**
 * A layer in the zoo's vocabulary. Dimensions are PER SAMPLE (one batch element); batch size
 * multiplies FLOPs and activations, never parameters. `count` repeats a layer (e.g. 12 identical
 * transformer blocks) without listing it 12 times.
 */
export type Layer = LayerShape & {
  /**
   * The layer is not trained and nothing before it is (maskrcnn-benchmark freezes the stem and first
   * stage, FREEZE_CONV_BODY_AT: 2): autograd saves nothing for it. Only the memory model reads it.
   */
  frozen?: boolean;
  /**
   * The layer reads the tensor the layer this many positions before it read (a residual block's
   * projection shortcut reads the block's input, as the main path's first convolution does; an
   * Inception module's branches all read the module's input; a gated MLP's up projection reads its
   * gate's input). Autograd keeps one tensor however many layers save it, so where both keep it in
   * the same type it is counted once. Only the memory model reads it.
   */
  sameInputAs?: number;
};

type LayerShape =
  | {
      type: 'conv2d';
      name?: string;
      inC: number;
      outC: number;
      kernel: number | [number, number];
      stride?: number;
      padding?: number | [number, number];
      groups?: number;
      inH: number;
      inW: number;
      bias?: boolean;
      count?: number;
    }
  | {
      type: 'conv1d';
      name?: string;
      inC: number;
      outC: number;
      kernel: number;
      stride?: number;
      padding?: number;
      dilation?: number;
      groups?: number;
      inL: number;
      bias?: boolean;
      /** The length is this many sequential steps laid end to end (an autoregressive decoder's per-step work): each step's tensors are alive on their own. */
      steps?: number;
      count?: number;
    }
  /** `tied`: the weight matrix is another layer's (e.g. GPT-2's output head reuses the token embedding), so it adds no parameters. */
  | {
      type: 'linear';
      name?: string;
      inFeatures: number;
      outFeatures: number;
      tokens?: number;
      bias?: boolean;
      tied?: boolean;
      /** The tokens are this many sequential steps laid end to end (an autoregressive decoder's per-step work): each step's tensors are alive on their own. */
      steps?: number;
      /**
       * Mixture of experts: `experts` copies of the weight (E x the parameters), each routed token
       * through one of them (`tokens` counts the routed tokens per sample: sequence x top-k), the
       * routing balanced, run as one grouped GEMM. Expert parallelism spreads the copies over GPUs.
       */
      experts?: number;
      /** The router of a mixture-of-experts layer: its small weight is kept whole on every tensor-parallel rank (Megatron-Core's TopKRouter), its tokens split as the rest of the block. */
      router?: boolean;
      /**
       * The layer is this many projections of its input side by side that the model's code runs as
       * separate linears (Hugging Face's q_proj, k_proj and v_proj: 3). Only the memory model reads
       * it: stock eager code under autocast casts and keeps the input once per projection.
       */
      projections?: number;
      count?: number;
    }
  /** Batched matmul without weights (attention scores / context): `batches` x (m x k) @ (k x n). */
  /** sharedRight: the right operand is one tensor every repeat reads (Tacotron 2's encoder memory, attended at each decoder step), saved for backward once. */
  | {
      type: 'matmul';
      name?: string;
      m: number;
      n: number;
      k: number;
      batches?: number;
      sharedRight?: boolean;
      /**
       * Query i attends to keys 0..i only (a decoder's causal mask): a fused attention kernel skips
       * the key blocks above the diagonal; an unfused one computes the whole product and masks it.
       */
      causal?: boolean;
      count?: number;
    }
  | { type: 'embedding'; name?: string; vocab: number; dim: number; tokens: number; count?: number }
  | {
      type: 'norm';
      name?: string;
      /** frozen_batchnorm: batch norm with fixed statistics and affine (maskrcnn-benchmark's FrozenBatchNorm2d), a per-channel scale and shift that saves nothing for backward. */
      kind: 'batchnorm' | 'layernorm' | 'rmsnorm' | 'groupnorm' | 'frozen_batchnorm';
      channels: number;
      elements: number;
      count?: number;
    }
  | {
      type: 'activation';
      name?: string;
      /**
       * gelu_new: GELU's tanh approximation written as separate ops (Hugging Face's NewGELUActivation,
       * the `gelu_new` of GPT-2, GPT-Neo and GPT-J), which stock eager code runs op by op.
       */
      kind: 'relu' | 'gelu' | 'gelu_new' | 'silu' | 'sigmoid' | 'tanh' | 'swish';
      elements: number;
      count?: number;
    }
  /** Elementwise arithmetic: residual add, scaling, gating multiply, dropout. */
  | {
      type: 'elementwise';
      name?: string;
      /**
       * rotary: the rotary position embedding on q and k (x cos + rotate(x) sin); saves nothing for
       * backward beyond constants. copy: a concatenation or masked fill, which reads and writes its
       * elements once and saves nothing. combine: a mixture of experts' weighted sum of each token's
       * expert outputs back in token order (what it saves depends on where the routing weights are
       * applied: seeds/memory.json).
       */
      kind: 'add' | 'mul' | 'dropout' | 'scale' | 'rotary' | 'copy' | 'combine';
      elements: number;
      /**
       * Elements read per element written, over all operands: 2 for add or mul of two same-sized
       * tensors (their default), 1 otherwise; a broadcast operand counts at its own size (a
       * per-channel gate on a c x h x w map: 1 + 1 / (h w)). Backward keeps what mul reads.
       */
      inputs?: number;
      count?: number;
    }
  | { type: 'softmax'; name?: string; elements: number; count?: number }
  | {
      type: 'pool';
      name?: string;
      kind: 'max' | 'avg' | 'global_avg';
      channels: number;
      inH: number;
      inW: number;
      kernel: number;
      stride: number;
      padding?: number;
      count?: number;
    }
  /** Recurrent layer over `steps` time steps (LSTM: 4 gates, GRU: 3). */
  | {
      type: 'rnn';
      name?: string;
      cell: 'lstm' | 'gru';
      inputSize: number;
      hiddenSize: number;
      steps: number;
      bidirectional?: boolean;
      /**
       * A cell stepped in a loop whose input at each step depends on the previous step (an LSTMCell
       * in an autoregressive decoder): the input projection is a small GEMM per step as well, not
       * one GEMM over the whole sequence.
       */
      stepwiseInput?: boolean;
      count?: number;
    }
  /**
   * The loss (cross-entropy, MSE, ...) over `elements` logits/outputs. `log_softmax_nll`: the code
   * takes F.log_softmax over the logits and gathers the targets' entries (what a stack may run as
   * several kernels: StackEffects.compositeOps).
   */
  | { type: 'loss'; name?: string; elements: number; kind?: 'log_softmax_nll'; count?: number };

export type LayerType = Layer['type'];

/** What a layer costs per sample, computed (never typed in) from its dimensions. */
export interface LayerCost {
  name: string;
  type: LayerType;
  /** The layer's kind where its type has several (relu/gelu, batchnorm/layernorm, add/dropout, max/avg): what it saves for backward depends on it. */
  kind?: string;
  /** How the hardware sees the layer: tensor-core math, or memory-bound passes kept in fp32 by autocast, ... */
  opClass: OpClass;
  /** Forward FLOPs per sample (multiply-add = 2 FLOPs). */
  forwardFlops: number;
  /** Backward FLOPs per sample (data gradient + weight gradient). */
  backwardFlops: number;
  parameters: number;
  /** Elements read per sample by the forward pass (inputs), excluding weights. */
  inputElements: number;
  /** Elements written per sample by the forward pass. */
  outputElements: number;
  /**
   * Elements of the input gradients backward forms, where that is more than inputElements: eager
   * autograd forms a broadcast operand's gradient at the output's size and then sums it down
   * (sum_to_size), so a per-channel gate's gradient costs a map-sized write and read.
   */
  gradientElements?: number;
  /** Of inputElements: a tensor every repeat of the layer reads (saved for backward once, not per repeat). */
  sharedInputElements?: number;
  /** Not trained, nor anything before it: saves nothing for backward (Layer.frozen). */
  frozen?: boolean;
  /** Separate projections of one input (Layer linear `projections`). */
  projections?: number;
  /** Reads the tensor layers[i - sameInputAs] read (Layer.sameInputAs). */
  sameInputAs?: number;
  /** Mixture-of-experts weights: this many expert copies (parameters count all of them; FLOPs one per routed token; kernelFlops one expert's share). */
  experts?: number;
  /** A mixture-of-experts router (Layer linear `router`). */
  router?: boolean;
  /** Sequential steps the layer's elements are spread over (RNNs, an autoregressive decoder's per-step layers): one step's tensors are alive at a time in backward. */
  steps?: number;
  /** Kernels launched by the forward pass (backward launches about twice as many). */
  kernels: number;
  /** Times this layer repeats. Costs above are for ONE instance. */
  count: number;
  /** Largest single-kernel FLOPs per sample; small GEMMs cannot fill a big GPU. */
  kernelFlops: number;
  /** An attention GEMM under a causal mask over this many keys (Layer matmul `causal`): what a fused kernel skips. */
  causalKeys?: number;
}

/** The op classes a precision mode types layers by (seeds/types.ts, where the memory rules name them too). */
export type { OpClass };

/** A model of the zoo, as the predictor sees it. */
export interface ModelDef {
  id: string;
  name: string;
  family: string;
  /** What one batch element is (an image, a sequence of seqLen tokens, ...). */
  batchElement: SampleUnit;
  /** Unit the throughput is quoted in, e.g. 'images/s', 'tokens/s', 'sequences/s'. */
  throughputUnit: string;
  /** Throughput units per batch element (seqLen for tokens/s on sequence batches, 1 otherwise). */
  unitsPerBatchElement: number;
  /** Default sequence length (tokens) or image size (pixels per side). */
  seqLen?: number;
  imageSize?: number;
  optimizer: OptimizerKind;
  /** Typical per-GPU batch sizes people train it with, largest first is not implied. */
  batchSizes: number[];
  source: string;
  /**
   * How the model's code runs its attention cores where a request does not say (seeds/models.json
   * about); absent = one fused kernel, what PyTorch's scaled_dot_product_attention runs.
   */
  attention?: AttentionImplementation;
  layers: Layer[];
}

/** Totals over a model, per sample. */
export interface ModelCost {
  parameters: number;
  forwardFlops: number;
  backwardFlops: number;
  activationElements: number;
  layers: LayerCost[];
  /** The model's code's attention (ModelDef.attention), for the step where a request does not say. */
  attention?: AttentionImplementation;
}
