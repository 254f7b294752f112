// GraphQL types of the memory model (predictor/memory.ts): how the attention core runs, which decides
// what it keeps for backward. Kept apart so inputs.ts and types.ts can both use it.
import { registerEnumType } from 'type-graphql';

export enum FineTuningEnum {
  FULL = 'full',
  LORA = 'lora',
}
registerEnumType(FineTuningEnum, {
  name: 'FineTuning',
  description: 'Which weights the job trains.',
  valuesConfig: {
    FULL: {
      description:
        'Every weight: gradients, optimizer state and a gradient reduction for all of them. The default.',
    },
    LORA: {
      description:
        "Low-rank adapters on a frozen base: the base weights keep no gradients, master copy or optimizer state, get no optimizer step or gradient reduction, and backward computes input gradients only (half a linear layer's backward). The adapters' own work and state (well under 1% of the parameters) are left out. ZeRO-3 still gathers the frozen weights.",
    },
  },
});

export enum AttentionEnum {
  FUSED = 'fused',
  EAGER = 'eager',
}
registerEnumType(AttentionEnum, {
  name: 'AttentionImplementation',
  description:
    'How the attention core (scores, softmax, dropout, context) runs, which decides its time and the memory it keeps for backward.',
  valuesConfig: {
    FUSED: {
      description:
        "One fused kernel (FlashAttention, PyTorch's scaled_dot_product_attention since 2.0, Megatron/Transformer Engine): the scores never reach memory; keeps q, k, v, the output and one fp32 softmax statistic per head and query. The default, except the step of a model whose code writes the scores, on the default stack (the zoo's BERT, Transformer-XL, Transformer).",
    },
    EAGER: {
      description:
        'Separate matmul, softmax and dropout ops that write the scores to memory and each keep their inputs or outputs: heads x queries x keys elements several times over.',
    },
  },
});
