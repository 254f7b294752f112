// GraphQL types for models users bring (predictor/import/): the ModelInput forms and what
// `modelSummary` answers. Checked in service/models.ts, which names the field at fault.
import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { LayerType, OptimizerKind, Precision } from '../predictor/types.js';
import { LayerTypeSummary, PrecisionEnum } from './types.js';
import { HF_MODEL_TYPES } from '../predictor/import/huggingface.js';
import { LAYER_FIELDS, LAYER_TYPES } from '../predictor/import/layer-list.js';

export enum LayerTypeEnum {
  CONV2D = 'conv2d',
  CONV1D = 'conv1d',
  LINEAR = 'linear',
  MATMUL = 'matmul',
  EMBEDDING = 'embedding',
  NORM = 'norm',
  ACTIVATION = 'activation',
  ELEMENTWISE = 'elementwise',
  SOFTMAX = 'softmax',
  POOL = 'pool',
  RNN = 'rnn',
  LOSS = 'loss',
}
/** What each layer type is; the fields it takes come from LAYER_FIELDS, the one list the import checks. */
const LAYER_MEANING: Record<LayerType, string> = {
  conv2d: '2-D convolution',
  conv1d: '1-D convolution',
  linear: 'Fully connected layer',
  matmul: 'A product without weights (e.g. attention scores)',
  embedding: 'Table lookup',
  norm: 'Normalization',
  activation: 'Activation function',
  elementwise: 'Elementwise operation',
  softmax: 'Softmax',
  pool: 'Pooling',
  rnn: 'Recurrent layer',
  loss: 'Loss function',
};
function layerTypeValues(): Record<string, { description: string }> {
  return Object.fromEntries(
    LAYER_TYPES.map((type) => {
      const { required, optional } = LAYER_FIELDS[type];
      const optionalNames = Object.keys(optional);
      const takes = `takes ${Object.keys(required).join(', ')}${optionalNames.length ? `; optionally ${optionalNames.join(', ')}` : ''}.`;
      return [type.toUpperCase(), { description: `${LAYER_MEANING[type]}: ${takes}` }];
    }),
  );
}
registerEnumType(LayerTypeEnum, {
  name: 'LayerType',
  description: "A layer type of the zoo's vocabulary (predictor/types.ts).",
  valuesConfig: layerTypeValues(),
});

export enum OptimizerEnum {
  SGD = 'sgd',
  ADAM = 'adam',
  LAMB = 'lamb',
}
registerEnumType(OptimizerEnum, {
  name: 'Optimizer',
  description: 'Optimizer whose state memory and update time count.',
  valuesConfig: {
    SGD: { description: 'SGD with momentum: one momentum buffer per parameter.' },
    ADAM: { description: 'Adam or AdamW: two moments per parameter.' },
    LAMB: { description: 'LAMB: two moments per parameter plus per-layer trust ratios.' },
  },
});

