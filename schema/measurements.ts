// Recorded runs in the API: the input a user (or `trainplan calibrate import`) sends, what is
// stored, and what a batch's recording answers.
import { Field, Float, InputType, Int, ObjectType } from 'type-graphql';
import type { Precision } from '../predictor/types.js';
import type { Framework } from '../predictor/learned/features.js';
import type { AttentionImplementation, NetworkTransport } from '../seeds/types.js';
import { FrameworkEnum, NetworkTransportEnum, PrecisionEnum } from './types.js';
import { WorkloadInput } from './inputs.js';
import { AttentionEnum } from './memory.js';
import { Parallelism, ParallelismInput } from './parallelism.js';
import { HELD_OUT_FOLDS, HELD_OUT_RUNS_LIMIT } from '../service/measurements.js';

@InputType({
  description:
    'One measured training run: the configuration (as in PredictInput) and what it measured. Recorded runs become evidence for every prediction and plan of that GPU and model.',
})
export class MeasurementInput {
  @Field(() => WorkloadInput, {
    description: 'The model trained (zoo id, or a custom model); workload.samples is not used for a run.',
  })
  workload!: WorkloadInput;
  @Field(() => String, { description: 'A catalog GPU id (see `gpus`).' }) gpu!: string;
  @Field(() => Int, { defaultValue: 1, description: 'Nodes (machines), 1 or more.' }) nodes!: number;
  @Field(() => Int, { defaultValue: 1, description: 'GPUs in each node.' }) gpusPerNode!: number;
  @Field(() => Int, { description: 'Batch elements per GPU per micro-batch.' }) batchSizePerGpu!: number;
  @Field(() => Int, { defaultValue: 1, description: 'Micro-batches accumulated per optimizer step.' })
  gradAccumSteps!: number;
  @Field(() => PrecisionEnum, { description: 'The precision mode the run trained in.' })
  precision!: Precision;
  @Field(() => FrameworkEnum, { defaultValue: 'PyTorch', description: 'Framework the run used.' })
  framework!: Framework;
  @Field(() => Boolean, { defaultValue: false, description: 'Compiled with XLA (TensorFlow/JAX).' })
  xla!: boolean;
  @Field(() => Boolean, {
    defaultValue: true,
    description: 'FP32 ran matmuls/convolutions in TF32 (Ampere and newer; the framework default).',
  })
  fp32UsesTf32!: boolean;
  @Field(() => Boolean, {
    nullable: true,
    description:
      'Convolution activations were channels-last (torch.channels_last) as in PredictInput; default: channels-last under TensorFlow and MXNet, NCHW for PyTorch (what the harness runs).',
  })
  channelsLast?: boolean;
  @Field(() => Float, { nullable: true, description: 'Inter-node network per node, Gbps.' })
  interNodeGbps?: number;
  @Field(() => NetworkTransportEnum, {
    nullable: true,
    description:
      'How NCCL crossed that network, as in PredictInput; default RDMA. TCP for nodes joined by Ethernet only.',
  })
  interNodeTransport?: NetworkTransport;
  @Field(() => ParallelismInput, {
    nullable: true,
    description:
      'Tensor/pipeline/context/expert parallelism, ZeRO, recomputation the run used; leave out for plain data parallelism.',
  })
  parallelism?: ParallelismInput;
  @Field(() => AttentionEnum, {
    nullable: true,
    description:
      "How the run's attention cores ran (the harness says): FUSED, one kernel (scaled_dot_product_attention, FlashAttention), or EAGER, op by op with the scores in memory (a Hugging Face model loaded with attn_implementation=\"eager\", PyTorch before 2.0, code that writes the scores). Default: predict's (the model's code's). The run is predicted the way it ran, so an eager run does not read as a slow GPU.",
  })
  attention?: AttentionImplementation;
  @Field(() => Float, {
    description:
      'Measured time of one optimizer step, ms (the median of timed steps after warm-up, as the harness reports).',
  })
  stepTimeMs!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'Peak GPU memory allocated, GB (GiB, torch.cuda.max_memory_allocated / 2^30).',
  })
  peakMemoryGb?: number;
  @Field(() => Float, {
    nullable: true,
    description:
      "What CUDA gave the run's process on its GPU, GiB (torch.cuda.get_device_properties(0).total_memory / 2^30; the harness's gpu_memory_gb): 85% to 100% of the GPU's label (less is a MIG slice or a shared GPU). Plans and predictions on that GPU are then fitted in the least any of the stored runs on it had, not the catalog's usableMemoryGb (an ECC setting, a driver, a GPU no source gives a figure for).",
  })
  gpuMemoryGb?: number;
  @Field(() => String, {
    nullable: true,
    description: 'Where the run comes from (default "user"; the harness says "harness").',
  })
  source?: string;
  @Field(() => String, {
    nullable: true,
    description: 'Free text: software versions, driver, anything worth keeping.',
  })
  note?: string;
}

