// GraphQL output types. Resolvers return the predictor's and optimizer's plain objects; these
// classes only declare how they look over the wire.
import { Field, Float, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { PRECISIONS, type Precision } from '../predictor/types.js';
import { SOFTWARE_STACKS, type SoftwareStack } from '../predictor/software.js';
import { Parallelism } from './parallelism.js';

export const PrecisionEnum = Object.fromEntries(PRECISIONS.map((p) => [p, p])) as { [K in Precision]: K };
registerEnumType(PrecisionEnum, {
  name: 'Precision',
  description: 'Training precision mode (see the `precisions` query for what each means).',
});

export const FrameworkEnum = {
  PyTorch: 'PyTorch',
  TensorFlow: 'TensorFlow',
  TensorFlow2: 'TensorFlow2',
  MXNet: 'MXNet',
  PaddlePaddle: 'PaddlePaddle',
} as const;
registerEnumType(FrameworkEnum, {
  name: 'Framework',
  description:
    'Training framework: the learned model has seen the same configuration run up to 2x apart between frameworks.',
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

export enum ObjectiveEnum {
  COST = 'COST',
  TIME = 'TIME',
}
registerEnumType(ObjectiveEnum, {
  name: 'Objective',
  description: 'COST: cheapest plan first; TIME: fastest plan first.',
});

export enum SearchStatusEnum {
  COMPLETE = 'COMPLETE',
  TIMEOUT = 'TIMEOUT',
}
registerEnumType(SearchStatusEnum, {
  name: 'SearchStatus',
  description:
    'COMPLETE: every candidate was evaluated; TIMEOUT: the time budget ran out first and the plans are the best of the candidates evaluated by then.',
});

@ObjectType({
  description: 'Dense datasheet peak per math mode, TFLOPS; null where the GPU has no such mode.',
})
export class PeakTflops {
  @Field(() => Float, { nullable: true }) fp32!: number | null;
  @Field(() => Float, { nullable: true }) tf32!: number | null;
  @Field(() => Float, { nullable: true }) fp16!: number | null;
  @Field(() => Float, { nullable: true }) bf16!: number | null;
  @Field(() => Float, { nullable: true }) fp8!: number | null;
  @Field(() => Float, {
    nullable: true,
    description:
      'Dense FP4 (NVFP4/MXFP4) tensor-core peak, TFLOPS; null where the datasheet gives no FP4 rate (before Blackwell).',
  })
  fp4!: number | null;
}

@ObjectType({ description: 'An accelerator of the catalog, with the source of its figures.' })
export class Gpu {
  @Field(() => ID) id!: string;
  @Field(() => String) vendor!: string;
  @Field(() => String) architecture!: string;
  @Field(() => String) generation!: string;
  @Field(() => Int, { nullable: true }) releaseYear!: number | null;
  @Field(() => String) formFactor!: string;
  @Field(() => Float) memoryGb!: number;
  @Field(() => String) memoryType!: string;
  @Field(() => Float) memoryBwGbps!: number;
  @Field(() => Float, { nullable: true }) l2CacheMb!: number | null;
  @Field(() => Int, { nullable: true }) smCount!: number | null;
  @Field(() => Float, { nullable: true }) boostClockMhz!: number | null;
  @Field(() => PeakTflops) peakTflops!: PeakTflops;
  @Field(() => String) intraNodeLink!: string;
  @Field(() => Float, { description: 'Bidirectional per-GPU intra-node bandwidth, GB/s.' })
  intraNodeBwGbpsBidir!: number;
  @Field(() => String, { description: 'gpus.csv, or the link-name rule it was derived from.' })
  intraNodeBwSource!: string;
  @Field(() => Float, { nullable: true }) tdpW!: number | null;
  @Field(() => String) typicalInternodeNetwork!: string;
  @Field(() => Float, {
    nullable: true,
    description: 'Default price: the lowest on-demand price point in the catalog.',
  })
  priceUsdPerGpuHour!: number | null;
  @Field(() => Float, { nullable: true }) priceUsdPerGpuHourMax!: number | null;
  @Field(() => String) pricePoints!: string;
  @Field(() => String) priceSource!: string;
  @Field(() => String) source!: string;
  @Field(() => String) notes!: string;
  @Field(() => [PrecisionEnum], { description: 'Precision modes this GPU can train in.' })
  supportedPrecisions!: Precision[];
}

@ObjectType({ description: 'Layers of one type in a model, totalled.' })
export class LayerTypeSummary {
  @Field(() => String) type!: string;
  @Field(() => Int) count!: number;
  @Field(() => Float) parameters!: number;
  @Field(() => Float) forwardFlopsPerSample!: number;
}

@ObjectType({ description: 'A model of the zoo; its costs are computed from its layer definitions.' })
export class Model {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String) family!: string;
  @Field(() => String, { description: 'What one batch element is: image, sequence, token, ...' })
  batchElement!: string;
  @Field(() => String, { description: 'Unit of throughput and of workload.samples.' })
  throughputUnit!: string;
  @Field(() => Float) unitsPerBatchElement!: number;
  @Field(() => Int, { nullable: true }) seqLen?: number;
  @Field(() => Int, { nullable: true }) imageSize?: number;
  @Field(() => String) optimizer!: string;
  @Field(() => [Int]) batchSizes!: number[];
  @Field(() => Float) parameters!: number;
  @Field(() => Float, { description: 'Forward FLOPs per batch element (2 per multiply-add).' })
  forwardFlopsPerSample!: number;
  @Field(() => Float) backwardFlopsPerSample!: number;
  @Field(() => Int) layerCount!: number;
  @Field(() => [LayerTypeSummary]) layersByType!: LayerTypeSummary[];
  @Field(() => String) source!: string;
}

@ObjectType({ description: 'What a precision mode means for the hardware.' })
export class PrecisionInfo {
  @Field(() => PrecisionEnum) id!: Precision;
  @Field(() => String) description!: string;
  @Field(() => String, { description: 'Math mode of matmuls and convolutions.' }) matmulMath!: string;
  @Field(() => String) weights!: string;
  @Field(() => String) gradients!: string;
  @Field(() => Boolean) masterWeights!: boolean;
  @Field(() => Boolean) lossScaling!: boolean;
  @Field(() => String) optimizerState!: string;
}

@ObjectType({ description: 'Milliseconds per optimizer step, by where the time goes.' })
export class Breakdown {
  @Field(() => Float) forwardMs!: number;
  @Field(() => Float) backwardMs!: number;
  @Field(() => Float) optimizerMs!: number;
  @Field(() => Float, { description: 'Casts, master-weight copies, loss scaling, FP8 scaling.' })
  mixedPrecisionMs!: number;
  @Field(() => Float, { description: 'All-reduce time not hidden behind backward.' })
  communicationMs!: number;
  @Field(() => Float, { description: 'All-reduce time, hidden or not.' }) communicationTotalMs!: number;
  @Field(() => Float, { description: 'Kernel launches and per-step fixed cost.' }) overheadMs!: number;
  @Field(() => Float, { description: 'Forward passes rerun in backward (activation recomputation).' })
  recomputeMs!: number;
  @Field(() => Float, {
    description:
      'Pipeline fill and drain: (stages - 1) x one micro-batch stage time, a fraction (PP-1)/(m+PP-1) of the step.',
  })
  pipelineBubbleMs!: number;
  @Field(() => Float, {
    description: 'Data-parallel gradient all-reduce, or ZeRO reduce-scatters and all-gathers; hidden or not.',
  })
  dataParallelCommMs!: number;
  @Field(() => Float, {
    description: 'Tensor-parallel all-reduces of every split layer pair (on the critical path).',
  })
  tensorParallelCommMs!: number;
  @Field(() => Float, { description: 'Pipeline sends of activations and gradients between stages.' })
  pipelineCommMs!: number;
}

@ObjectType({ description: 'GPU memory per GPU, GB (GiB, as GPU memory is labelled).' })
export class MemoryBreakdown {
  @Field(() => Float) weightsGb!: number;
  @Field(() => Float) gradientsGb!: number;
  @Field(() => Float) masterWeightsGb!: number;
  @Field(() => Float) optimizerStateGb!: number;
  @Field(() => Float) activationsGb!: number;
  @Field(() => Float) workspaceGb!: number;
  @Field(() => Float) totalGb!: number;
}

@ObjectType()
export class Prediction {
  @Field(() => String) model!: string;
  @Field(() => Gpu) gpu!: Gpu;
  @Field(() => Int) nodes!: number;
  @Field(() => Int) gpusPerNode!: number;
  @Field(() => Int) batchSizePerGpu!: number;
  @Field(() => Int) gradAccumSteps!: number;
  @Field(() => PrecisionEnum) precision!: Precision;
  @Field(() => String, {
    description:
      'Math mode that carries most FLOPs (FP32 on Ampere+ runs TF32 unless fp32UsesTf32 is false).',
  })
  dominantMath!: string;
  @Field(() => Float) stepTimeMs!: number;
  @Field(() => Float, { description: 'Total over all GPUs, in throughputUnit.' }) throughput!: number;
  @Field(() => String) throughputUnit!: string;
  @Field(() => Int) globalBatch!: number;
  @Field(() => Float, { nullable: true }) totalHours!: number | null;
  @Field(() => Float, { nullable: true, description: 'null when no price is known for the GPU.' }) costUsd!:
    number | null;
  @Field(() => Float, { nullable: true }) priceUsdPerGpuHour!: number | null;
  @Field(() => Float) memoryGbPerGpu!: number;
  @Field(() => MemoryBreakdown) memory!: MemoryBreakdown;
  @Field(() => Boolean) fitsInMemory!: boolean;
  @Field(() => Breakdown) breakdown!: Breakdown;
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
      'Which case the prediction is: measured, calibrated from measurements of the same model, or unmeasured.',
  })
  evidence!: string;
}