@InputType({
  description:
    "One layer in the zoo's vocabulary, per sample (batch multiplies FLOPs and activations, not parameters). Give `type` and the fields that type takes; others are refused. Large sizes (elements, tokens) are Floats so they may exceed 2^31.",
})
export class LayerInput {
  @Field(() => LayerTypeEnum, { description: 'Layer type; decides which other fields apply.' })
  type!: LayerType;
  @Field(() => String, { nullable: true, description: 'A label for reports.' }) name?: string;
  @Field(() => Int, {
    nullable: true,
    description: 'Repeat the layer this many times (e.g. identical transformer blocks).',
  })
  count?: number;
  // conv2d / conv1d / pool
  @Field(() => Float, { nullable: true, description: 'conv2d/conv1d: input channels.' }) inC?: number;
  @Field(() => Float, { nullable: true, description: 'conv2d/conv1d: output channels.' }) outC?: number;
  @Field(() => [Int], { nullable: true, description: 'One value, or [height, width] (conv2d).' })
  kernel?: number[];
  @Field(() => Int, {
    nullable: true,
    description: 'conv2d/conv1d/pool: stride, pixels or elements (convolutions default 1).',
  })
  stride?: number;
  @Field(() => [Int], { nullable: true, description: 'One value, or [height, width] (conv2d).' })
  padding?: number[];
  @Field(() => Int, {
    nullable: true,
    description: 'conv2d/conv1d: channel groups (default 1; depthwise = inC).',
  })
  groups?: number;
  @Field(() => Int, { nullable: true, description: 'conv2d/conv1d: dilation (default 1).' })
  dilation?: number;
  @Field(() => Float, { nullable: true, description: 'conv2d/pool: input height, pixels.' }) inH?: number;
  @Field(() => Float, { nullable: true, description: 'conv2d/pool: input width, pixels.' }) inW?: number;
  @Field(() => Float, { nullable: true, description: 'conv1d: input length, elements.' }) inL?: number;
  @Field(() => Boolean, {
    nullable: true,
    description: 'conv2d/conv1d: has a bias (default false); linear: has a bias (default true).',
  })
  bias?: boolean;
  // linear / matmul / embedding
  @Field(() => Float, { nullable: true, description: 'linear: input features.' }) inFeatures?: number;
  @Field(() => Float, { nullable: true, description: 'linear: output features.' }) outFeatures?: number;
  @Field(() => Float, {
    nullable: true,
    description: 'linear (default 1) and embedding: rows per sample, e.g. the tokens of a sequence.',
  })
  tokens?: number;
  @Field(() => Boolean, {
    nullable: true,
    description: "linear: the weight is another layer's (no parameters of its own).",
  })
  tied?: boolean;
  @Field(() => Int, {
    nullable: true,
    description:
      'linear: a mixture-of-experts layer of this many experts (2 to 4096), each a copy of the weight; `tokens` counts the routed tokens per sample (sequence x top-k), each through one expert. Expert parallelism spreads the experts over GPUs.',
  })
  experts?: number;
  @Field(() => Boolean, {
    nullable: true,
    description:
      'linear: the router (gate) of a mixture-of-experts layer, before its experts: its weight stays whole on every tensor-parallel rank, and the expert layers after it receive its tokens by all-to-all under expert parallelism (default false).',
  })
  router?: boolean;
  @Field(() => Int, {
    nullable: true,
    description:
      "linear: this many projections of the input side by side that the model's code runs as separate linears (Hugging Face's q_proj, k_proj and v_proj: 3). Stock eager code under autocast casts and keeps the input once per projection; a fused projection (GPT-2's c_attn, Megatron's linear_qkv) keeps it once (default 1).",
  })
  projections?: number;
  @Field(() => Float, { nullable: true, description: 'matmul: rows of the left operand.' }) m?: number;
  @Field(() => Float, { nullable: true, description: 'matmul: columns of the right operand.' }) n?: number;
  @Field(() => Float, { nullable: true, description: 'matmul: the shared (inner) dimension.' }) k?: number;
  @Field(() => Float, {
    nullable: true,
    description: 'matmul: independent products per sample (e.g. attention heads; default 1).',
  })
  batches?: number;
  @Field(() => Boolean, {
    nullable: true,
    description:
      "matmul: an attention GEMM under a decoder's causal mask (query i sees keys 0..i); a fused-attention stack runs only the blocks on or below the diagonal (default false).",
  })
  causal?: boolean;
  @Field(() => Boolean, {
    nullable: true,
    description:
      "matmul: the right operand is one tensor every repeat reads (an encoder's memory attended at each decoder step), saved for backward once (default false).",
  })
  sharedRight?: boolean;
  @Field(() => Float, { nullable: true, description: 'embedding: rows of the table (vocabulary size).' })
  vocab?: number;
  @Field(() => Float, { nullable: true, description: 'embedding: width of a row.' }) dim?: number;
  // norm / activation / elementwise / softmax / loss
  @Field(() => String, {
    nullable: true,
    description:
      'norm: batchnorm, layernorm, rmsnorm, groupnorm; activation: relu, gelu, gelu_new (the tanh approximation as separate ops, as Hugging Face GPT-2 writes it), silu, sigmoid, tanh, swish; elementwise: add, mul, dropout, scale, rotary, copy (a concatenation); pool: max, avg, global_avg; loss (optional): log_softmax_nll (F.log_softmax over the logits, then gather the targets, as Transformer-XL writes it: eager PyTorch runs it as 2 + 3 kernels over the logits).',
  })
  kind?: string;
  @Field(() => Float, { nullable: true, description: 'norm/pool: channels (features).' })
  channels?: number;
  @Field(() => Float, {
    nullable: true,
    description: 'norm/activation/elementwise/softmax/loss: elements per sample.',
  })
  elements?: number;
  @Field(() => Float, {
    nullable: true,
    description:
      'elementwise: elements read per element written, over all operands (default 2 for add/mul, 1 otherwise); a broadcast operand counts at its own size, so a per-channel gate on a c x h x w map is 1 + 1/(h*w).',
  })
  inputs?: number;
  // rnn
  @Field(() => String, { nullable: true, description: 'lstm or gru.' }) cell?: string;
  @Field(() => Float, { nullable: true, description: 'rnn: input features per step.' }) inputSize?: number;
  @Field(() => Float, { nullable: true, description: 'rnn: hidden state width.' }) hiddenSize?: number;
  @Field(() => Float, {
    nullable: true,
    description:
      "rnn: time steps per sample. linear/conv1d (optional): the layer's rows (tokens, or length) are this many sequential steps of an autoregressive loop, run as one small kernel per step.",
  })
  steps?: number;
  @Field(() => Boolean, { nullable: true, description: 'rnn: runs both directions (doubles the cost).' })
  bidirectional?: boolean;
  @Field(() => Boolean, {
    nullable: true,
    description:
      "rnn: a cell stepped in a loop whose input depends on the previous step (PyTorch's LSTMCell in a decoder): its input projection runs per step too, three kernels a step (default false).",
  })
  stepwiseInput?: boolean;
  @Field(() => Boolean, {
    nullable: true,
    description:
      'Any layer: not trained, nor anything before it (a frozen stem or backbone stage); autograd saves nothing for it (default false).',
  })
  frozen?: boolean;
  @Field(() => Int, {
    nullable: true,
    description:
      "Any layer: it reads the tensor the layer this many positions before it read (a projection shortcut reads its block's input, as the main path's first convolution does; an Inception module's branches read the module's input; a gated MLP's up projection reads its gate's input). Autograd keeps that tensor once, so where both keep it in the same type it is counted once. From 1 to this layer's index.",
  })
  sameInputAs?: number;
}