@ObjectType({ description: 'A run the store did not take, and why (nothing of it was stored).' })
export class RejectedRun {
  @Field(() => Int, { description: 'Position of the run in the `runs` list, from 0.' }) index!: number;
  @Field(() => String, {
    description: 'Why: the field at fault and what is allowed, or the physics it contradicts.',
  })
  reason!: string;
}

@ObjectType({ description: 'What recording a batch of runs did.' })
export class RecordMeasurementsResult {
  @Field(() => Int, { description: 'Runs stored (a count).' }) stored!: number;
  @Field(() => [Int], { description: 'Ids of the stored runs, in input order.' }) ids!: number[];
  @Field(() => [RejectedRun], { description: 'Runs refused, each with its reason.' })
  rejected!: RejectedRun[];
}

@ObjectType({ description: 'A recorded run, as stored.' })
export class Measurement {
  @Field(() => Int, { description: 'Id in the store.' }) id!: number;
  @Field(() => String, { description: 'Who recorded it (the `owner` given when recording).' }) owner!: string;
  @Field(() => String, { description: 'When it was recorded (ISO 8601, UTC).' }) recordedAt!: string;
  @Field(() => String, { description: 'Model id (zoo id or custom-model id).' }) model!: string;
  @Field(() => String, { description: 'Catalog GPU id.' }) gpu!: string;
  @Field(() => PrecisionEnum, { description: 'Precision mode.' }) precision!: Precision;
  @Field(() => FrameworkEnum, { description: 'Framework.' }) framework!: Framework;
  @Field(() => Int, { description: 'Nodes (machines).' }) nodes!: number;
  @Field(() => Int, { description: 'GPUs in each node.' }) gpusPerNode!: number;
  @Field(() => Int, { description: 'Batch elements per GPU per micro-batch.' }) batchSizePerGpu!: number;
  @Field(() => Int, { description: 'Micro-batches accumulated per optimizer step.' }) gradAccumSteps!: number;
  @Field(() => Parallelism, {
    description:
      'The layout the run was recorded at (tensor parallelism, ZeRO stage, recomputation, ...), as plans report theirs; plain data parallelism where the run named none.',
  })
  parallelism!: Parallelism;
  @Field(() => AttentionEnum, {
    nullable: true,
    description:
      "How the run's attention cores ran, as recorded, or EAGER where a run that does not say has a note the harness wrote on a PyTorch before 2.0 (no fused kernel there); null: not stated (predicted as predict's default).",
  })
  attention!: AttentionImplementation | null;
  @Field(() => Float, { description: 'Measured time of one optimizer step, ms.' }) stepTimeMs!: number;
  @Field(() => Float, { nullable: true, description: 'Peak GPU memory allocated, GB.' }) peakMemoryGb!:
    number | null;
  @Field(() => Float, {
    nullable: true,
    description: "What CUDA gave the run's process on its GPU, GiB; null: not stated.",
  })
  gpuMemoryGb!: number | null;
  @Field(() => String, { description: 'Where the run comes from.' }) source!: string;
  @Field(() => String, { nullable: true, description: 'Free text recorded with the run.' }) note!:
    string | null;
  @Field(() => Float, {
    nullable: true,
    description:
      "The predictor's step time for this configuration without calibration by the runs, ms (null when the configuration no longer builds, or no learned model is loaded).",
  })
  predictedStepTimeMs!: number | null;
  @Field(() => Float, {
    nullable: true,
    description:
      "The memory PyTorch allocates at this configuration as trainplan counts it (weights, gradients, optimizer state, activations, workspaces: what peakMemoryGb measures), before the runs' memory calibration, GB; null as predictedStepTimeMs is.",
  })
  predictedPeakMemoryGb!: number | null;
  @Field(() => Float, {
    nullable: true,
    description:
      "Model FLOPs each GPU did per second at the measured step time, TFLOPS, counted as predictions count them (predict's modelTflopsPerGpu); null as predictedStepTimeMs is.",
  })
  modelTflopsPerGpu!: number | null;
  @Field(() => Float, {
    nullable: true,
    description:
      "The run's model FLOPs utilization: modelTflopsPerGpu over the GPU's dense peak in the math its GEMMs ran in (predict's mfu, at the measured step time); null as predictedStepTimeMs is, or without such a peak.",
  })
  mfu!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: `The step time the other recorded runs predict for this configuration, ms: the shipped learned correction calibrated by every stored run of another configuration, as a configuration nobody has run is predicted (not a refit, which trained on this run). Repeats of this configuration are left out with it, or they would predict it almost exactly. With more than ${HELD_OUT_FOLDS} configurations stored, they are dealt into ${HELD_OUT_FOLDS} folds and this run is predicted from the runs outside its fold. How far it is from stepTimeMs is how far the runs' calibration can be trusted on the next configuration. null when no run of another configuration is stored, when more than ${HELD_OUT_RUNS_LIMIT} runs are stored, or as predictedStepTimeMs is.`,
  })
  predictedFromOtherRunsStepTimeMs!: number | null;
}
