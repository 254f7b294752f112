// GraphQL types for models users bring (predictor/import/): the ModelInput forms and what
// `modelSummary` answers. Checked in service/models.ts, which names the field at fault.
import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { LayerType, OptimizerKind, Precision } from '../predictor/types.js';
import { LayerTypeSummary, PrecisionEnum } from './types.js';

export enum LayerTypeEnum {
  conv2d = 'conv2d',
  conv1d = 'conv1d',
  linear = 'linear',
  matmul = 'matmul',
  embedding = 'embedding',
  norm = 'norm',
  activation = 'activation',
  elementwise = 'elementwise',
  softmax = 'softmax',
  pool = 'pool',
  rnn = 'rnn',
  loss = 'loss',
}
registerEnumType(LayerTypeEnum, {
  name: 'LayerType',
  description: "A layer type of the zoo's vocabulary (predictor/types.ts).",
});

export enum OptimizerEnum {
  sgd = 'sgd',
  adam = 'adam',
  lamb = 'lamb',
}
registerEnumType(OptimizerEnum, {
  name: 'Optimizer',
  description:
    'Optimizer whose state memory and update time count (adam covers AdamW; sgd holds one momentum buffer).',
});

@InputType({
  description:
    "One layer in the zoo's vocabulary, per sample (batch multiplies FLOPs and activations, not parameters). Give `type` and the fields that type takes; others are refused. Large sizes (elements, tokens) are Floats so they may exceed 2^31.",
})
export class LayerInput {
  @Field(() => LayerTypeEnum) type!: LayerType;
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => Int, {
    nullable: true,
    description: 'Repeat the layer this many times (e.g. identical transformer blocks).',
  })
  count?: number;
  // conv2d / conv1d / pool
  @Field(() => Float, { nullable: true }) inC?: number;
  @Field(() => Float, { nullable: true }) outC?: number;
  @Field(() => [Int], { nullable: true, description: 'One value, or [height, width] (conv2d).' })
  kernel?: number[];
  @Field(() => Int, { nullable: true }) stride?: number;
  @Field(() => [Int], { nullable: true, description: 'One value, or [height, width] (conv2d).' })
  padding?: number[];
  @Field(() => Int, { nullable: true }) groups?: number;
  @Field(() => Int, { nullable: true }) dilation?: number;
  @Field(() => Float, { nullable: true }) inH?: number;
  @Field(() => Float, { nullable: true }) inW?: number;
  @Field(() => Float, { nullable: true }) inL?: number;
  @Field(() => Boolean, { nullable: true }) bias?: boolean;
  // linear / matmul / embedding
  @Field(() => Float, { nullable: true }) inFeatures?: number;
  @Field(() => Float, { nullable: true }) outFeatures?: number;
  @Field(() => Float, { nullable: true }) tokens?: number;
  @Field(() => Boolean, {
    nullable: true,
    description: "linear: the weight is another layer's (no parameters of its own).",
  })
  tied?: boolean;
  @Field(() => Float, { nullable: true }) m?: number;
  @Field(() => Float, { nullable: true }) n?: number;
  @Field(() => Float, { nullable: true }) k?: number;
  @Field(() => Float, { nullable: true }) batches?: number;
  @Field(() => Float, { nullable: true }) vocab?: number;
  @Field(() => Float, { nullable: true }) dim?: number;
  // norm / activation / elementwise / softmax / loss
  @Field(() => String, {
    nullable: true,
    description:
      'norm: batchnorm, layernorm, rmsnorm, groupnorm; activation: relu, gelu, silu, sigmoid, tanh, swish; elementwise: add, mul, dropout, scale; pool: max, avg, global_avg.',
  })
  kind?: string;
  @Field(() => Float, { nullable: true }) channels?: number;
  @Field(() => Float, { nullable: true }) elements?: number;
  @Field(() => Int, { nullable: true }) inputs?: number;
  // rnn
  @Field(() => String, { nullable: true, description: 'lstm or gru.' }) cell?: string;
  @Field(() => Float, { nullable: true }) inputSize?: number;
  @Field(() => Float, { nullable: true }) hiddenSize?: number;
  @Field(() => Float, { nullable: true }) steps?: number;
  @Field(() => Boolean, { nullable: true }) bidirectional?: boolean;
}

@InputType({
  description:
    'A model that is not in the zoo: exactly one of huggingFaceConfig, onnxBase64 or layers. The sequence length (or image size) comes from workload.seqLen.',
})
export class ModelInput {
  @Field(() => String, {
    nullable: true,
    description:
      'The text of a Hugging Face config.json; model_type gpt2, gpt_neo, gptj, gpt_neox, opt, llama, mistral, qwen2, bert, t5 or vit.',
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
  @Field(() => String) opType!: string;
  @Field(() => String, { description: "Operator domain ('' for ai.onnx)." }) domain!: string;
  @Field(() => Int) count!: number;
  @Field(() => [String], { description: 'Up to five node names.' }) nodes!: string[];
  @Field(() => String) reason!: string;
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
  @Field(() => String) name!: string;
  @Field(() => String) family!: string;
  @Field(() => String) source!: string;
  @Field(() => String) batchElement!: string;
  @Field(() => String, { description: 'Unit of throughput and of workload.samples.' })
  throughputUnit!: string;
  @Field(() => Float) unitsPerBatchElement!: number;
  @Field(() => Int, { nullable: true }) seqLen?: number;
  @Field(() => Int, { nullable: true }) imageSize?: number;
  @Field(() => String) optimizer!: string;
  @Field(() => Float) parameters!: number;
  @Field(() => Float, { description: 'Forward FLOPs per batch element (2 per multiply-add).' })
  forwardFlopsPerSample!: number;
  @Field(() => Float) backwardFlopsPerSample!: number;
  @Field(() => Int) layerCount!: number;
  @Field(() => [LayerTypeSummary]) layersByType!: LayerTypeSummary[];
  @Field(() => Float, { description: 'Activation elements one batch element writes in forward.' })
  activationElementsPerSample!: number;
  @Field(() => PrecisionEnum, { description: 'The precision activationGbPerSample is counted at.' })
  precision!: Precision;
  @Field(() => Float, {
    description:
      'Activation memory one batch element keeps for backward at `precision`, GiB, without recomputation.',
  })
  activationGbPerSample!: number;
  @Field(() => Float, { description: 'The same with selective recomputation (attention core dropped).' })
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
  @Field(() => Boolean, { description: 'Has linear-layer pairs that tensor parallelism can split.' })
  tensorParallelizable!: boolean;
  @Field(() => [UnsupportedOperator], {
    description: 'Operators (ONNX) that could not be costed; empty for zoo models, configs and layer lists.',
  })
  unsupportedOperators!: UnsupportedOperator[];
  @Field(() => [String], { description: 'Defaults and approximations the import applied.' }) notes!: string[];
}
