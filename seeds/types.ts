// The vocabulary of the data files, typed: precision modes and math modes as the measurements and
// datasheets name them, a GPU's hardware facts, its catalog price, and the fitted constants of
// efficiency.json. The predictor builds on these types (predictor/types.ts re-exports them); this
// folder imports nothing from the predictor.

/** Training precision modes, as the measurements and the frameworks name them. */
export const PRECISIONS = [
  'FP32',
  'TF32',
  'AMP_FP16',
  'AMP_BF16',
  'FP16',
  'FP16_PURE',
  'BF16',
  'FP8',
  'FP4',
] as const;
export type Precision = (typeof PRECISIONS)[number];

/** The arithmetic a kernel actually runs in (what the GPU datasheet quotes a peak for). */
export const MATH_MODES = ['fp32', 'tf32', 'fp16', 'bf16', 'fp8', 'fp4'] as const;
export type MathMode = (typeof MATH_MODES)[number];

export type Generation =
  | 'pascal'
  | 'volta'
  | 'turing'
  | 'ampere'
  | 'ada'
  | 'hopper'
  | 'blackwell'
  | 'cdna'
  | 'cdna2'
  | 'cdna3'
  | 'tpu'
  | 'unknown';

/**
 * One accelerator's hardware facts (seeds/gpus.csv and the files that complete it): everything the
 * predictor reads about a GPU. `null` = no source gave the figure. Prices are not here (GpuPrice):
 * a price override never changes a predictor input.
 */
export interface GpuSpec {
  id: string;
  vendor: string;
  architecture: string;
  generation: Generation;
  releaseYear: number | null;
  formFactor: string;
  /** Memory as the vendor labels it (an "80 GB" GPU), GB: the name, the figure users know. */
  memoryGb: number;
  /**
   * Memory a training process can have, GiB: CUDA's total (cudaGetDeviceProperties totalGlobalMem,
   * what torch.cuda reports), which the driver keeps a few hundred MiB (to 8%) under the label, and
   * what a plan's predicted peak must fit in (predictor/memory.ts fits). seeds/gpu-memory.csv where
   * a source gives it; else the label.
   */
  usableMemoryGb: number;
  /** Where usableMemoryGb comes from: seeds/gpu-memory.csv's source, or that it is the label. */
  usableMemorySource: string;
  memoryType: string;
  memoryBwGbps: number;
  l2CacheMb: number | null;
  smCount: number | null;
  boostClockMhz: number | null;
  /** Dense peak TFLOPS per math mode; null where the GPU has no such mode (or no source gave it). */
  peakTflops: Record<MathMode, number | null>;
  fp64Tflops: number | null;
  int8Tops: number | null;
  intraNodeLink: string;
  /** Bidirectional per-GPU intra-node bandwidth, GB/s, as vendors quote it. */
  intraNodeBwGbpsBidir: number;
  /** Where intraNodeBwGbpsBidir came from: the catalog cell, or derived from the link name (seeds/links.json). */
  intraNodeBwSource: string;
  /**
   * Bidirectional GB/s of the PCIe link the card sits on (seeds/links.json): what a ring uses when the
   * catalog has no intra-node figure, or when a 2-way bridge cannot connect more than two GPUs.
   */
  pcieBwGbpsBidir: number;
  /** True when the GPUs of one node talk over an NVLink/NVSwitch/xGMI fabric rather than PCIe. */
  hasNvlinkFabric: boolean;
  /** Most GPUs of this type one node (server) holds, as sold (seeds/node-sizes.json). */
  maxGpusPerNode: number;
  tdpW: number | null;
  typicalInternodeNetwork: string;
  source: string;
  notes: string;
}

/** What the catalog says a GPU-hour costs, and where that figure comes from. */
export interface GpuPrice {
  /** Default on-demand price per GPU-hour: the lowest price point the catalog lists; null if none. */
  priceUsdPerGpuHour: number | null;
  priceUsdPerGpuHourMax: number | null;
  pricePoints: string;
  priceSource: string;
}

/** A catalog entry: the hardware facts and the current price (after any server-wide override). */
export type CatalogGpu = GpuSpec & GpuPrice;

