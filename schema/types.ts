// GraphQL output types. Resolvers return the predictor's and optimizer's plain objects; these
// classes only declare how they look over the wire.
import { Field, Float, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { PRECISIONS, type Precision } from '../predictor/types.js';
import { SOFTWARE_STACKS, type SoftwareStack } from '../predictor/software.js';
import { NETWORK_TRANSPORTS, type NetworkTransport } from '../seeds/types.js';
import { POLICIES, stockLoopPolicy } from '../predictor/precision.js';
import { Parallelism } from './parallelism.js';
import { REJECT_REASONS, type RejectReason } from '../optimizer/recommend.js';
import type { Regime } from '../predictor/learned/model.js';

export const PrecisionEnum = Object.fromEntries(PRECISIONS.map((p) => [p, p])) as { [K in Precision]: K };
registerEnumType(PrecisionEnum, {
  name: 'Precision',
  description: 'Training precision mode (see the `precisions` query for what each means).',
  // A mode stored differently in a stock loop (the default stack) says both (precision.ts storagePolicy).
  valuesConfig: Object.fromEntries(
    PRECISIONS.map((p) => {
      const stock = stockLoopPolicy(p);
      return [
        p,
        {
          description:
            stock === POLICIES[p]
              ? POLICIES[p].description
              : `On PYTORCH_EAGER (the default stack): ${stock.description} On the other stacks: ${POLICIES[p].description}`,
        },
      ];
    }),
  ),
});

// GraphQL names are CONSTANT_CASE; the values are the framework names the measurements use.
export const FrameworkEnum = {
  PYTORCH: 'PyTorch',
  TENSORFLOW: 'TensorFlow',
  TENSORFLOW2: 'TensorFlow2',
  MXNET: 'MXNet',
  PADDLEPADDLE: 'PaddlePaddle',
} as const;
registerEnumType(FrameworkEnum, {
  name: 'Framework',
  description:
    'Training framework: the learned model has seen the same configuration run up to 2x apart between frameworks.',
  valuesConfig: {
    PYTORCH: { description: 'PyTorch (the default).' },
    TENSORFLOW: { description: 'TensorFlow 1.x.' },
    TENSORFLOW2: { description: 'TensorFlow 2.x (Keras).' },
    MXNET: { description: 'Apache MXNet.' },
    PADDLEPADDLE: { description: 'PaddlePaddle.' },
  },
});

export const SoftwareStackEnum = Object.fromEntries(SOFTWARE_STACKS.map((s) => [s, s])) as {
  [K in SoftwareStack]: K;
};
registerEnumType(SoftwareStackEnum, {
  name: 'SoftwareStack',
  description:
    'The software a job runs on, which the estimate assumes (seeds/software.json). The default is what a typical PyTorch user gets.',
  valuesConfig: {
    PYTORCH_EAGER: {
      description:
        'Stock framework code: one kernel per op, attention scores in memory. The default; the measurements the constants and the learned correction are fitted on ran this way.',
    },
    TORCH_COMPILE: {
      description:
        'A graph compiler (torch.compile, XLA in JAX/MaxText): fused attention and elementwise chains; fitted on published torchtitan/MaxText/PaxML LLM runs.',
    },
    MEGATRON: {
      description:
        'Megatron-Core / NeMo with Transformer Engine: fused attention and elementwise kernels, GEMMs at the measured kernel rate; fitted on published NeMo/Megatron LLM runs.',
    },
    TUNED: {
      description: 'Hand-tuned benchmark code (MLPerf-style): as MEGATRON plus CUDA graphs (no launch cost).',
    },
  },
});

export const NetworkTransportEnum = Object.fromEntries(NETWORK_TRANSPORTS.map((t) => [t, t])) as {
  [K in NetworkTransport]: K;
};
registerEnumType(NetworkTransportEnum, {
  name: 'NetworkTransport',
  description:
    'How NCCL crosses the network between nodes, which sets what fraction of its line rate a step gets.',
  valuesConfig: {
    RDMA: {
      description:
        "InfiniBand, RoCE or AWS EFA: costed at seeds/efficiency.json networkEfficiency, fitted on scaling runs over InfiniBand. GCP's GPUDirect-TCPX/TCPXO fabrics (TCP offloaded to the NIC, straight to GPU memory) are costed alike. The default.",
    },
    TCP: {
      description:
        "NCCL's socket transport over an instance's Ethernet (AWS ENA, Azure accelerated networking): tcpNetworkEfficiency of the line rate, from published NCCL all-reduce measurements over TCP (seeds/efficiency.json).",
    },
  },
});

export enum ObjectiveEnum {
  COST = 'COST',
  TIME = 'TIME',
}
registerEnumType(ObjectiveEnum, {
  name: 'Objective',
  description: 'What plans are ranked by.',
  valuesConfig: {
    COST: { description: 'Cheapest plan first (USD), ties broken by hours.' },
    TIME: { description: 'Fastest plan first (hours), ties broken by USD.' },
  },
});

export enum SearchStatusEnum {
  COMPLETE = 'COMPLETE',
}
registerEnumType(SearchStatusEnum, {
  name: 'SearchStatus',
  description:
    'Whether the search evaluated every candidate. A search that cannot finish within its time budget is refused with an error (extensions.code SEARCH_TIMEOUT), never answered with part of the candidates, so an answer never depends on server load.',
  valuesConfig: { COMPLETE: { description: 'Every candidate was evaluated.' } },
});

export const RankByEnum = { EXPECTED: 'EXPECTED', P90: 'P90' } as const;
registerEnumType(RankByEnum, {
  name: 'RankBy',
  description: 'Which figure ranks plans and draws the Pareto front.',
  valuesConfig: {
    EXPECTED: { description: 'The estimate (costUsd, totalHours).' },
    P90: {
      description:
        'The 90th percentile (costUsdP90, totalHoursP90): a plan whose bad case is cheap ranks first.',
    },
  },
});

export const EvidenceLevelEnum = {
  UNMEASURED: 'UNMEASURED',
  GPU_MEASURED: 'GPU_MEASURED',
  MODEL_MEASURED_ON_GPU: 'MODEL_MEASURED_ON_GPU',
} as const;
registerEnumType(EvidenceLevelEnum, {
  name: 'EvidenceLevel',
  description: 'How much measurement stands behind a prediction, least first.',
  valuesConfig: {
    UNMEASURED: { description: 'No measured run on this GPU type: datasheet figures only.' },
    GPU_MEASURED: { description: 'The GPU type has measured runs, of other models.' },
    MODEL_MEASURED_ON_GPU: { description: 'This model has measured runs on this GPU type.' },
  },
});

// The predictor's regimes (learned/model.ts Regime), by their GraphQL names.
export const StepBoundEnum = { HOST: 'host', COMMUNICATION: 'communication' } as const;
registerEnumType(StepBoundEnum, {
  name: 'StepBound',
  description:
    'What besides the GPU holds a step: a tenth of the roofline step or more. No GPU figure says how fast it goes, so the step has the wider interval measured on such runs (seeds/PREDICTOR_CARD.md, Intervals).',
  valuesConfig: {
    HOST: {
      description:
        "The host: kernel launches the GPU waits for and per-step framework work on the CPU (small batches, per-step loops). The machine's CPU sets it: time a few steps there (trainplan harness).",
    },
    COMMUNICATION: {
      description: 'Gradient synchronisation left exposed: the links between GPUs and between nodes set it.',
    },
  },
});

export const PredictorChoiceEnum = { LEARNED: 'LEARNED', ANALYTICAL: 'ANALYTICAL' } as const;
registerEnumType(PredictorChoiceEnum, {
  name: 'PredictorChoice',
  description: 'Which predictor ranks the plans.',
  valuesConfig: {
    LEARNED: { description: 'The analytical estimate with the learned correction and its P10-P90 interval.' },
    ANALYTICAL: { description: 'The roofline estimate alone (P10 = P90 = the estimate).' },
  },
});

const HARNESS =
  "How to time this configuration on your own GPUs (the measurement harness's commands) and record it: the run then calibrates this configuration's predictions and plans.";
/** Prediction's and Plan's boundBy: one meaning, one text. */
const BOUND_BY =
  'What besides the GPU holds the step (a tenth of it or more), widening its interval (unless your runs of the model on that GPU set it); empty when the GPU does, or when only the analytical estimate answered.';

/** dominantMath, modelTflopsPerGpu and mfu of every answer with a step time: one meaning, one text. */
export const DOMINANT_MATH =
  'Math mode that carries most FLOPs (FP32 on Ampere+ runs TF32 unless fp32UsesTf32 is false): what mfu is measured against.';
export const MODEL_TFLOPS =
  "Model FLOPs each GPU does per second at this step time, TFLOPS: every GEMM and convolution's forward and backward, attention over every key, no recomputation (Megatron-LM's and NeMo's count: it reproduces NeMo's published model TFLOPS of its pre-training runs within 0.2%; Megatron-Bridge and NeMo AutoModel count causal attention at half, so their figures are 4-11% lower for the same dense Llama run).";
export const MFU =
  "Model FLOPs utilization: modelTflopsPerGpu over the GPU's dense peak in dominantMath (FP8 against the FP8 peak, as dgxc-benchmarking publishes it; BF16 against BF16's); null when the catalog has no such peak. dgxc-benchmarking published 0.62 for Llama 3.1 8B in BF16 on H100s and 0.41 in FP8. A convolution counts as a direct one, which cuDNN's Winograd and FFT algorithms undercut: a CNN's MFU in FP32 can pass 1 (AlexNet and VGG-16 on Turing GeForce cards, measured: 1.5-1.7).";

/** Prediction's and Plan's precisionUnmeasured: one meaning, one text. */
const PRECISION_UNMEASURED =
  "True when this model is measured, but no row of it ran this precision on any GPU (BF16 for a CNN): the estimate rests on other models' rows in that precision, and its interval is at least the held-out errors of such (model, precision) pairs; false when the precision is measured, the model is not, or only the analytical estimate answered.";

@ObjectType({
  description: 'Dense datasheet peak per math mode, TFLOPS; null where the GPU has no such mode.',
})
export class PeakTflops {
  @Field(() => Float, {
    nullable: true,
    description: 'FP32 (non-tensor) dense peak, TFLOPS; null when no source gives it.',
  })
  fp32!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'TF32 tensor-core dense peak, TFLOPS; null on GPUs without TF32.',
  })
  tf32!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'FP16 tensor-core dense peak with FP32 accumulate, TFLOPS; null without FP16 tensor cores.',
  })
  fp16!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'BF16 tensor-core dense peak, TFLOPS; null on GPUs without BF16.',
  })
  bf16!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'FP8 tensor-core dense peak, TFLOPS; null on GPUs without FP8.',
  })
  fp8!: number | null;
  @Field(() => Float, {
    nullable: true,
    description:
      'Dense FP4 (NVFP4/MXFP4) tensor-core peak, TFLOPS; null where the datasheet gives no FP4 rate (before Blackwell).',
  })
  fp4!: number | null;
}

