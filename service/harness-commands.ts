// How to time a configuration on your own GPUs: the shell commands that write the measurement
// harness (harness/measure.py, `trainplan harness`), run it at exactly the configuration a plan or
// prediction names (batch, accumulation, precision, GPUs per node, nodes and their network), and
// record what it wrote (`trainplan calibrate import`, or the /calibrate page). Recorded, such a
// run calibrates that very configuration ("1 of this exact configuration" in evidence). Where the
// harness cannot run the configuration (LoRA, FP4, a model it cannot build) there are no commands
// and the note says why; where it runs something near it (eager PyTorch for a tuned stack, NCHW for
// channels-last, a layer replay of a split layout, AMP_BF16 for FP8 under ZeRO 2-3) the note says
// what differs.
import type { CorrectedRecommendation } from '../optimizer/recommend-corrected.js';
import type { Plan } from '../optimizer/search-types.js';
import type { Framework } from '../predictor/learned/features.js';
import { parallelStructure, type PlanParallelism, type Recompute } from '../predictor/parallel.js';
import { PRECISIONS, type ModelDef, type Precision } from '../predictor/types.js';
import { DEFAULT_STACK } from '../predictor/software.js';
import type { SoftwareStack } from '../predictor/software.js';
import type { AttentionImplementation, NetworkTransport } from '../seeds/types.js';
import { costOf } from '../predictor/predict.js';
import { fusedAttention } from '../predictor/step.js';
import { loadEfficiency } from '../seeds/catalog.js';
import type { WorkloadInput } from './lookup.js';
import { harnessFusesAttention } from './harness-script.js';

/**
 * The precision modes measure.py trains in: every mode but FP4, which no training recipe it runs
 * has (its PRECISIONS; test/harness-commands.test.ts holds them equal).
 */
export const HARNESS_PRECISIONS: readonly Precision[] = PRECISIONS.filter((p) => p !== 'FP4');

/**
 * The recomputation measure.py runs (its RECOMPUTE): full (the transformer blocks) and selective
 * with its default module, the attention core; the JAX policies and other modules it does not.
 */
export const HARNESS_RECOMPUTE: readonly Recompute[] = ['none', 'selective', 'full'];

/** The commands, in order, and what they time; no commands (and why) where the harness cannot. */
export interface HarnessCommands {
  commands: string[];
  note: string;
}

/** A ranked plan, and how to time it on your own GPUs. */
export type PlannedPlan = Plan & { harness: HarnessCommands };

/** recommend's answer as the service gives it (service/planning.ts): every plan with its commands. */
export interface PlannedRecommendation extends CorrectedRecommendation {
  plans: PlannedPlan[];
  paretoFront: PlannedPlan[];
}

/** The layout, batch and precision a plan or prediction names, every default filled in. */
export interface PlanConfiguration {
  nodes: number;
  gpusPerNode: number;
  batchSizePerGpu: number;
  gradAccumSteps: number;
  precision: Precision;
  parallelism: PlanParallelism;
}

/** A configuration on the network it was predicted on (a plan carries both; a prediction, its request). */
export interface NetworkedConfiguration extends PlanConfiguration {
  interNodeGbps: number;
  interNodeTransport: NetworkTransport;
}

/** What a request says of its workload and software: the same for every configuration it answers with. */
export interface HarnessContext {
  workload: Pick<WorkloadInput, 'model' | 'customModel' | 'seqLen' | 'fineTuning'>;
  /** The resolved model (its sequence length or image size). */
  model: ModelDef;
  softwareStack?: SoftwareStack | null;
  framework?: Framework;
  channelsLast?: boolean | null;
  /** How the request's attention cores run, where it says: the harness runs them so (measure.py --attention). */
  attention?: AttentionImplementation | null;
}

const RECORD = 'npx trainplan calibrate import runs.csv';
const RECORD_NOTE =
  'record runs.csv with the last command (into the store the server reads) or paste it at /calibrate';