/** The analytical predictor's fitted global constants (seeds/efficiency.json; see its _about). */
export interface Efficiency {
  /** Fraction of the measured GEMM kernel rate (predictor/achievable.ts) a framework's matmuls reach, per math mode. */
  matmulEfficiency: Record<MathMode, number>;
  /** Fraction of the measured STREAM bandwidth a framework's memory-bound kernels reach. */
  memoryEfficiency: number;
  /** CPU time to dispatch one kernel (framework + launch); hidden while the GPU is busier than the CPU. */
  kernelOverheadUs: number;
  /** Shortest time any kernel takes on the GPU, however little work it has. */
  minKernelUs: number;
  stepOverheadMs: number;
  linkEfficiency: number;
  networkEfficiency: number;
  /**
   * Fraction of the line rate NCCL's socket transport reaches over a cloud instance's Ethernet (no
   * RDMA): not fitted, taken from published all-reduce measurements (efficiency.json's _about).
   */
  tcpNetworkEfficiency: number;
  allReduceLatencyUs: number;
  bucketMb: number;
  overlapFraction: number;
  /**
   * Coefficient of variation of one GPU's step time: a synchronous step waits for the slowest of its
   * GPUs (predictor/step.ts synchronizationWaitMs). Absent = 0.
   */
  stragglerCv?: number;
  /** Fraction of hidden communication time that still lengthens the step it hides behind (step.ts withInterference). Absent = 0. */
  overlapInterference?: number;
  /**
   * The most GPUs of a measured run the spread was fitted on (cli/calibrate.ts scalingPairs): beyond
   * it the wait for the slowest GPU is an extrapolation, and `evidence` says so.
   */
  stragglerFittedGpus?: number;
  /**
   * Fraction of the tensor-core rate a 16-bit convolution reaches on NCHW activations (PyTorch's
   * default memory format) against channels-last ones: cuDNN's tensor-core kernels read NHWC, so it
   * transposes around NCHW convolutions or runs slower NCHW kernels (predictor/step.ts). Set from
   * published NCHW/NHWC comparisons, not fitted by calibrate (efficiency.json's _about says how).
   */
  nchwConvEfficiency: number;
  /**
   * Fraction of a link's per-direction bandwidth a pipeline send reaches when it runs alone on the
   * critical path. Not calibrated; absent from the file, 0.8 (nccl-tests bus bandwidth on NVLink nodes
   * for large messages is about 80% of the link's). All-reduces use the measured curve instead.
   */
  collectiveLinkEfficiency?: number;
  /** The memory model's constants (seeds/memory.json), loaded beside these and passed in with them. */
  memory: MemoryConstants;
}

/** How the attention core runs: one fused kernel (FlashAttention / SDPA) or eager ops saving every intermediate. */
export const ATTENTION_IMPLEMENTATIONS = ['fused', 'eager'] as const;
export type AttentionImplementation = (typeof ATTENTION_IMPLEMENTATIONS)[number];

/**
 * Activation recomputation, in order of the forward work it reruns (and, for a transformer, of the
 * memory it frees):
 *   none               keep every activation for backward;
 *   selective          drop the attention core's activations and recompute them in backward
 *                      (Korthikanti et al. 2022; FlashAttention does the same implicitly), or the
 *                      modules `recomputeModules` names (Megatron-Core's recompute_modules);
 *   selective_op       PyTorch's op-level selective checkpointing as torchtitan configures it
 *                      (activation_checkpoint.mode "selective", selective_ac_option "op"): each block
 *                      keeps its input, the fused attention's output and every other matmul's output
 *                      (torchtitan's _save_list policy: the 1st, 3rd, ... mm of the block), and reruns
 *                      the rest;
 *   save_qkv_out_proj  each block keeps its input and its q, k, v and output projections' outputs
 *                      (praxis AutodiffCheckpointType.SAVE_QKV_OUT_PROJ, as PaxML's GPT-3 175B runs);
 *   save_qkv_proj      each block keeps its input and its q, k, v projections' outputs (MaxText's
 *                      remat_policy save_qkv_proj);
 *   full               keep only each transformer block's input and rerun the block's forward.
 * The last four checkpoint every block (BLOCK_CHECKPOINTS); predictor/parallel.ts blockCheckpointsOf says,
 * per layer, what each keeps and reruns, for memory (memory.ts) and time (step.ts) alike.
 */
export const RECOMPUTE = [
  'none',
  'selective',
  'selective_op',
  'save_qkv_out_proj',
  'save_qkv_proj',
  'full',
] as const;
export type Recompute = (typeof RECOMPUTE)[number];

/**
 * How the optimizer keeps the master weights in a precision mode that has a master copy (16-bit
 * working weights): whole in fp32 (the default: Megatron-Core's distributed optimizer, DeepSpeed's
 * 16-bit optimizers); only their 16 low-order bits beside the bf16 weights that hold the high-order
 * ones (Apex DistributedFusedAdam's and Transformer Engine FusedAdam's store_param_remainders), 2 bytes;
 * a bf16 copy (an optimizer whose state is bf16 over FP8 weights); none, where the optimizer updates
 * the 16-bit weights themselves (Apex DistributedFusedAdam with dtype bf16 over bf16 weights).
 */
export const MASTER_WEIGHTS = ['fp32', 'remainders', 'bf16', 'none'] as const;
export type MasterWeights = (typeof MASTER_WEIGHTS)[number];