@ObjectType({ description: 'An accelerator of the catalog, with the source of its figures.' })
export class Gpu {
  @Field(() => ID, {
    description: 'Catalog id, e.g. H100-SXM5-80GB (what `gpu`, `prices` and GPU filters take).',
  })
  id!: string;
  @Field(() => String, { description: 'Maker, e.g. NVIDIA, AMD, Google, Intel.' }) vendor!: string;
  @Field(() => String, { description: 'Chip architecture as the vendor names it, e.g. Hopper (GH100).' })
  architecture!: string;
  @Field(() => String, {
    description:
      'Architecture generation the predictor keys efficiencies on (pascal, volta, ampere, hopper, ...).',
  })
  generation!: string;
  @Field(() => Int, { nullable: true, description: 'Year of release; null when no source gives it.' })
  releaseYear!: number | null;
  @Field(() => String, { description: 'Board form factor, e.g. SXM5, PCIe, OAM.' }) formFactor!: string;
  @Field(() => Float, {
    description:
      'GPU memory as the vendor labels it, GB (the figure in the name; GiB in practice). Plans fit in usableMemoryGb.',
  })
  memoryGb!: number;
  @Field(() => Float, {
    description:
      "Memory a training process can have, GiB: CUDA's total (what torch.cuda.get_device_properties reports), a few hundred MiB to 8% under the label, which the driver keeps; what every plan's memoryGbPerGpu plus its headroom must fit in. The label where no source gives it (usableMemorySource).",
  })
  usableMemoryGb!: number;
  @Field(() => String, {
    description:
      'Where usableMemoryGb comes from: the driver-reported figure and its source (seeds/gpu-memory.csv), or that it is the label.',
  })
  usableMemorySource!: string;
  @Field(() => String, { description: 'Memory technology, e.g. HBM3, GDDR6.' }) memoryType!: string;
  @Field(() => Float, { description: 'Datasheet memory bandwidth, GB/s.' }) memoryBwGbps!: number;
  @Field(() => Float, { nullable: true, description: 'L2 cache, MB; null when no source gives it.' })
  l2CacheMb!: number | null;
  @Field(() => Int, {
    nullable: true,
    description: 'Streaming multiprocessors (or compute units); null when no source gives it.',
  })
  smCount!: number | null;
  @Field(() => Float, { nullable: true, description: 'Boost clock, MHz; null when no source gives it.' })
  boostClockMhz!: number | null;
  @Field(() => PeakTflops, { description: 'Dense datasheet peak per math mode, TFLOPS.' })
  peakTflops!: PeakTflops;
  @Field(() => String, { description: 'Link between the GPUs of one node, e.g. NVLink 4 or PCIe Gen4 x16.' })
  intraNodeLink!: string;
  @Field(() => Float, { description: 'Bidirectional per-GPU intra-node bandwidth, GB/s.' })
  intraNodeBwGbpsBidir!: number;
  @Field(() => String, { description: 'gpus.csv, or the link-name rule it was derived from.' })
  intraNodeBwSource!: string;
  @Field(() => Float, {
    nullable: true,
    description: 'Thermal design power, watts; null when no source gives it.',
  })
  tdpW!: number | null;
  @Field(() => String, {
    description: 'Network between nodes as typical systems ship it (text from the catalog).',
  })
  typicalInternodeNetwork!: string;
  @Field(() => Float, {
    nullable: true,
    description: 'Default price: the lowest on-demand price point in the catalog.',
  })
  priceUsdPerGpuHour!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'Highest on-demand price point in the catalog, USD per GPU-hour; null without prices.',
  })
  priceUsdPerGpuHourMax!: number | null;
  @Field(() => String, {
    description: 'The on-demand price points the catalog lists, with provider and instance (text).',
  })
  pricePoints!: string;
  @Field(() => String, { description: 'Where the price points come from.' }) priceSource!: string;
  @Field(() => String, { description: 'Where the hardware figures come from.' }) source!: string;
  @Field(() => String, {
    description: 'Caveats on the figures (conventions, disagreements between sources).',
  })
  notes!: string;
  @Field(() => [PrecisionEnum], { description: 'Precision modes this GPU can train in.' })
  supportedPrecisions!: Precision[];
}

