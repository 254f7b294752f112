// GraphQL input types. Ranges are checked in the service layer (service/planning.ts,
// service/validate.ts), which names the field at fault; the service declares the same shapes.
import { Field, Float, InputType, Int } from 'type-graphql';
import type { Precision } from '../predictor/types.js';
import type { Framework } from '../predictor/learned/features.js';
import type { SoftwareStack } from '../predictor/software.js';
import type { NetworkTransport } from '../seeds/types.js';
import {
  EvidenceLevelEnum,
  FrameworkEnum,
  NetworkTransportEnum,
  ObjectiveEnum,
  PrecisionEnum,
  PredictorChoiceEnum,
  RankByEnum,
  SoftwareStackEnum,
} from './types.js';
import { ModelInput } from './custom-model.js';
import { ParallelismInput, ParallelismSearchEnum } from './parallelism.js';
import { AttentionEnum, FineTuningEnum } from './memory.js';
import { LIMITS } from '../service/validate.js';
import type { ParallelismSearch } from '../optimizer/recommend.js';

/** PredictInput's and RecommendInput's channelsLast: what it changes and its defaults, said once. */
const CHANNELS_LAST =
  "Convolution activations stored channels-last (NHWC, torch.channels_last), the layout tensor-core convolutions read; on NCHW a 16-bit convolution runs at a fraction of that rate (seeds/efficiency.json nchwConvEfficiency, set from published comparisons). Default: channels-last under TensorFlow and MXNet (they convert fp16 graphs themselves) and under TORCH_COMPILE, MEGATRON and TUNED; NCHW for eager PyTorch, PyTorch's default memory format.";

/** Every request's attention (predict, recommend, the coupled planners' jobs): its defaults, said once. */
export const ATTENTION =
  "How the attention cores run: the step's time and what they keep for backward. Default: for the time, on PYTORCH_EAGER the model's code's (FUSED, one kernel, except the zoo's BERT, Transformer-XL and Transformer, whose DeepLearningExamples scripts write the scores to memory, and Hugging Face's GPT-Neo, GPT-J and gpt-oss: EAGER), FUSED on the other stacks; FUSED for the memory.";

/** The `precisions` argument of every search (recommend and the coupled planners): one default, said once. */
export const PRECISIONS_ALLOWED =
  'Precision modes allowed (default: all but FP4, which no measurement supports, FP16_PURE, whose training may not converge, and FP8 for a model whose GEMM FLOPs are mostly not in linear layers, e.g. a CNN, which FP8 would leave in bf16; list them to search them).';

@InputType({ description: 'What to train and how much of it.' })
export class WorkloadInput {
  // null when customModel is given (service/lookup.ts workload() requires exactly one of the two).
  @Field(() => String, { nullable: true, description: 'A zoo model id (see `models`); or give customModel.' })
  model!: string;
  @Field(() => Float, {
    description: "Total work in the model's throughput unit (dataset size x epochs), e.g. images or tokens.",
  })
  samples!: number;
  @Field(() => ModelInput, {
    nullable: true,
    description:
      'A model that is not in the zoo: a Hugging Face config, an ONNX graph or a layer list (see `modelSummary`).',
  })
  customModel?: ModelInput;
  @Field(() => Int, {
    nullable: true,
    description: "Sequence length (or image size for vision models); default: the model's own.",
  })
  seqLen?: number;
  @Field(() => FineTuningEnum, {
    defaultValue: FineTuningEnum.FULL,
    description: 'FULL trains every weight (the default); LORA trains low-rank adapters on a frozen base.',
  })
  fineTuning!: FineTuningEnum;
}

@InputType({ description: 'A negotiated price that overrides the catalog.' })
export class PriceInput {
  @Field(() => String, { description: 'A catalog GPU id.' }) gpu!: string;
  @Field(() => Float, { description: 'Price, USD per GPU-hour.' }) usdPerGpuHour!: number;
}