/** How the optimizer stores its moments (Adam's m and v) where it differs from the precision mode. */
export const OPTIMIZER_STATES = ['fp32', 'bf16'] as const;
export type OptimizerState = (typeof OPTIMIZER_STATES)[number];

/**
 * What Megatron-Core's selective recomputation reruns (TransformerConfig.recompute_modules, under
 * recompute_granularity "selective"; its default is ["core_attn"]), of the modules this model knows:
 * core_attn the attention core; mlp a dense layer's whole MLP (not a mixture-of-experts one); moe_act
 * the experts' activation; layernorm the blocks' input and pre-MLP norms; mla_up_proj multi-head
 * latent attention's up-projections and rotary embedding (predictor/parallel.ts marks the layers).
 */
export const RECOMPUTE_MODULES = ['core_attn', 'mlp', 'moe_act', 'layernorm', 'mla_up_proj'] as const;
export type RecomputeModule = (typeof RECOMPUTE_MODULES)[number];

/**
 * The classes that decide which math mode and element size a layer gets under a precision mode.
 * matmul: GEMMs and convolutions (tensor cores); reduction-sensitive: softmax, norms, loss
 * (autocast keeps them fp32); pointwise: activations, adds, dropout, pooling; gather: embeddings.
 */
export type OpClass = 'matmul' | 'reduction' | 'pointwise' | 'gather';

/**
 * The element type of a tensor a layer saves: the precision mode's saved GEMM input type ('gemm'),
 * the mode's activation type of an op class, or a fixed type.
 */
export type SavedTensorType = 'gemm' | OpClass | 'fp32' | 'fp16' | 'bf16' | 'fp8';

/** What one layer keeps for backward (seeds/memory.json `savedForBackward`). */
export interface SavedRule {
  input?: SavedTensorType;
  output?: SavedTensorType;
  maskBytesPerElement?: number;
  indexBytesPerInput?: number;
  indexBytesPerOutput?: number;
  /** Fraction of the input saved (a product keeping one of its two factors); default 1. */
  inputShare?: number;
  /**
   * An output-sized tensor kept before the layer's weight multiplies it (a composite norm's
   * normalized values): not the output the next layer reads, so never counted as shared with it.
   */
  beforeWeight?: SavedTensorType;
  /**
   * A linear reading what an earlier linear of the same width read (Layer.sameInputAs: a gated MLP's
   * up projection beside its gate) is one GEMM with it: its input is kept once whatever type the GEMM
   * keeps it in.
   */
  gatedPairFused?: boolean;
  /**
   * A linear standing for separate projections of one input (Layer linear `projections`) keeps a copy
   * of the input per projection when it casts it (autocast runs each projection's cast on its own).
   */
  castPerProjection?: boolean;
  /** Output-sized intermediates a composite op keeps beside its input (gelu_new's tanh, 1 + tanh and x / 2), one type each. */
  intermediates?: SavedTensorType[];
}

/** The memory model's constants (seeds/memory.json, each with its source there). */
export interface MemoryConstants {
  cudaContextGb: number;
  ncclBuffersGb: number;
  cublasWorkspaceGb: number;
  convWorkspaceFactor: number;
  backwardGradientTensors: number;
  lossParallelBackwardTensors: number;
  allocatorFragmentation: number;
  /** allocatorFragmentation for the LLM frameworks' stacks (MEGATRON, TUNED, TORCH_COMPILE): see seeds/memory.json. */
  frameworkAllocatorFragmentation: number;
  defaultMemoryHeadroomGb: number;
  defaultAttention: AttentionImplementation;
  softmaxStatsBytes: number;
  /** By layer type or type.kind (the kind wins). */
  savedForBackward: Record<string, SavedRule>;
  /** Per framework family, rules replacing savedForBackward's where its fused kernels save less. */
  frameworkRules: Record<string, Record<string, SavedRule>>;
  /** Per framework family, how its recipes store weights, gradients and master weights. */
  frameworkStates: Record<string, FrameworkStates>;
  /** Settings one source's launch scripts give its rows in place of their family's. */
  sourceRecipes: SourceRecipe[];
}

/** seeds/memory.json sourceRecipes: what one source's published launch scripts set. */
export interface SourceRecipe {
  name: string;
  /** Matches the row's source (repository@commit:file). */
  rows: RegExp;
  /** Matches the row's software column (the release), where one source file spans releases. */
  software?: RegExp;
  /** Only these models' rows (all when absent). */
  models?: string[];
  /** Only rows of these tasks (pretrain, sft, lora; all when absent). */
  tasks?: string[];
  /** The framework family whose frameworkStates the rows keep (absent: their framework's, if any). */
  family?: string;
  fp8Parameters?: boolean;
  /** Per precision mode. */
  masterWeights?: Partial<Record<string, MasterWeights>>;
  optimizerState?: OptimizerState;
  /** Per model: the interleaved pipeline's chunks per stage the script sets where the row does not state them. */
  virtualStages?: Partial<Record<string, number>>;
  /** Only rows on these GPUs (all when absent): a performance configuration is per GPU type. */
  gpus?: string[];
  /** The recomputation the script's configuration sets where the row does not state it. */
  recompute?: Recompute;
  /** Under selective recomputation, the modules it reruns (Megatron's recompute_modules; default core_attn). */
  recomputeModules?: RecomputeModule[];
  /** The tensor and pipeline parallel degrees the scripts set, where the rows leave them empty. */
  layout?: { tensorParallel: number; pipelineParallel: number };
}