@ObjectType()
export class Plan {
  @Field(() => Int) rank!: number;
  @Field(() => Gpu) gpu!: Gpu;
  @Field(() => Int) nodes!: number;
  @Field(() => Int) gpusPerNode!: number;
  @Field(() => Int) totalGpus!: number;
  @Field(() => Int) batchSizePerGpu!: number;
  @Field(() => Int) gradAccumSteps!: number;
  @Field(() => PrecisionEnum) precision!: Precision;
  @Field(() => Float) stepTimeMs!: number;
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
  @Field(() => Float) throughput!: number;
  @Field(() => String) throughputUnit!: string;
  @Field(() => Float) totalHours!: number;
  @Field(() => Float, { description: 'Hours at the 90th-percentile step time.' }) totalHoursP90!: number;
  @Field(() => Float, { nullable: true }) costUsd!: number | null;
  @Field(() => Float, { nullable: true }) priceUsdPerGpuHour!: number | null;
  @Field(() => Float) memoryGbPerGpu!: number;
  @Field(() => Breakdown) breakdown!: Breakdown;
  @Field(() => Parallelism, {
    description:
      'How the plan splits the model: plain data parallelism is dataParallel = totalGpus, the rest 1 or 0.',
  })
  parallelism!: Parallelism;
}

@ObjectType({ description: 'Candidates rejected for one reason.' })
export class Rejection {
  @Field(() => String) reason!: string;
  @Field(() => String) description!: string;
  @Field(() => Int) count!: number;
}

@ObjectType()
export class Recommendation {
  @Field(() => SearchStatusEnum, {
    description: 'TIMEOUT when the time budget stopped the search early (see `evaluated`).',
  })
  status!: 'COMPLETE' | 'TIMEOUT';
  @Field(() => String, { description: 'Which predictor ranked the plans.' }) predictor!: string;
  @Field(() => String, { description: 'Why that predictor (e.g. the learned model could not be loaded).' })
  predictorNote!: string;
  @Field(() => Int, { description: 'Candidates evaluated.' }) evaluated!: number;
  @Field(() => Int, { description: 'Candidates meeting every constraint.' }) feasible!: number;
  @Field(() => [Plan], { description: 'Ranked 1..limit by the objective.' }) plans!: Plan[];
  @Field(() => [Plan], { description: 'Plans no other plan beats on both cost and time, fastest first.' })
  paretoFront!: Plan[];
  @Field(() => [Rejection]) rejected!: Rejection[];
}