@InputType({
  description: "An offer from a user's own price sheet: whole instances of one GPU type at one price.",
})
export class OfferInput {
  @Field(() => String, { description: 'Provider name (matched case-insensitively against providers).' })
  provider!: string;
  @Field(() => String, {
    description: "Instance type; an offer with the catalog's provider and instance replaces the catalog's.",
  })
  instance!: string;
  @Field(() => String, { description: 'GPU id (see `gpus`).' }) gpu!: string;
  @Field(() => Int, { description: 'GPUs in one instance (1 to 16).' }) gpusPerInstance!: number;
  @Field(() => Float, { description: 'USD per instance-hour.' }) usdPerHour!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'Inter-node network per instance, Gbps; leave out if unknown (200 Gbps is then assumed).',
  })
  interNodeGbps?: number;
  @Field(() => NetworkTransportEnum, {
    defaultValue: 'RDMA',
    description:
      'How NCCL crosses that network: TCP for an instance with Ethernet only (no InfiniBand, RoCE or EFA).',
  })
  interNodeTransport!: NetworkTransport;
  @Field(() => String, { nullable: true, description: 'Region the price is for.' }) region?: string;
  @Field(() => String, {
    nullable: true,
    description: 'Date of the price, YYYY-MM-DD (default: today); older than 180 days is flagged stale.',
  })
  priceDate?: string;
}

@InputType({ description: 'One configuration to predict: workload, GPU type, layout, batch and precision.' })
export class PredictInput {
  @Field(() => WorkloadInput, { description: 'What to train and how much of it.' }) workload!: WorkloadInput;
  @Field(() => String, { description: 'A catalog GPU id (see `gpus`).' }) gpu!: string;
  @Field(() => Int, { defaultValue: 1, description: 'Nodes (machines), 1 or more.' }) nodes!: number;
  @Field(() => Int, { defaultValue: 1, description: 'GPUs in each node.' }) gpusPerNode!: number;
  @Field(() => Int, { description: 'Batch elements per GPU per micro-batch.' }) batchSizePerGpu!: number;
  @Field(() => Int, { defaultValue: 1, description: 'Micro-batches accumulated per optimizer step.' })
  gradAccumSteps!: number;
  @Field(() => PrecisionEnum, { description: 'The precision mode to train in.' }) precision!: Precision;
  @Field(() => FrameworkEnum, {
    defaultValue: 'PyTorch',
    description: 'Framework the job runs in (PyTorch unless said).',
  })
  framework!: Framework;
  @Field(() => Boolean, { defaultValue: false, description: 'Compiled with XLA (TensorFlow/JAX).' })
  xla!: boolean;
  @Field(() => SoftwareStackEnum, {
    defaultValue: 'PYTORCH_EAGER',
    description:
      'Software stack the estimate assumes (PYTORCH_EAGER unless said). Other stacks have analytical effects fitted on published LLM runs; the learned correction, trained on the benchmark rows and those runs together, applies to every stack.',
  })
  softwareStack!: SoftwareStack;
  @Field(() => Boolean, {
    nullable: true,
    description: CHANNELS_LAST,
  })
  channelsLast?: boolean;
  @Field(() => Boolean, {
    defaultValue: true,
    description:
      'FP32 runs matmuls/convolutions in TF32 on Ampere and newer (the NGC/TensorFlow/cuDNN default).',
  })
  fp32UsesTf32!: boolean;
  @Field(() => Float, {
    nullable: true,
    description: 'Inter-node network per node, Gbps (default: seeds/network.json).',
  })
  interNodeGbps?: number;
  @Field(() => NetworkTransportEnum, {
    defaultValue: 'RDMA',
    description:
      'How NCCL crosses that network: TCP for nodes joined by Ethernet only (no InfiniBand, RoCE or EFA).',
  })
  interNodeTransport!: NetworkTransport;
  @Field(() => Float, {
    nullable: true,
    description:
      "A per-GPU-hour price (USD), billed per GPU used, instead of the catalog's offers (default: the cheapest offer whose instance holds gpusPerNode GPUs, paid whole).",
  })
  priceUsdPerGpuHour?: number;
  @Field(() => ParallelismInput, {
    nullable: true,
    description:
      'Tensor/pipeline/context/expert parallelism, ZeRO, recomputation; leave out for plain data parallelism.',
  })
  parallelism?: ParallelismInput;
  @Field(() => AttentionEnum, {
    nullable: true,
    description: ATTENTION,
  })
  attention?: AttentionEnum;
  @Field(() => Float, {
    nullable: true,
    description: `GB per GPU to keep free beyond the predicted peak in deciding fitsInMemory, 0 to ${LIMITS.memoryHeadroomGb}; default 0 (seeds/memory.json defaultMemoryHeadroomGb: every part the framework adds is already counted).`,
  })
  memoryHeadroomGb?: number;
}