@ObjectType({ description: 'Layers of one type in a model, totalled.' })
export class LayerTypeSummary {
  @Field(() => String, { description: 'Layer type (the LayerType vocabulary, lower case as in the zoo).' })
  type!: string;
  @Field(() => Int, { description: 'Layers of this type, counting repeats.' }) count!: number;
  @Field(() => Float, { description: 'Parameters of these layers together (a count).' }) parameters!: number;
  @Field(() => Float, { description: 'Forward FLOPs of these layers per batch element.' })
  forwardFlopsPerSample!: number;
}

@ObjectType({ description: 'A model of the zoo; its costs are computed from its layer definitions.' })
export class Model {
  @Field(() => ID, { description: 'Zoo id, e.g. resnet50_v1.5 (what workload.model takes).' }) id!: string;
  @Field(() => String, { description: 'Display name.' }) name!: string;
  @Field(() => String, { description: 'Model family, e.g. resnet, bert, gpt, llama.' }) family!: string;
  @Field(() => String, { description: 'What one batch element is: image, sequence, token, ...' })
  batchElement!: string;
  @Field(() => String, { description: 'Unit of throughput and of workload.samples.' })
  throughputUnit!: string;
  @Field(() => Float, {
    description: 'Throughput units per batch element (e.g. tokens per sequence = the sequence length).',
  })
  unitsPerBatchElement!: number;
  @Field(() => Int, {
    nullable: true,
    description: 'Default sequence length, tokens; null for vision models.',
  })
  seqLen?: number;
  @Field(() => Int, { nullable: true, description: 'Default image side, pixels; null for language models.' })
  imageSize?: number;
  @Field(() => String, { description: 'Optimizer whose state is counted: sgd, adam or lamb.' })
  optimizer!: string;
  @Field(() => [Int], {
    description: 'Typical per-GPU batch sizes, batch elements; what recommend searches by default.',
  })
  batchSizes!: number[];
  @Field(() => Float, { description: 'Trainable parameters (a count).' }) parameters!: number;
  @Field(() => Float, { description: 'Forward FLOPs per batch element (2 per multiply-add).' })
  forwardFlopsPerSample!: number;
  @Field(() => Float, { description: 'Backward FLOPs per batch element (about twice the forward).' })
  backwardFlopsPerSample!: number;
  @Field(() => Int, { description: 'Layers, counting repeats.' }) layerCount!: number;
  @Field(() => [LayerTypeSummary], { description: 'Layers totalled per layer type.' })
  layersByType!: LayerTypeSummary[];
  @Field(() => String, { description: 'Paper or reference implementation the architecture comes from.' })
  source!: string;
}

