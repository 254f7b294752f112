// GraphQL output types. Resolvers return the predictor's and optimizer's plain objects; these
// classes only declare how they look over the wire.
import { Field, Float, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { PRECISIONS, type Precision } from '../predictor/types.js';

export const PrecisionEnum = Object.fromEntries(PRECISIONS.map((p) => [p, p])) as { [K in Precision]: K };
registerEnumType(PrecisionEnum, { name: 'Precision', description: 'Training precision mode (see the `precisions` query for what each means).' });

export enum ObjectiveEnum { COST = 'COST', TIME = 'TIME' }
registerEnumType(ObjectiveEnum, { name: 'Objective', description: 'COST: cheapest plan first; TIME: fastest plan first.' });

@ObjectType({ description: 'Dense datasheet peak per math mode, TFLOPS; null where the GPU has no such mode.' })
export class PeakTflops {
  @Field(() => Float, { nullable: true }) fp32!: number | null;
  @Field(() => Float, { nullable: true }) tf32!: number | null;
  @Field(() => Float, { nullable: true }) fp16!: number | null;
  @Field(() => Float, { nullable: true }) bf16!: number | null;
  @Field(() => Float, { nullable: true }) fp8!: number | null;
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
  @Field(() => Float, { description: 'Bidirectional per-GPU intra-node bandwidth, GB/s.' }) intraNodeBwGbpsBidir!: number;
  @Field(() => String, { description: 'gpus.csv, or the link-name rule it was derived from.' }) intraNodeBwSource!: string;
  @Field(() => Float, { nullable: true }) tdpW!: number | null;
  @Field(() => String) typicalInternodeNetwork!: string;
  @Field(() => Float, { nullable: true, description: 'Default price: the lowest on-demand price point in the catalog.' }) priceUsdPerGpuHour!: number | null;
  @Field(() => Float, { nullable: true }) priceUsdPerGpuHourMax!: number | null;
  @Field(() => String) pricePoints!: string;
  @Field(() => String) priceSource!: string;
  @Field(() => String) source!: string;
  @Field(() => String) notes!: string;
  @Field(() => [PrecisionEnum], { description: 'Precision modes this GPU can train in.' }) supportedPrecisions!: Precision[];
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
  @Field(() => String, { description: 'What one batch element is: image, sequence, token, ...' }) batchElement!: string;
  @Field(() => String, { description: 'Unit of throughput and of workload.samples.' }) throughputUnit!: string;
  @Field(() => Float) unitsPerBatchElement!: number;
  @Field(() => Int, { nullable: true }) seqLen?: number;
  @Field(() => Int, { nullable: true }) imageSize?: number;
  @Field(() => String) optimizer!: string;
  @Field(() => [Int]) batchSizes!: number[];
  @Field(() => Float) parameters!: number;
  @Field(() => Float, { description: 'Forward FLOPs per batch element (2 per multiply-add).' }) forwardFlopsPerSample!: number;
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
  @Field(() => Float, { description: 'Casts, master-weight copies, loss scaling, FP8 scaling.' }) mixedPrecisionMs!: number;
  @Field(() => Float, { description: 'All-reduce time not hidden behind backward.' }) communicationMs!: number;
  @Field(() => Float, { description: 'All-reduce time, hidden or not.' }) communicationTotalMs!: number;
  @Field(() => Float, { description: 'Kernel launches and per-step fixed cost.' }) overheadMs!: number;
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
  @Field(() => String, { description: 'Math mode that carries most FLOPs (FP32 on Ampere+ runs TF32 unless fp32UsesTf32 is false).' }) dominantMath!: string;
  @Field(() => Float) stepTimeMs!: number;
  @Field(() => Float, { description: 'Total over all GPUs, in throughputUnit.' }) throughput!: number;
  @Field(() => String) throughputUnit!: string;
  @Field(() => Int) globalBatch!: number;
  @Field(() => Float, { nullable: true }) totalHours!: number | null;
  @Field(() => Float, { nullable: true, description: 'null when no price is known for the GPU.' }) costUsd!: number | null;
  @Field(() => Float, { nullable: true }) priceUsdPerGpuHour!: number | null;
  @Field(() => Float) memoryGbPerGpu!: number;
  @Field(() => MemoryBreakdown) memory!: MemoryBreakdown;
  @Field(() => Boolean) fitsInMemory!: boolean;
  @Field(() => Breakdown) breakdown!: Breakdown;
  @Field(() => String, { description: 'Which predictor answered.' }) predictor!: string;
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
  @Field(() => Float) throughput!: number;
  @Field(() => String) throughputUnit!: string;
  @Field(() => Float) totalHours!: number;
  @Field(() => Float, { nullable: true }) costUsd!: number | null;
  @Field(() => Float, { nullable: true }) priceUsdPerGpuHour!: number | null;
  @Field(() => Float) memoryGbPerGpu!: number;
  @Field(() => Breakdown) breakdown!: Breakdown;
}

@ObjectType({ description: 'Candidates rejected for one reason.' })
export class Rejection {
  @Field(() => String) reason!: string;
  @Field(() => String) description!: string;
  @Field(() => Int) count!: number;
}

@ObjectType()
export class Recommendation {
  @Field(() => Int, { description: 'Candidates evaluated.' }) evaluated!: number;
  @Field(() => Int, { description: 'Candidates meeting every constraint.' }) feasible!: number;
  @Field(() => [Plan], { description: 'Ranked 1..limit by the objective.' }) plans!: Plan[];
  @Field(() => [Plan], { description: 'Plans no other plan beats on both cost and time, fastest first.' }) paretoFront!: Plan[];
  @Field(() => [Rejection]) rejected!: Rejection[];
}