/** Why measure.py cannot run this recomputation, or null when it can. */
function recomputeRefusal(p: PlanParallelism, custom: boolean): string | null {
  if (!HARNESS_RECOMPUTE.includes(p.recompute))
    return `the harness recomputes ${HARNESS_RECOMPUTE.filter((r) => r !== 'none').join(' or ')} only; this configuration uses ${p.recompute} recomputation`;
  const modules = p.recomputeModules;
  if (p.recompute === 'selective' && modules && !(modules.length === 1 && modules[0] === 'core_attn'))
    return `the harness's selective recomputation reruns the attention core (core_attn) only; this configuration reruns ${modules.join(', ')}`;
  if (p.recompute === 'selective' && custom)
    return 'a Hugging Face model checkpoints whole blocks only (full): selective recomputation runs on a zoo model';
  return null;
}

/**
 * measure.py's --attention for a configuration, or what differs where it cannot pass one. Unasked,
 * the harness runs the cores as stock PyTorch runs the model's code (a zoo model's marks,
 * transformers' default for a config's type): a request's own `attention` is passed on, and a zoo
 * model whose code writes the scores (the zoo's BERT) is run fused where the configuration's stack
 * has its own fused kernel (MEGATRON, TUNED, TORCH_COMPILE), as it costs it. A Hugging Face config
 * of such a type keeps transformers' default, some types having no fused path, and the note says so.
 */
function harnessAttention(
  t: Pick<HarnessContext, 'model' | 'softwareStack' | 'attention'>,
  custom: boolean,
): { flag?: AttentionImplementation; differs?: string } {
  const cost = costOf(t.model);
  if (!parallelStructure(cost).hasAttention) return {};
  if (t.attention) return { flag: t.attention };
  const stack = t.softwareStack ?? DEFAULT_STACK;
  if (!fusedAttention({ stack }, cost, loadEfficiency()) || harnessFusesAttention(cost)) return {};
  return custom
    ? {
        differs: `transformers runs this config's attention cores op by op (its default for the type; the run says EAGER), not fused as ${stack} costs them: the run's error against trainplan's eager estimate is what calibrates this one, as a ratio`,
      }
    : { flag: 'fused' };
}

const none = (why: string): HarnessCommands => ({
  commands: [],
  note: `${why}: time it with your own training code and record its step time with recordMeasurements (or a runs CSV at /calibrate)`,
});

export function harnessCommands(c: NetworkedConfiguration, context: HarnessContext): HarnessCommands {
  const zero = c.parallelism.zeroStage;
  // FP8 under ZeRO 2-3: the nearest configuration the harness runs is the same layout in AMP_BF16,
  // which a stock loop's FP8 is but for the FP8 GEMMs (the same fp32 model: precision.ts
  // stockLoopPolicy). Recorded, that run is the model's on this GPU at tensor-core math, which
  // calibrates this FP8 estimate too.
  if (zero >= 2 && c.precision === 'FP8')
    return timedCommands(
      { ...c, precision: 'AMP_BF16' },
      context,
      `the harness runs ZeRO stage ${zero} under FullyShardedDataParallel, where it does not run FP8 (Transformer Engine): these commands time 20 steps after 5 warm-up of the same layout in AMP_BF16, this configuration but for its FP8 GEMMs; recorded, the run calibrates this model's estimates on this GPU, this FP8 one among them (a run of the same model on the same GPU in another tensor-core precision)`,
    );
  return timedCommands(c, context, 'times 20 steps after 5 warm-up of this configuration');
}