@ObjectType({ description: 'What a precision mode means for the hardware.' })
export class PrecisionInfo {
  @Field(() => PrecisionEnum, { description: 'The precision mode.' }) id!: Precision;
  @Field(() => String, { description: 'What the mode does, in words.' }) description!: string;
  @Field(() => String, { description: 'Math mode of matmuls and convolutions.' }) matmulMath!: string;
  @Field(() => String, {
    description: 'Storage format of the weights the forward pass reads (fp32, fp16, bf16).',
  })
  weights!: string;
  @Field(() => String, { description: 'Storage format of the gradients.' }) gradients!: string;
  @Field(() => Boolean, { description: 'Keeps an fp32 master copy of the weights.' }) masterWeights!: boolean;
  @Field(() => Boolean, { description: 'Needs loss scaling (fp16 range).' }) lossScaling!: boolean;
  @Field(() => String, { description: "Storage format of the optimizer's state." }) optimizerState!: string;
}

@ObjectType({ description: 'Milliseconds per optimizer step, by where the time goes.' })
export class Breakdown {
  @Field(() => Float, { description: 'Forward pass, ms.' }) forwardMs!: number;
  @Field(() => Float, { description: 'Backward pass, ms.' }) backwardMs!: number;
  @Field(() => Float, { description: 'Optimizer update, ms.' }) optimizerMs!: number;
  @Field(() => Float, { description: 'Casts, master-weight copies, loss scaling, FP8 scaling.' })
  mixedPrecisionMs!: number;
  @Field(() => Float, {
    description:
      'Communication not hidden behind compute, including the wait for the slowest GPU at each synchronisation.',
  })
  communicationMs!: number;
  @Field(() => Float, {
    description: 'Communication time, hidden or not, including the wait for the slowest GPU.',
  })
  communicationTotalMs!: number;
  @Field(() => Float, { description: 'Kernel launches and per-step fixed cost.' }) overheadMs!: number;
  @Field(() => Float, { description: 'Forward passes rerun in backward (activation recomputation).' })
  recomputeMs!: number;
  @Field(() => Float, {
    description:
      'Pipeline fill and drain: (stages - 1) x one micro-batch stage time, a fraction (PP-1)/(m+PP-1) of the step.',
  })
  pipelineBubbleMs!: number;
  @Field(() => Float, {
    description:
      'Data-parallel gradient all-reduce, or ZeRO reduce-scatters and all-gathers, and the wait for the slowest GPU; hidden or not.',
  })
  dataParallelCommMs!: number;
  @Field(() => Float, {
    description: 'Tensor-parallel all-reduces of every split layer pair (on the critical path).',
  })
  tensorParallelCommMs!: number;
  @Field(() => Float, { description: 'Pipeline sends of activations and gradients between stages.' })
  pipelineCommMs!: number;
  @Field(() => Float, {
    description:
      "Expert-parallel all-to-alls (tokens to their experts' GPUs and back, every mixture-of-experts layer, forward and backward; on the critical path); 0 without expert parallelism.",
  })
  expertParallelCommMs!: number;
  @Field(() => Float, {
    description:
      "Of communicationMs (and of dataParallelCommMs): waiting for the slowest GPU at each step's synchronisation. One GPU's step varies (on the default stack by a coefficient of variation fitted on measured multi-GPU scaling), and a synchronous step takes the slowest GPU's; 0 on one GPU and on the tuned stacks.",
  })
  synchronizationWaitMs!: number;
}