@InputType({
  description:
    'A model that is not in the zoo: exactly one of huggingFaceConfig, onnxBase64 or layers. The sequence length (or image size) comes from workload.seqLen.',
})
export class ModelInput {
  @Field(() => String, {
    nullable: true,
    description: `The text of a Hugging Face config.json; model_type ${HF_MODEL_TYPES.join(', ')} (mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3 and gpt_oss are mixtures of experts; the DeepSeek types with multi-head latent attention, gpt_oss with a sliding window on the layers its layer_types names).`,
  })
  huggingFaceConfig?: string;
  @Field(() => String, {
    nullable: true,
    description:
      'An ONNX model file, base64 (at most 64,000,000 characters and 50,000 nodes; weights may be external data: only shapes are read).',
  })
  onnxBase64?: string;
  @Field(() => [LayerInput], {
    nullable: true,
    description: "A layer list in the zoo's vocabulary (at most 10,000 entries; repeat with count).",
  })
  layers?: LayerInput[];
  @Field(() => String, { nullable: true, description: 'A display name.' }) name?: string;
  @Field(() => OptimizerEnum, { nullable: true, description: 'Default adam.' }) optimizer?: OptimizerKind;
}

@ObjectType({ description: 'An operator the ONNX import could not cost: listed, not silently dropped.' })
export class UnsupportedOperator {
  @Field(() => String, { description: 'ONNX operator type, e.g. Einsum.' }) opType!: string;
  @Field(() => String, { description: "Operator domain ('' for ai.onnx)." }) domain!: string;
  @Field(() => Int, { description: 'Nodes of this operator in the graph.' }) count!: number;
  @Field(() => [String], { description: 'Up to five node names.' }) nodes!: string[];
  @Field(() => String, { description: 'Why it could not be costed.' }) reason!: string;
}