/** The commands that time `c`, their note opening with `what` they time; none, and why, where they cannot. */
function timedCommands(c: NetworkedConfiguration, context: HarnessContext, what: string): HarnessCommands {
  const t = { ...c, ...context };
  const { workload: w } = t;
  if (w.fineTuning === 'lora')
    return none('the harness trains every weight, not LoRA adapters on a frozen base');
  if (!HARNESS_PRECISIONS.includes(t.precision))
    return none(`the harness has no ${t.precision} mode (it trains in ${HARNESS_PRECISIONS.join(', ')})`);
  const zero = t.parallelism.zeroStage;
  const tp = t.parallelism.tensorParallel;
  const pp = t.parallelism.pipelineParallel;
  const cp = t.parallelism.contextParallel;
  // GPUs holding the same weights (measure.py's data- and context-parallel ranks): what ZeRO shards
  // over and the gradients are averaged across.
  const replicas = t.parallelism.dataParallel * cp;
  if (zero > 0 && replicas === 1)
    return none(
      `ZeRO stage ${zero} shards over data-parallel GPUs; this configuration has one${tp * pp > 1 ? ' replica' : ''}`,
    );
  if (tp > 1 && t.gpusPerNode % tp !== 0)
    return none(
      `the harness's tensor-parallel groups are GPUs of one machine; ${t.gpusPerNode} per node do not split into groups of ${tp}`,
    );
  const ep = t.parallelism.expertParallel;
  // The harness's pipeline runs one micro-batch per accumulation step, as the predictor does by default.
  if (pp > 1 && t.parallelism.microBatches !== t.gradAccumSteps)
    return none(
      `the harness runs a pipeline's micro-batches as its accumulation steps; this configuration has ${t.parallelism.microBatches} micro-batches and ${t.gradAccumSteps} accumulation steps`,
    );
  const v = t.parallelism.virtualPipelineStages;
  // Megatron's interleaved schedule (the one measure.py runs) takes the micro-batches in groups of PP.
  if (v > 1 && t.gradAccumSteps % pp !== 0)
    return none(
      `the harness's interleaved schedule runs micro-batches in groups of the ${pp} stages, as Megatron's does; this configuration has ${t.gradAccumSteps}`,
    );
  const custom = w.customModel;
  if (custom && custom.huggingFaceConfig == null)
    return none(
      'the harness builds zoo models and Hugging Face configs; this model is an ONNX graph or a layer list',
    );
  if (custom && tp * pp * ep * cp > 1)
    return none(
      `the harness splits a zoo model's layer replay by tensor, pipeline, context and expert parallelism, not a Hugging Face build; this configuration uses ${[
        tp > 1 ? `tensor parallelism ${tp}` : '',
        pp > 1 ? `pipeline parallelism ${pp}` : '',
        cp > 1 ? `context parallelism ${cp}` : '',
        ep > 1 ? `expert parallelism ${ep}` : '',
      ]
        .filter(Boolean)
        .join(' and ')}`,
    );
  const recompute = t.parallelism.recompute;
  const refused = recomputeRefusal(t.parallelism, !!custom);
  if (refused) return none(refused);
  const seqLen = t.model.seqLen ?? t.model.imageSize;
  const attention = harnessAttention(t, !!custom);
  // Zoo models are embedded in the script (at the request's length when it gives one); a Hugging
  // Face config is built by transformers from the file, at the length trainplan predicted.
  const write = custom
    ? 'npx trainplan harness --out measure.py'
    : `npx trainplan harness --model ${t.model.id}${w.seqLen != null ? ` --seq-len ${w.seqLen}` : ''} --out measure.py`;
  const args = [
    ...(custom ? ['--hf-config config.json', ...(seqLen ? [`--seq-len ${seqLen}`] : [])] : []),
    `--batch-size ${t.batchSizePerGpu}`,
    ...(t.gradAccumSteps > 1 ? [`--grad-accum-steps ${t.gradAccumSteps}`] : []),
    `--precision ${t.precision}`,
    ...(recompute !== 'none' ? [`--recompute ${recompute}`] : []),
    ...(zero > 0 ? [`--zero-stage ${zero}`] : []),
    ...(tp > 1 ? [`--tensor-parallel ${tp}`] : []),
    ...(pp > 1 ? [`--pipeline-parallel ${pp}`] : []),
    ...(v > 1 ? [`--virtual-pipeline-stages ${v}`] : []),
    ...(cp > 1 ? [`--context-parallel ${cp}`] : []),
    ...(ep > 1 ? [`--expert-parallel ${ep}`] : []),
    ...(attention.flag ? [`--attention ${attention.flag}`] : []),
  ];
  let run: string;
  const where: string[] = [];
  if (t.nodes > 1) {
    // torchrun's static rendezvous: the same line on every node, NODE_RANK 0..nodes-1, FIRST_NODE
    // the address of node 0. The network is the plan's: the run cannot see it.
    run =
      `torchrun --nnodes ${t.nodes} --nproc-per-node ${t.gpusPerNode} --node-rank $NODE_RANK --master-addr $FIRST_NODE --master-port 29500 ` +
      `measure.py ${args.join(' ')} --inter-node-gbps ${t.interNodeGbps} --inter-node-transport ${t.interNodeTransport} --out runs.csv`;
    where.push(
      `run the torchrun line on each of the ${t.nodes} nodes (measure.py copied to each; NODE_RANK 0 to ${t.nodes - 1}, FIRST_NODE the address of node 0; node 0 writes runs.csv); the network is the one this configuration assumes (${t.interNodeGbps} Gbps, ${t.interNodeTransport}): give yours in --inter-node-gbps and --inter-node-transport if it differs, as the run is recorded at the network it ran on`,
    );
  } else {
    run = `python3 measure.py ${args.join(' ')}${t.gpusPerNode > 1 ? ` --gpus ${t.gpusPerNode}` : ''} --out runs.csv`;
    where.push(
      `run measure.py on a machine with ${t.gpusPerNode > 1 ? `${t.gpusPerNode} of the GPUs` : 'the GPU'} (it needs Python and PyTorch only; the first command runs wherever trainplan is installed)`,
    );
  }
  const differs = [
    custom
      ? 'config.json: the Hugging Face config of the request, saved beside measure.py and runs.csv (transformers must be installed; calibrate import reads the config beside the CSV, the /calibrate page cannot)'
      : '',
    t.precision === 'FP8'
      ? "FP8 needs Transformer Engine installed (NVIDIA's; on AMD GPUs its ROCm build, ROCm/TransformerEngine)"
      : '',
    tp > 1
      ? `tensor parallelism ${tp} is replayed layer by layer: each GPU runs its 1/${tp} of the layers trainplan splits and all-reduces every row-parallel linear's output over its group, in forward and in backward (Megatron's pattern), with the kernels PyTorch picks for those shapes, not your framework's`
      : '',
    pp > 1
      ? `pipeline parallelism ${pp} is replayed as Megatron splits and schedules it: each stage its 1/${pp} of the transformer blocks${v > 1 ? ` in ${v} model chunks ${pp} apart` : ''} (the first also the embeddings, the last the head and loss), ${v > 1 ? 'interleaved 1F1B' : '1F1B'} over the ${t.gradAccumSteps} micro-batches, the residual stream sent across each stage boundary forward and its gradient backward${replicas > 1 ? `, the gradients ${zero === 3 ? 'reduce-scattered' : 'all-reduced'} across the replicas after the last micro-batch` : ''}`
      : '',
    cp > 1
      ? `context parallelism ${cp} is replayed as ring attention runs it: each GPU its 1/${cp} of every sequence, K and V passed round the ring at each attention core while its scores compute (twice in backward)`
      : '',
    ep > 1
      ? `expert parallelism ${ep} is replayed as Megatron-Core runs it (expert tensor parallelism 1): each GPU holds 1/${ep} of every expert layer's experts and runs the tokens routed to them, evenly routed, after an all-to-all that dispatches them and before one that combines them, forward and backward`
      : '',
    zero >= 2 && pp > 1
      ? // (parallel.ts zeroRunsWithPipeline: stage 3 only)
        `ZeRO stage 3 under the pipeline runs as torchtitan runs FSDP there: FSDP2 (fully_shard) on each model chunk, its weights gathered at the first micro-batch and kept through the step, its gradients reduce-scattered at the last; it needs PyTorch 2.6 or later`
      : zero >= 2
        ? `ZeRO stage ${zero} runs under FullyShardedDataParallel (${zero === 3 ? 'FULL_SHARD' : 'SHARD_GRAD_OP'}${tp * cp * ep > 1 ? ', over the data-parallel ranks of the groups' : ''}), which needs PyTorch 2`
        : '',
    t.softwareStack && t.softwareStack !== DEFAULT_STACK
      ? `the harness runs eager PyTorch, not ${t.softwareStack}: the run's error against trainplan's eager estimate is what calibrates this ${t.softwareStack} one, as a ratio`
      : '',
    t.framework && t.framework !== 'PyTorch' ? `the harness runs PyTorch, not ${t.framework}` : '',
    t.channelsLast ? "the harness keeps PyTorch's default NCHW activations, not channels-last" : '',
    attention.differs ?? '',
  ].filter(Boolean);
  return {
    commands: [write, run, RECORD],
    note: [what, ...where, ...differs, RECORD_NOTE].join('; '),
  };
}