@ObjectType({
  description:
    'GPU memory per GPU at the peak of a training step, GB (GiB, as GPU memory is labelled), by what holds it: totalGb = weightsGb + gradientsGb + optimizerGb + activationsGb + workspaceGb + frameworkGb. Constants and their sources: seeds/memory.json.',
})
export class MemoryBreakdown {
  @Field(() => Float, {
    description:
      'Weights in their stored precision, plus the low-precision copies forward keeps for backward (autocast casts, Transformer Engine FP8 weights and transposes), GB; sharded under ZeRO-3.',
  })
  weightsGb!: number;
  @Field(() => Float, {
    description: "Gradients in the precision mode's gradient type, GB; sharded under ZeRO-2/3.",
  })
  gradientsGb!: number;
  @Field(() => Float, {
    description:
      'Optimizer: the fp32 master weights where the mode keeps them plus the moments, GB; sharded under ZeRO-1/2/3.',
  })
  optimizerGb!: number;
  @Field(() => Float, { description: 'Of optimizerGb: the FP32 master copy of the weights, GB.' })
  masterWeightsGb!: number;
  @Field(() => Float, {
    description: "Of optimizerGb: the optimizer's moments (Adam's m and v, SGD momentum), GB.",
  })
  optimizerStateGb!: number;
  @Field(() => Float, {
    description:
      'Tensors the layers save for backward (as the frameworks save them: in-place ReLU, norm inputs, 1-byte dropout masks, fused attention unless attention is EAGER), for the micro-batches in flight, GB; scaled as the peak memory of your recorded runs of the model in this precision measured them, where there are such runs (evidence says so).',
  })
  activationsGb!: number;
  @Field(() => Float, {
    description:
      "Temporary buffers, GB: cuBLAS workspace, the gradients and cuDNN workspace alive during backward at its peak, DDP's bucket copy of the gradients or ZeRO's buckets, ZeRO-3's gathered layers.",
  })
  workspaceGb!: number;
  @Field(() => Float, {
    description:
      "The framework's own memory, GB: the CUDA context, NCCL buffers on multi-GPU runs, and the caching allocator's fragmentation (a fixed fraction of everything allocated).",
  })
  frameworkGb!: number;
  @Field(() => Float, { description: 'The peak per GPU: the six parts above together, GB.' })
  totalGb!: number;
}

@ObjectType({
  description:
    'How to time a configuration on your own GPUs with the measurement harness (harness/measure.py), and record the run so that it calibrates this very configuration.',
})
export class HarnessCommands {
  @Field(() => [String], {
    description:
      'Shell commands, in order: write the harness, run it at this configuration, record what it wrote. Empty when the harness cannot run the configuration (note says why).',
  })
  commands!: string[];
  @Field(() => String, {
    description:
      'What the commands time and where to run them, what differs from the configuration (e.g. eager PyTorch for a tuned stack), or why there are none.',
  })
  note!: string;
}

