// The domain's nouns, kept apart as Calculon keeps them: the model (layers and their sizes),
// the system (GPU, links, network), the execution (precision, batch, GPUs). A prediction is a
// pure function of the three. Nothing here knows about GraphQL.

// The hardware vocabulary is the data's (seeds/types.ts): precision and math modes, GPU records.
export { PRECISIONS, MATH_MODES } from '../seeds/types.js';
export type { Precision, MathMode, Generation, GpuSpec } from '../seeds/types.js';

/** Element storage types (bytes per element follow from these). */
export type DType = 'fp32' | 'fp16' | 'bf16' | 'fp8';

// ---------------------------------------------------------------- model (layers)

/**
 * A layer in the zoo's vocabulary. Dimensions are PER SAMPLE (one batch element); batch size
 * multiplies FLOPs and activations, never parameters. `count` repeats a layer (e.g. 12 identical
 * transformer blocks) without listing it 12 times.
 */
export type Layer =
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
      count?: number;
    }
  /** Batched matmul without weights (attention scores / context): `batches` x (m x k) @ (k x n). */
  | { type: 'matmul'; name?: string; m: number; n: number; k: number; batches?: number; count?: number }
  | { type: 'embedding'; name?: string; vocab: number; dim: number; tokens: number; count?: number }
  | {
      type: 'norm';
      name?: string;
      kind: 'batchnorm' | 'layernorm' | 'rmsnorm' | 'groupnorm';
      channels: number;
      elements: number;
      count?: number;
    }
  | {
      type: 'activation';
      name?: string;
      kind: 'relu' | 'gelu' | 'silu' | 'sigmoid' | 'tanh' | 'swish';
      elements: number;
      count?: number;
    }
  /** Elementwise arithmetic: residual add, scaling, gating multiply, dropout. */
  | {
      type: 'elementwise';
      name?: string;
      kind: 'add' | 'mul' | 'dropout' | 'scale';
      elements: number;
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
      count?: number;
    }
  /** The loss (cross-entropy, MSE, ...) over `elements` logits/outputs. */
  | { type: 'loss'; name?: string; elements: number; count?: number };

export type LayerType = Layer['type'];

/** What a layer costs per sample, computed (never typed in) from its dimensions. */
export interface LayerCost {
  name: string;
  type: LayerType;
  /** How the hardware sees the layer: tensor-core math, or memory-bound passes kept in fp32 by autocast, ... */
  opClass: OpClass;
  /** Forward FLOPs per sample (multiply-add = 2 FLOPs). */
  forwardFlops: number;
  /** Backward FLOPs per sample (data gradient + weight gradient). */
  backwardFlops: number;
  parameters: number;
  /** Elements read per sample by the forward pass (inputs), excluding weights. */
  inputElements: number;
  /** Elements written per sample by the forward pass; also what is saved for backward. */
  outputElements: number;
  /** Kernels launched by the forward pass (backward launches about twice as many). */
  kernels: number;
  /** Times this layer repeats. Costs above are for ONE instance. */
  count: number;
  /** Largest single-kernel FLOPs per sample; small GEMMs cannot fill a big GPU. */
  kernelFlops: number;
}

/**
 * The classes that decide which math mode and element size a layer gets under a precision mode.
 * matmul: GEMMs and convolutions (tensor cores); reduction-sensitive: softmax, norms, loss
 * (autocast keeps them fp32); pointwise: activations, adds, dropout, pooling; gather: embeddings.
 */
export type OpClass = 'matmul' | 'reduction' | 'pointwise' | 'gather';

export type SampleUnit = 'image' | 'sequence' | 'token' | 'sample' | 'audio_sample' | 'mel_frame' | 'user';

export type OptimizerKind = 'sgd' | 'adam' | 'lamb';

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
  layers: Layer[];
}

/** Totals over a model, per sample. */
export interface ModelCost {
  parameters: number;
  forwardFlops: number;
  backwardFlops: number;
  activationElements: number;
  layers: LayerCost[];
}
