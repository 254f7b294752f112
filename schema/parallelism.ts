// GraphQL types for how a plan splits the model (predictor/parallel.ts): what a plan reports and what
// `predict` accepts. Kept apart from types.ts so both types.ts and inputs.ts can use them.
import { Field, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import {
  MASTER_WEIGHTS,
  OPTIMIZER_STATES,
  RECOMPUTE,
  RECOMPUTE_MODULES,
  type MasterWeights,
  type OptimizerState,
  type Recompute,
  type RecomputeModule,
} from '../predictor/parallel.js';

/** A GraphQL enum of the predictor's names in CONSTANT_CASE, as PrecisionEnum reads PRECISIONS. */
const constantCase = <N extends string>(names: readonly N[]) =>
  Object.fromEntries(names.map((n) => [n.toUpperCase(), n])) as { [K in N as Uppercase<K>]: K };

export const RecomputeEnum = constantCase<Recompute>(RECOMPUTE);
registerEnumType(RecomputeEnum, {
  name: 'Recompute',
  description:
    'Activation recomputation: which activations are dropped in forward and recomputed in backward. Ordered by the forward work rerun.',
  valuesConfig: {
    NONE: { description: 'Keep every activation.' },
    SELECTIVE: {
      description:
        "Drop the attention core (scores, softmax, dropout) and recompute it in backward (Korthikanti et al. 2022; what FlashAttention does too), or, with ParallelismInput.recomputeModules, the modules named there (Megatron-Core's recompute_modules).",
    },
    SELECTIVE_OP: {
      description:
        'PyTorch op-level selective checkpointing as torchtitan configures it (activation_checkpoint mode "selective", selective_ac_option "op"): each block keeps its input, the fused attention\'s output and every other matmul\'s output, and reruns the rest (for a Llama block: wk, wo and w3 rerun). recommend searches it, in place of SELECTIVE, when softwareStack is TORCH_COMPILE.',
    },
    SAVE_QKV_OUT_PROJ: {
      description:
        'Each block keeps its input and the outputs of its q, k, v and output projections and reruns the rest, attention included (praxis/PaxML AutodiffCheckpointType.SAVE_QKV_OUT_PROJ). Priced when named; recommend does not search it.',
    },
    SAVE_QKV_PROJ: {
      description:
        "Each block keeps its input and its q, k, v projections' outputs and reruns the rest, attention included (MaxText remat_policy save_qkv_proj). Priced when named; recommend does not search it.",
    },
    FULL: { description: "Keep only each transformer block's input and rerun its forward in backward." },
  },
});

// What each module reruns: Megatron-Core's TransformerConfig.recompute_modules doc
// (megatron/core/transformer/transformer_config.py); what it frees: predictor/parallel.ts
// recomputeModulesOf and memory.ts (the derivation is in notes/issue-11.md, MoE memory).
export const RecomputeModuleEnum = constantCase<RecomputeModule>(RECOMPUTE_MODULES);
registerEnumType(RecomputeModuleEnum, {
  name: 'RecomputeModule',
  description:
    "A module selective recomputation reruns in backward (Megatron-Core's recompute_modules, under recompute_granularity selective; its default is [CORE_ATTN]). Megatron checkpoints CORE_ATTN and MLP normally (their inputs kept, their insides dropped) and MOE_ACT, LAYERNORM and MLA_UP_PROJ output-discarding (their outputs dropped after the next op has used them). Each module's forward is added to the step once per micro-batch; a module the model does not have frees and costs nothing.",
  valuesConfig: {
    CORE_ATTN: {
      description:
        'The attention core (scores, softmax, dropout, context): with eager attention frees the scores, softmax and dropout it keeps; fused attention (the default) keeps none of them, so there it frees nothing more and still adds the rerun.',
    },
    MLP: {
      description:
        "A dense layer's whole MLP (not a mixture-of-experts layer's): keeps only the MLP's input, frees its up/gate outputs and activation.",
    },
    MOE_ACT: {
      description:
        "The experts' activation function: frees its output (the input of the experts' second GEMM).",
    },
    LAYERNORM: {
      description:
        "The blocks' input and pre-MLP norms: frees the norm outputs the Q/K/V projections (or multi-head latent attention's down-projections) and the mixture-of-experts router keep.",
    },
    MLA_UP_PROJ: {
      description:
        "Multi-head latent attention's up-projections and rotary embedding (DeepSeek-V2/V3): frees the q, k and v the attention core keeps.",
    },
  },
});

export const OptimizerStateEnum = constantCase<OptimizerState>(OPTIMIZER_STATES);
registerEnumType(OptimizerStateEnum, {
  name: 'OptimizerState',
  description: "Storage of the optimizer's moments (Adam's m and v).",
  valuesConfig: {
    FP32: { description: '4 bytes per moment (the default).' },
    BF16: { description: '2 bytes per moment.' },
  },
});

export const MasterWeightsEnum = constantCase<MasterWeights>(MASTER_WEIGHTS);
registerEnumType(MasterWeightsEnum, {
  name: 'MasterWeights',
  description:
    'How the optimizer keeps the master weights in a precision mode that has a master copy (FP16, BF16, FP8, FP4). Memory (masterWeightsGb) and the optimizer step follow it.',
  valuesConfig: {
    FP32: {
      description:
        "A whole fp32 copy, 4 bytes per parameter (the default: Megatron-Core's distributed optimizer, DeepSpeed's 16-bit optimizers).",
    },
    REMAINDERS: {
      description:
        "Only the 16 low-order bits of the fp32 master beside the bf16 weights that hold its high-order ones, 2 bytes per parameter (Apex DistributedFusedAdam's and Transformer Engine FusedAdam's store_param_remainders). Needs bf16 weights (BF16, FP8, FP4).",
    },
    BF16: {
      description:
        'A bf16 copy, 2 bytes per parameter (an optimizer whose state is bf16 over FP8 weights, as NeMo 1.x recipes with dtype bf16 and fp8_params ran).',
    },
    NONE: {
      description:
        'No master copy: the optimizer updates the 16-bit weights themselves (NeMo 1.x recipes with distributed_fused_adam dtype bf16 over bf16 weights).',
    },
  },
});

export enum ParallelismSearchEnum {
  OFF = 'off',
  AUTO = 'auto',
  ALL = 'all',
}
registerEnumType(ParallelismSearchEnum, {
  name: 'ParallelismSearch',
  description:
    'Where recommend searches tensor/pipeline parallelism (interleaved too, on a stack that interleaves), ZeRO, recomputation and (mixture-of-experts models) expert parallelism.',
  valuesConfig: {
    OFF: { description: 'Plain data parallelism only.' },
    AUTO: {
      description:
        'Also tensor/pipeline/expert parallelism, ZeRO and recomputation on the layouts where plain data parallelism does not fit or trains above the global batch cap.',
    },
    ALL: { description: 'On every layout, keeping the faster plan.' },
  },
});

@ObjectType({
  description:
    'How a plan splits the model over its GPUs. Plain data parallelism: dataParallel = GPUs, tensorParallel = pipelineParallel = contextParallel = virtualPipelineStages = expertParallel = 1, zeroStage 0, recompute NONE.',
})
export class Parallelism {
  @Field(() => Int, {
    description:
      'Model replicas training side by side (GPUs / (tensorParallel x pipelineParallel x contextParallel)).',
  })
  dataParallel!: number;
  @Field(() => Int, {
    description:
      'GPUs each layer is split over (Megatron tensor parallelism, with sequence parallelism), inside one node.',
  })
  tensorParallel!: number;
  @Field(() => Int, { description: 'Pipeline stages.' }) pipelineParallel!: number;
  @Field(() => Int, {
    description: 'GPUs each sequence is split over (context parallelism, ring attention); 1 = none.',
  })
  contextParallel!: number;
  @Field(() => Int, {
    description: "Model chunks per pipeline stage (Megatron's interleaved schedule); 1 = plain 1F1B.",
  })
  virtualPipelineStages!: number;
  @Field(() => Int, {
    description:
      "GPUs a mixture-of-experts layer's experts are spread over (expert parallelism), E / expertParallel whole experts each, tokens sent to them and back by all-to-all; 1 = every GPU holds every expert.",
  })
  expertParallel!: number;
  @Field(() => Int, {
    description:
      "ZeRO stage over the data-parallel group: 1 shards optimizer state, 2 also gradients, 3 also weights (FSDP). Under a pipeline, 3 is torchtitan's FSDP: each stage's weights gathered once a step and its gradients kept whole until the last micro-batch.",
  })
  zeroStage!: number;
  @Field(() => RecomputeEnum, { description: 'Activation recomputation the plan uses.' })
  recompute!: Recompute;
  @Field(() => [RecomputeModuleEnum], {
    nullable: true,
    description:
      "Under SELECTIVE recomputation, the modules rerun (the request's recomputeModules, else [CORE_ATTN]); null under NONE or FULL. recommend's plans always rerun [CORE_ATTN].",
  })
  recomputeModules?: readonly RecomputeModule[];
  @Field(() => Int, {
    description:
      'Micro-batches per optimizer step (the gradient accumulation steps; with a pipeline, what fills it).',
  })
  microBatches!: number;
}

@InputType({
  description:
    'Tensor/pipeline/context/expert parallelism, ZeRO sharding and recomputation. Leave out for plain data parallelism. With TP/PP, batchSizePerGpu is the micro-batch of one model replica, and gradAccumSteps the micro-batches per step.',
})
export class ParallelismInput {
  @Field(() => Int, { defaultValue: 1, description: 'Must divide gpusPerNode and the attention heads.' })
  tensorParallel!: number;
  @Field(() => Int, {
    defaultValue: 1,
    description:
      'At most the transformer blocks; gpusPerNode x nodes must be a multiple of tensorParallel x pipelineParallel.',
  })
  pipelineParallel!: number;
  @Field(() => Int, {
    defaultValue: 0,
    description:
      "0 to 3; with pipelineParallel > 1, 0, 1 or 3 (no framework runs ZeRO-2 under a pipeline; 3 there is torchtitan's FSDP, each stage's weights gathered once a step). Stages 1 and 2 run as softwareStack's framework runs them (PYTORCH_EAGER: ZeroRedundancyOptimizer and FSDP's SHARD_GRAD_OP; TORCH_COMPILE: the distributed optimizer and SHARD_GRAD_OP; MEGATRON and TUNED: the distributed optimizer and DeepSpeed's stage 2); the evidence says which.",
  })
  zeroStage!: number;
  @Field(() => RecomputeEnum, {
    defaultValue: RecomputeEnum.NONE,
    description: 'Activation recomputation (default NONE).',
  })
  recompute!: Recompute;
  @Field(() => [RecomputeModuleEnum], {
    nullable: true,
    description:
      "Under recompute SELECTIVE only: the modules it reruns (Megatron-Core's recompute_modules), each once, at least one; leave out for [CORE_ATTN], what SELECTIVE alone means. The memory kept and the recompute time both follow the list. E.g. Megatron-Bridge's DeepSeek-V3 H100 recipe reruns [MLA_UP_PROJ, MLP], its gpt-oss-120b H100 recipe [LAYERNORM, MOE_ACT]. recommend does not search modules: its plans use [CORE_ATTN].",
  })
  recomputeModules?: RecomputeModule[] | null;
  @Field(() => OptimizerStateEnum, {
    nullable: true,
    description: "Optimizer moments' storage; default: the precision mode's (fp32).",
  })
  optimizerState?: OptimizerState;
  @Field(() => MasterWeightsEnum, {
    nullable: true,
    description:
      "How the optimizer keeps the master weights, in the modes that have them (FP16, BF16, FP8, FP4); default FP32 (under softwareStack MEGATRON or TUNED, its recipes' fp32). Predict only: recommend's plans keep the default.",
  })
  masterWeights?: MasterWeights | null;
  @Field(() => Int, {
    defaultValue: 1,
    description:
      'Interleaved 1F1B: model chunks per GPU (Megatron virtual pipeline stages), 1 to 64; needs pipelineParallel > 1 and pipelineParallel x virtualPipelineStages <= transformer blocks. Shrinks the bubble by this factor.',
  })
  virtualPipelineStages!: number;
  @Field(() => Int, {
    defaultValue: 1,
    description:
      'Context parallelism: GPUs one sequence is split over (ring attention), 1 to 64; gpusPerNode x nodes must be a multiple of tensorParallel x pipelineParallel x contextParallel.',
  })
  contextParallel!: number;
  @Field(() => Int, {
    defaultValue: 1,
    description:
      "Expert parallelism (mixture-of-experts models: a layer list's linear `experts`, or a mixtral / qwen2_moe / qwen3_moe / deepseek_v2 / deepseek_v3 / gpt_oss config): GPUs each layer's experts are spread over, 1 to 1024, whole experts on each (no tensor split of an expert); tokens go to their experts' GPUs and back by all-to-all, forward and backward. Must divide the experts of every MoE layer and the GPUs of a pipeline stage (gpusPerNode x nodes / pipelineParallel); the EP ranks are carved out of a stage's tensor x context x data-parallel GPUs. 1 (the default) = every GPU holds every expert.",
  })
  expertParallel!: number;
}