@ObjectType({
  description:
    'What one configuration costs: step time with its P10-P90 interval, throughput, memory, hours and USD, and where the time goes.',
})
export class Prediction {
  @Field(() => String, { description: 'The model predicted (zoo id or custom-model id).' }) model!: string;
  @Field(() => Gpu, { description: 'The GPU type.' }) gpu!: Gpu;
  @Field(() => Int, { description: 'Nodes (machines).' }) nodes!: number;
  @Field(() => Int, { description: 'GPUs in each node.' }) gpusPerNode!: number;
  @Field(() => Int, { description: 'Batch elements per GPU per micro-batch.' }) batchSizePerGpu!: number;
  @Field(() => Int, { description: 'Micro-batches accumulated per optimizer step.' }) gradAccumSteps!: number;
  @Field(() => PrecisionEnum, { description: 'The precision mode.' }) precision!: Precision;
  @Field(() => String, { description: DOMINANT_MATH }) dominantMath!: string;
  @Field(() => Float, {
    description: 'Time of one optimizer step, ms (learned correction applied when available).',
  })
  stepTimeMs!: number;
  @Field(() => Float, { description: 'Total over all GPUs, in throughputUnit.' }) throughput!: number;
  @Field(() => String, {
    description: 'Unit of throughput, e.g. images/s or tokens/s (workload.samples counts the same items).',
  })
  throughputUnit!: string;
  @Field(() => Float, { description: MODEL_TFLOPS }) modelTflopsPerGpu!: number;
  @Field(() => Float, { nullable: true, description: MFU }) mfu!: number | null;
  @Field(() => Int, { description: 'Batch elements per optimizer step over all GPUs.' }) globalBatch!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'Wall-clock hours to train workload.samples; null when the step time is not finite.',
  })
  totalHours!: number | null;
  @Field(() => Float, {
    nullable: true,
    description:
      "USD: totalHours x nodes x the offer's instance price (or x GPUs x a per-GPU price); null when nothing prices the GPU at this node size.",
  })
  costUsd!: number | null;
  @Field(() => Float, {
    nullable: true,
    description:
      'What the configuration pays per GPU it uses an hour (instance price / gpusPerNode); null when none is known.',
  })
  priceUsdPerGpuHour!: number | null;
  @Field(() => PlanOffer, {
    nullable: true,
    description:
      "What it rents, nodes instances of it: the request's priceUsdPerGpuHour, else the server's price file, else a catalog offer whose instance holds gpusPerNode GPUs: on one node (or with the request's interNodeGbps) the cheapest instance; across nodes the run is timed on its offer's network, as recommend ranks it, so of the offers that state one (all of them if none does) the one whose run costs least, which a dearer instance on a faster network can be. On one node, or at a per-GPU price, the network is seeds/network.json's for the GPU.",
  })
  offer!: PlanOffer | null;
  @Field(() => Float, {
    description: 'GPU memory one GPU needs at the peak of a step, GB (GiB): memory.totalGb.',
  })
  memoryGbPerGpu!: number;
  @Field(() => MemoryBreakdown, { description: 'The memory per GPU, by what holds it, GB.' })
  memory!: MemoryBreakdown;
  @Field(() => Boolean, {
    description:
      "Whether memoryGbPerGpu plus memoryHeadroomGb fits in the GPU's usable memory (Gpu.usableMemoryGb).",
  })
  fitsInMemory!: boolean;
  @Field(() => Float, {
    description: 'GB per GPU kept free in deciding fitsInMemory (the input, or its default).',
  })
  memoryHeadroomGb!: number;
  @Field(() => Breakdown, { description: 'Milliseconds of one step, by where the time goes.' })
  breakdown!: Breakdown;
  @Field(() => Parallelism, {
    description: 'The layout predicted: the input parallelism, or plain data parallelism.',
  })
  parallelism!: Parallelism;
  @Field(() => String, {
    description: 'Which predictor answered: the learned model, or analytical (with the reason in evidence).',
  })
  predictor!: string;
  @Field(() => Float, { description: 'The analytical (roofline) estimate before the learned correction.' })
  analyticalStepTimeMs!: number;
  @Field(() => Float, {
    description: '10th percentile of the step time (held-out errors of the learned model).',
  })
  stepTimeMsP10!: number;
  @Field(() => Float, { description: '90th percentile of the step time.' }) stepTimeMsP90!: number;
  @Field(() => Float, { nullable: true, description: 'Hours at the 90th-percentile step time.' })
  totalHoursP90!: number | null;
  @Field(() => String, {
    description:
      'Which case the prediction is: measured, calibrated from measurements of the same model, or unmeasured; and how many of your recorded runs calibrated it.',
  })
  evidence!: string;
  @Field(() => EvidenceLevelEnum, {
    nullable: true,
    description:
      'How much measurement (shipped, or your recorded runs) stands behind this prediction; null when only the analytical estimate answered.',
  })
  evidenceLevel!: keyof typeof EvidenceLevelEnum | null;
  @Field(() => Int, {
    description: 'How many of your recorded runs (recordMeasurements) moved this prediction (a count).',
  })
  calibrationRuns!: number;
  @Field(() => [StepBoundEnum], { description: BOUND_BY })
  boundBy!: Regime[];
  @Field(() => Boolean, { description: PRECISION_UNMEASURED })
  precisionUnmeasured!: boolean;
  @Field(() => HarnessCommands, { description: HARNESS })
  harness!: HarnessCommands;
}

