// GraphQL types of the memory model (predictor/memory.ts): how the attention core runs, which decides
// what it keeps for backward. Kept apart so inputs.ts and types.ts can both use it.
import { registerEnumType } from 'type-graphql';

export enum AttentionEnum {
  FUSED = 'fused',
  EAGER = 'eager',
}
registerEnumType(AttentionEnum, {
  name: 'AttentionImplementation',
  description:
    'How the attention core (scores, softmax, dropout, context) runs, which decides the memory it keeps for backward.',
  valuesConfig: {
    FUSED: {
      description:
        "One fused kernel (FlashAttention, PyTorch SDPA's default since 2.0, Megatron/Transformer Engine): keeps q, k, v, the output and one fp32 softmax statistic per head and query. The default.",
    },
    EAGER: {
      description:
        'Separate matmul, softmax and dropout ops that each keep their inputs or outputs: heads x queries x keys elements several times over.',
    },
  },
});
