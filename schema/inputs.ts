// GraphQL input types. Ranges are checked in resolvers/validate.ts, which names the field at fault.
import { Field, Float, InputType, Int } from 'type-graphql';
import type { Precision } from '../predictor/types.js';
import { ObjectiveEnum, PrecisionEnum } from './types.js';

@InputType({ description: 'What to train and how much of it.' })
export class WorkloadInput {
  @Field(() => String, { description: 'A zoo model id (see `models`).' }) model!: string;
  @Field(() => Float, { description: "Total work in the model's throughput unit (dataset size x epochs), e.g. images or tokens." }) samples!: number;
}

@InputType({ description: 'A negotiated price that overrides the catalog.' })
export class PriceInput {
  @Field(() => String) gpu!: string;
  @Field(() => Float) usdPerGpuHour!: number;
}

@InputType()
export class PredictInput {
  @Field(() => WorkloadInput) workload!: WorkloadInput;
  @Field(() => String) gpu!: string;
  @Field(() => Int, { defaultValue: 1 }) nodes!: number;
  @Field(() => Int, { defaultValue: 1 }) gpusPerNode!: number;
  @Field(() => Int) batchSizePerGpu!: number;
  @Field(() => Int, { defaultValue: 1, description: 'Micro-batches accumulated per optimizer step.' }) gradAccumSteps!: number;
  @Field(() => PrecisionEnum) precision!: Precision;
  @Field(() => Boolean, { defaultValue: true, description: 'FP32 runs matmuls/convolutions in TF32 on Ampere and newer (the NGC/TensorFlow/cuDNN default).' }) fp32UsesTf32!: boolean;
  @Field(() => Float, { nullable: true, description: 'Inter-node network per node, Gbps (default: seeds/network.json).' }) interNodeGbps?: number;
  @Field(() => Float, { nullable: true, description: 'Overrides the catalog price for this GPU.' }) priceUsdPerGpuHour?: number;
}

@InputType()
export class RecommendInput {
  @Field(() => WorkloadInput) workload!: WorkloadInput;
  @Field(() => ObjectiveEnum, { defaultValue: ObjectiveEnum.COST }) objective!: ObjectiveEnum;
  @Field(() => Float, { nullable: true }) deadlineHours?: number;
  @Field(() => Float, { nullable: true }) budgetUsd?: number;
  @Field(() => [String], { nullable: true, description: 'GPU ids allowed (default: every catalog GPU).' }) gpus?: string[];
  @Field(() => [PrecisionEnum], { nullable: true, description: 'Precision modes allowed (default: all).' }) precisions?: Precision[];
  @Field(() => Int, { defaultValue: 8 }) maxNodes!: number;
  @Field(() => Int, { nullable: true }) maxGpus?: number;
  @Field(() => [Int], { nullable: true, description: 'GPUs per node to consider (default 1, 2, 4, 8; 16 on DGX-2).' }) gpusPerNode?: number[];
  @Field(() => [Int], { nullable: true, description: "Per-GPU batch sizes to consider (default: the model's typical ones)." }) batchSizes?: number[];
  @Field(() => Int, { nullable: true, description: 'Fix the global batch; plans accumulate gradients to reach it.' }) globalBatch?: number;
  @Field(() => [PriceInput], { nullable: true }) prices?: PriceInput[];
  @Field(() => Float, { nullable: true, description: 'Inter-node network per node, Gbps (default: seeds/network.json per GPU).' }) interNodeGbps?: number;
  @Field(() => Boolean, { defaultValue: true }) fp32UsesTf32!: boolean;
  @Field(() => Int, { defaultValue: 10 }) limit!: number;
}