@ObjectType({ description: 'What a plan rents: whole instances of one offer, with the age of its price.' })
export class PlanOffer {
  @Field(() => String, { description: 'Cloud provider, or who gave the price (the request, a price file).' })
  provider!: string;
  @Field(() => String, { description: 'Instance type (one node of the plan).' }) instance!: string;
  @Field(() => Int, { description: 'GPUs in one instance.' }) gpusPerInstance!: number;
  @Field(() => Float, { description: 'USD per instance-hour (per GPU-hour for a per-GPU price).' })
  usdPerHour!: number;
  @Field(() => Float, { description: 'USD per GPU-hour: usdPerHour / gpusPerInstance.' })
  usdPerGpuHour!: number;
  @Field(() => String, { description: 'Region the price is for, as the source states it.' }) region!: string;
  @Field(() => String, {
    description: 'Date of the price as the source gives it (ISO date, or e.g. "undated").',
  })
  priceDate!: string;
  @Field(() => Int, { nullable: true, description: 'Days since priceDate; null when the price is undated.' })
  priceAgeDays!: number | null;
  @Field(() => Boolean, {
    description: 'The price is older than 180 days or undated: check it before spending money on it.',
  })
  priceStale!: boolean;
  @Field(() => String, { description: 'Where the price comes from.' }) source!: string;
  @Field(() => Float, {
    nullable: true,
    description: 'Inter-node network per instance the offer states, Gbps; null when it does not say.',
  })
  interNodeGbps!: number | null;
  @Field(() => NetworkTransportEnum, {
    description: 'How NCCL crosses that network (RDMA unless the offer is an Ethernet-only instance).',
  })
  interNodeTransport!: NetworkTransport;
}

@ObjectType({
  description:
    'The fields every configuration answer shares: GPU type, layout, batch and precision (plans, fleet assignments and procurement runs extend it; not a query result on its own).',
})
export abstract class TrainingConfiguration {
  @Field(() => Gpu, { description: 'The GPU type.' }) gpu!: Gpu;
  @Field(() => Int, { description: 'Nodes (machines).' }) nodes!: number;
  @Field(() => Int, { description: 'GPUs in each node.' }) gpusPerNode!: number;
  @Field(() => Int, { description: 'nodes x gpusPerNode.' }) totalGpus!: number;
  @Field(() => Int, { description: 'Batch elements per GPU per micro-batch.' }) batchSizePerGpu!: number;
  @Field(() => Int, { description: 'Micro-batches accumulated per optimizer step.' }) gradAccumSteps!: number;
  @Field(() => PrecisionEnum, { description: 'The precision mode.' }) precision!: Precision;
  @Field(() => HarnessCommands, { description: HARNESS })
  harness!: HarnessCommands;
}