@InputType({
  description:
    'What to plan for: the workload, the objective, limits (deadline, budget, GPUs) and the search space.',
})
export class RecommendInput {
  @Field(() => WorkloadInput, { description: 'What to train and how much of it.' }) workload!: WorkloadInput;
  @Field(() => ObjectiveEnum, {
    defaultValue: ObjectiveEnum.COST,
    description: 'Rank cheapest first (COST) or fastest first (TIME).',
  })
  objective!: ObjectiveEnum;
  @Field(() => Float, {
    nullable: true,
    description: 'Plans must finish within this many hours; default no deadline.',
  })
  deadlineHours?: number;
  @Field(() => Boolean, {
    defaultValue: false,
    description: 'Require the deadline to hold at the P90 step time, not only at the estimate.',
  })
  deadlineConfidence!: boolean;
  @Field(() => FrameworkEnum, {
    defaultValue: 'PyTorch',
    description: 'Framework the job runs in (PyTorch unless said).',
  })
  framework!: Framework;
  @Field(() => Boolean, { defaultValue: false, description: 'Compiled with XLA (TensorFlow/JAX).' })
  xla!: boolean;
  @Field(() => SoftwareStackEnum, {
    defaultValue: 'PYTORCH_EAGER',
    description:
      'Software stack the estimate assumes (PYTORCH_EAGER unless said). Other stacks have analytical effects fitted on published LLM runs; the learned correction, trained on the benchmark rows and those runs together, applies to every stack.',
  })
  softwareStack!: SoftwareStack;
  @Field(() => Boolean, {
    nullable: true,
    description: CHANNELS_LAST,
  })
  channelsLast?: boolean;
  @Field(() => Float, {
    nullable: true,
    description: 'Plans must cost at most this many USD; default no budget.',
  })
  budgetUsd?: number;
  @Field(() => [String], { nullable: true, description: 'GPU ids allowed (default: every catalog GPU).' })
  gpus?: string[];
  @Field(() => [PrecisionEnum], {
    nullable: true,
    description: PRECISIONS_ALLOWED,
  })
  precisions?: Precision[];
  @Field(() => Int, { defaultValue: 8, description: 'Most nodes (machines) a plan may use.' })
  maxNodes!: number;
  @Field(() => Int, {
    nullable: true,
    description: 'Most GPUs a plan may use in total; default no limit beyond maxNodes.',
  })
  maxGpus?: number;
  @Field(() => [Int], {
    nullable: true,
    description: 'GPUs per node to consider (default 1, 2, 4, 8; 16 on DGX-2).',
  })
  gpusPerNode?: number[];
  @Field(() => [Int], {
    nullable: true,
    description: "Per-GPU batch sizes to consider (default: the model's typical ones).",
  })
  batchSizes?: number[];
  @Field(() => Int, {
    nullable: true,
    description: 'Fix the global batch; plans accumulate gradients to reach it.',
  })
  globalBatch?: number;
  @Field(() => [PriceInput], {
    nullable: true,
    description:
      "Per-GPU-hour prices (USD) that replace every offer for their GPU: billed per GPU used, on the GPU's usual node sizes. Prefer offers.",
  })
  prices?: PriceInput[];
  @Field(() => [OfferInput], {
    nullable: true,
    description:
      'Your own price sheet: replaces catalog offers with the same provider and instance, adds the rest.',
  })
  offers?: OfferInput[];
  @Field(() => Boolean, {
    defaultValue: true,
    description:
      "Price from the catalog's offers (seeds/instances.csv) as well as your own; false: only offers and prices.",
  })
  catalogOffers!: boolean;
  @Field(() => [String], {
    nullable: true,
    description:
      'Only offers of these providers (case-insensitive); GPUs left without an offer are not priced.',
  })
  providers?: string[];
  @Field(() => RankByEnum, {
    defaultValue: 'EXPECTED',
    description: 'Rank by the estimate (EXPECTED) or by the 90th-percentile time and cost (P90).',
  })
  rankBy!: keyof typeof RankByEnum;
  @Field(() => EvidenceLevelEnum, {
    defaultValue: 'UNMEASURED',
    description:
      'Least measurement a plan needs (UNMEASURED: any plan; GPU_MEASURED: only measured GPU types).',
  })
  minEvidence!: keyof typeof EvidenceLevelEnum;
  @Field(() => PredictorChoiceEnum, {
    defaultValue: 'LEARNED',
    description:
      'LEARNED: the analytical estimate with the learned correction; ANALYTICAL: the roofline alone.',
  })
  predictor!: keyof typeof PredictorChoiceEnum;
  @Field(() => Int, {
    nullable: true,
    description:
      'Largest global batch (batch elements: per-GPU batch x data-parallel GPUs) a plan may train with when globalBatch is not fixed. Default: the largest this model was measured with (a published LLM architecture: the largest global batch in tokens its published runs or pre-training recipe used, as sequences of this length), or 64 GPUs at its largest default batch.',
  })
  maxGlobalBatch?: number;
  @Field(() => Float, {
    nullable: true,
    description: 'Inter-node network per node, Gbps (default: seeds/network.json per GPU).',
  })
  interNodeGbps?: number;
  @Field(() => NetworkTransportEnum, {
    nullable: true,
    description:
      "How NCCL crosses every plan's network: TCP for nodes joined by Ethernet only (no InfiniBand, RoCE or EFA). Default: each offer's (TCP for the catalog's Ethernet-only instance types, RDMA otherwise).",
  })
  interNodeTransport?: NetworkTransport;
  @Field(() => Boolean, {
    defaultValue: true,
    description: 'FP32 runs matmuls/convolutions in TF32 on Ampere and newer (the framework default).',
  })
  fp32UsesTf32!: boolean;
  @Field(() => Int, { defaultValue: 10, description: 'Plans to return (ranked 1..limit).' }) limit!: number;
  @Field(() => ParallelismSearchEnum, {
    defaultValue: ParallelismSearchEnum.AUTO,
    description:
      'Where to search tensor/pipeline parallelism (interleaved too, on a software stack whose pipeline engine interleaves: MEGATRON, TUNED, TORCH_COMPILE), ZeRO, recomputation and, for a mixture-of-experts model, expert parallelism (AUTO: where plain data parallelism does not fit, or trains above the global batch cap). Every plan says what it chose in `parallelism`.',
  })
  parallelismSearch!: ParallelismSearch;
  @Field(() => AttentionEnum, {
    nullable: true,
    description: ATTENTION,
  })
  attention?: AttentionEnum;
  @Field(() => Float, {
    nullable: true,
    description: `GB per GPU every plan keeps free beyond its predicted peak, 0 to ${LIMITS.memoryHeadroomGb}; default 0 (seeds/memory.json defaultMemoryHeadroomGb: every part the framework adds is already counted). Raise it for evaluation passes, profilers or a second process.`,
  })
  memoryHeadroomGb?: number;
  @Field(() => Int, {
    nullable: true,
    description:
      "Milliseconds the search may take, counted from the request's arrival. Default the server's budget (TRAINPLAN_TIME_BUDGET_MS, 2000 unless set); at most TRAINPLAN_MAX_TIME_BUDGET_MS (10000 unless set, never less than the default). A search still running then is refused (error SEARCH_TIMEOUT, whose extensions give budgetMs and maxBudgetMs), never answered in part.",
  })
  timeBudgetMs?: number;
}