/** How a framework family's recipes store the model states (seeds/memory.json frameworkStates). */
export interface FrameworkStates {
  gradients: 'fp32' | 'bf16';
  /** FP8 runs keep the FP8-copied weights only in FP8 (fp8_param_gather). */
  fp8Parameters: boolean;
  masterWeights: MasterWeights;
  /** Models whose recipe's optimizer keeps only the 16-bit remainders of the fp32 master weights. */
  masterRemaindersFor: string[];
  /** What the family's published configurations recompute when a row leaves it unstated. */
  recomputeWhenUnstated: Recompute;
}

/** What one batch element of a model is. */
export type SampleUnit = 'image' | 'sequence' | 'token' | 'sample' | 'audio_sample' | 'mel_frame' | 'user';

export type OptimizerKind = 'sgd' | 'adam' | 'lamb';

/** One model of the zoo as seeds/models.json states it; predictor/zoo/ builds its layers. */
export interface ZooEntry {
  id: string;
  name: string;
  /** Which builder reads `arch` (see BUILDERS in predictor/zoo/index.ts). */
  family: string;
  batchElement: SampleUnit;
  throughputUnit: string;
  /** A number, or "seqLen" when one batch element is a sequence and the unit counts its tokens. */
  unitsPerBatchElement: number | 'seqLen';
  seqLen?: number;
  imageSize?: number;
  optimizer: OptimizerKind;
  batchSizes: number[];
  source: string;
  /** How the code the entry was written from runs its attention cores; absent = fused (models.json about). */
  attention?: AttentionImplementation;
  /** Approximations and unit decisions, kept next to the numbers they qualify. */
  notes?: string[];
  /** The builder's hyper-parameters, in the builder's own shape. */
  arch: Record<string, unknown>;
}

/**
 * A published decoder the zoo lists by id (seeds/models.json `published`): its shape is the
 * architecture row of measurements/llm_models.csv it names, stated there and nowhere else.
 */
export interface PublishedZooModel {
  id: string;
  name: string;
  /** The llm_models.csv `model` whose row it is. */
  architecture: string;
  batchSizes: number[];
  /** Default sequence length; absent: the length most of its published runs trained. */
  seqLen?: number;
  /** Where a stated seqLen comes from. */
  seqLenSource?: string;
}

/**
 * seeds/measurements/as-run.json: a source's scripts ran a zoo model with other hyper-parameters
 * than the entry states (e.g. Lambda's Transformer-XL without the adaptive softmax).
 */
export interface AsRunRule {
  source: string;
  model: string;
  /** Only the rows of this framework (train.csv's column); absent = every row of the source and model. */
  framework?: string;
  /** Where the row states no sequence length: the one the scripts set. */
  seqLen?: number;
  /** Overlaid on the zoo entry's arch. */
  arch?: Record<string, unknown>;
  /**
   * The launcher started one training per GPU that never synchronises gradients (the script wraps
   * the model in DistributedDataParallel only when asked): a multi-GPU row's throughput is the sum
   * of that many one-GPU trainings.
   */
  independentProcesses?: boolean;
  /** The scripts store convolution activations channels-last (NHWC) in the row's 16-bit runs (Execution.channelsLast). */
  channelsLast?: boolean;
  why: string;
  provenance: string;
}

/** A conversion between a model's throughput unit and a measurement's (seeds/units.json). */
export interface UnitRule {
  model: string;
  unit: string;
  factor: number;
  why: string;
}

/**
 * How NCCL crosses the network between nodes. RDMA: InfiniBand, RoCE, AWS EFA, costed at
 * `networkEfficiency`, fitted on scaling runs over InfiniBand; GCP's GPUDirect-TCPX/TCPXO fabrics
 * (TCP offloaded to the NIC, straight to GPU memory) are costed alike. TCP: NCCL's socket
 * transport over a cloud instance's Ethernet (AWS ENA, Azure accelerated networking), which reaches
 * `tcpNetworkEfficiency` of the line rate in the published measurements (seeds/efficiency.json).
 */
export type NetworkTransport = 'RDMA' | 'TCP';
export const NETWORK_TRANSPORTS: readonly NetworkTransport[] = ['RDMA', 'TCP'];