@ObjectType({
  description:
    'One feasible configuration, ranked: GPU type, layout, batch, precision, and its hours and cost.',
})
export class Plan extends TrainingConfiguration {
  @Field(() => Int, { description: 'Position by the objective, 1 = best.' }) rank!: number;
  @Field(() => Float, { description: 'Time of one optimizer step, ms.' }) stepTimeMs!: number;
  @Field(() => Float, {
    description:
      '10th percentile of the step time (from held-out errors of the learned model; equals stepTimeMs when only the analytical estimate is available).',
  })
  stepTimeMsP10!: number;
  @Field(() => Float, { description: '90th percentile of the step time.' }) stepTimeMsP90!: number;
  @Field(() => Float, { description: 'The analytical (roofline) estimate before any learned correction.' })
  analyticalStepTimeMs!: number;
  @Field(() => String, { description: 'Which predictor answered.' }) predictor!: string;
  @Field(() => String, {
    description:
      'Which case the prediction is: measured, calibrated from measurements of the same model, or unmeasured.',
  })
  evidence!: string;
  @Field(() => [StepBoundEnum], { description: BOUND_BY })
  boundBy!: Regime[];
  @Field(() => Boolean, { description: PRECISION_UNMEASURED })
  precisionUnmeasured!: boolean;
  @Field(() => Float, { description: 'Total over all GPUs, in throughputUnit.' }) throughput!: number;
  @Field(() => String, {
    description: 'Unit of throughput, e.g. images/s or tokens/s (workload.samples counts the same items).',
  })
  throughputUnit!: string;
  @Field(() => String, { description: DOMINANT_MATH }) dominantMath!: string;
  @Field(() => Float, { description: MODEL_TFLOPS }) modelTflopsPerGpu!: number;
  @Field(() => Float, { nullable: true, description: MFU }) mfu!: number | null;
  @Field(() => Float, { description: 'Wall-clock hours to train workload.samples.' }) totalHours!: number;
  @Field(() => Float, { description: 'Hours at the 90th-percentile step time.' }) totalHoursP90!: number;
  @Field(() => Float, {
    nullable: true,
    description:
      'USD: totalHours x instances (nodes) x the instance price; null when no offer prices the GPU.',
  })
  costUsd!: number | null;
  @Field(() => Float, { nullable: true, description: 'USD at the 90th-percentile time (totalHoursP90).' })
  costUsdP90!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'USD per GPU used per hour: the instance price / gpusPerNode.',
  })
  priceUsdPerGpuHour!: number | null;
  @Field(() => PlanOffer, {
    nullable: true,
    description: 'The offer rented: nodes = instances of it. null when no offer prices the GPU (see notes).',
  })
  offer!: PlanOffer | null;
  @Field(() => Float, { description: 'Inter-node network the plan was predicted on, Gbps per node.' })
  interNodeGbps!: number;
  @Field(() => NetworkTransportEnum, {
    description:
      "How NCCL crosses it (the request's interNodeTransport, else the offer's): TCP costs a step tcpNetworkEfficiency of the line rate.",
  })
  interNodeTransport!: NetworkTransport;
  @Field(() => String, {
    description: 'Where interNodeGbps comes from (the offer, an assumption, the request).',
  })
  interNodeNetworkSource!: string;
  @Field(() => Boolean, {
    description:
      'True when the offer states no inter-node network and interNodeGbps is the assumed default. Only single-instance plans on such an offer are ranked (the network plays no part in them): plans joining several of its instances are rejected as NETWORK_UNSTATED unless the request gives interNodeGbps.',
  })
  interNodeNetworkAssumed!: boolean;
  @Field(() => EvidenceLevelEnum, { description: 'How much measurement stands behind this prediction.' })
  evidenceLevel!: keyof typeof EvidenceLevelEnum;
  @Field(() => Int, {
    description:
      "How many of your recorded runs (recordMeasurements) moved this plan's prediction (a count).",
  })
  calibrationRuns!: number;
  @Field(() => Float, { description: 'GPU memory one GPU needs, GB (GiB).' }) memoryGbPerGpu!: number;
  @Field(() => Breakdown, { description: 'Milliseconds of one step, by where the time goes.' })
  breakdown!: Breakdown;
  @Field(() => Parallelism, {
    description:
      'How the plan splits the model: plain data parallelism is dataParallel = totalGpus, the rest 1 or 0.',
  })
  parallelism!: Parallelism;
}

// The optimizer's list of reasons is the one place they are defined; the enum follows it.
export const RejectReasonEnum = Object.fromEntries(Object.keys(REJECT_REASONS).map((r) => [r, r])) as {
  [K in RejectReason]: K;
};
registerEnumType(RejectReasonEnum, {
  name: 'RejectReason',
  description: 'Why recommend rejected a candidate configuration.',
  valuesConfig: Object.fromEntries(
    Object.entries(REJECT_REASONS).map(([reason, description]) => [reason, { description }]),
  ),
});

@ObjectType({ description: 'Candidates rejected for one reason.' })
export class Rejection {
  @Field(() => RejectReasonEnum, { description: 'Why the candidates were rejected.' }) reason!: RejectReason;
  @Field(() => String, { description: 'The reason in words.' }) description!: string;
  @Field(() => Int, { description: 'Candidates rejected for this reason.' }) count!: number;
}

@ObjectType({
  description:
    'The answer of `recommend`: ranked plans, the cost-time Pareto front, and counts of rejected candidates by reason.',
})
export class Recommendation {
  @Field(() => SearchStatusEnum, { description: 'COMPLETE: every candidate was evaluated.' })
  status!: 'COMPLETE';
  @Field(() => String, { description: 'Which predictor ranked the plans.' }) predictor!: string;
  @Field(() => String, { description: 'Why that predictor (e.g. the learned model could not be loaded).' })
  predictorNote!: string;
  @Field(() => Int, { description: 'Candidates evaluated.' }) evaluated!: number;
  @Field(() => Int, { description: 'Candidates meeting every constraint.' }) feasible!: number;
  @Field(() => [Plan], { description: 'Ranked 1..limit by the objective.' }) plans!: Plan[];
  @Field(() => [Plan], { description: 'Plans no other plan beats on both cost and time, fastest first.' })
  paretoFront!: Plan[];
  @Field(() => [Rejection], {
    description: 'Candidates rejected, one entry per reason, most frequent first.',
  })
  rejected!: Rejection[];
  @Field(() => [String], {
    description:
      'What bound the answer (maxNodes, budget, deadline, memory, the global batch cap, ...) and warnings (stale prices, unmeasured GPUs, GPUs without offers, default batch sizes), in plain words.',
  })
  notes!: string[];
}