@ObjectType({
  description:
    'What the predictor sees of a model: sizes, costs per sample, structure, and what it could not cost.',
})
export class ModelSummary {
  @Field(() => ID, {
    description: 'Zoo id, or a content hash for a custom model (hf:..., onnx:..., layers:...).',
  })
  id!: string;
  @Field(() => String, { description: 'Display name.' }) name!: string;
  @Field(() => String, {
    description: 'Model family (zoo models), or the import it came from (custom models).',
  })
  family!: string;
  @Field(() => String, { description: 'Where the architecture comes from (paper, config, file).' })
  source!: string;
  @Field(() => String, { description: 'What one batch element is: image, sequence, token, ...' })
  batchElement!: string;
  @Field(() => String, { description: 'Unit of throughput and of workload.samples.' })
  throughputUnit!: string;
  @Field(() => Float, { description: 'Throughput units per batch element (e.g. tokens per sequence).' })
  unitsPerBatchElement!: number;
  @Field(() => Int, {
    nullable: true,
    description: 'Sequence length the costs are for, tokens; null for vision models.',
  })
  seqLen?: number;
  @Field(() => Int, {
    nullable: true,
    description: 'Image side the costs are for, pixels; null for language models.',
  })
  imageSize?: number;
  @Field(() => String, { description: 'Optimizer whose state is counted: sgd, adam or lamb.' })
  optimizer!: string;
  @Field(() => Float, { description: 'Trainable parameters (a count).' }) parameters!: number;
  @Field(() => Float, { description: 'Forward FLOPs per batch element (2 per multiply-add).' })
  forwardFlopsPerSample!: number;
  @Field(() => Float, { description: 'Backward FLOPs per batch element (about twice the forward).' })
  backwardFlopsPerSample!: number;
  @Field(() => Int, { description: 'Layers, counting repeats.' }) layerCount!: number;
  @Field(() => [LayerTypeSummary], { description: 'Layers totalled per layer type.' })
  layersByType!: LayerTypeSummary[];
  @Field(() => Float, { description: 'Activation elements one batch element writes in forward.' })
  activationElementsPerSample!: number;
  @Field(() => PrecisionEnum, { description: 'The precision activationGbPerSample is counted at.' })
  precision!: Precision;
  @Field(() => Float, {
    description:
      'Activation memory one batch element keeps for backward at `precision`, GiB, without recomputation, with fused attention, as predict counts it on the default software stack (seeds/memory.json savedForBackward and frameworkRules.eager say what each layer keeps).',
  })
  activationGbPerSample!: number;
  @Field(() => Float, {
    description:
      'The same with selective recomputation (attention core dropped), GiB: with fused attention, which never keeps the scores, the same figure.',
  })
  activationGbPerSampleSelective!: number;
  @Field(() => Int, {
    description:
      'Transformer blocks (attention layers) found: what pipeline stages and full recomputation count.',
  })
  transformerBlocks!: number;
  @Field(() => Int, {
    nullable: true,
    description: 'Fewest attention heads of any attention layer (tensor parallelism must divide it).',
  })
  attentionHeads!: number | null;
  @Field(() => Int, {
    nullable: true,
    description:
      'Fewest experts of any mixture-of-experts layer (expertParallel must divide it); null for a model without experts.',
  })
  experts!: number | null;
  @Field(() => Float, {
    description:
      "Of parameters: the experts' weights, which expert parallelism spreads over its GPUs (a token passes top-k of them); 0 without experts.",
  })
  expertParameters!: number;
  @Field(() => Boolean, { description: 'Has linear-layer pairs that tensor parallelism can split.' })
  tensorParallelizable!: boolean;
  @Field(() => [UnsupportedOperator], {
    description: 'Operators (ONNX) that could not be costed; empty for zoo models, configs and layer lists.',
  })
  unsupportedOperators!: UnsupportedOperator[];
  @Field(() => [String], { description: 'Defaults and approximations the import applied.' }) notes!: string[];
}
