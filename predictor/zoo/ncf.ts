// NCF NeuMF (He et al. 2017) as in NVIDIA DeepLearningExamples: a matrix-factorisation branch
// (elementwise product of user and item factors) and an MLP branch on concatenated embeddings,
// joined by one output neuron. One batch element is one (user, item) pair.
import type { Layer } from '../types.js';
import { act, dropout, embedding, linear, loss, mul } from './common.js';
import { archOf, type ZooEntry } from './spec.js';

interface NcfArch {
  users: number;
  items: number;
  /** MF embedding width. */
  factors: number;
  /** MLP widths; the first is the concatenated user+item embedding (half each). */
  mlp: number[];
  dropout: boolean;
}

export function buildNcf(e: ZooEntry): Layer[] {
  const a = archOf<NcfArch>(e, ['users', 'items', 'factors', 'mlp', 'dropout']);
  const half = a.mlp[0] / 2;
  const mlp = a.mlp
    .slice(1)
    .flatMap((out, i) => [
      linear(a.mlp[i], out, { name: `mlp.${i}` }),
      act('relu', out),
      ...(a.dropout ? [dropout(out)] : []),
    ]);
  return [
    embedding(a.users, a.factors, 1, 'mf_user'),
    embedding(a.items, a.factors, 1, 'mf_item'),
    mul(a.factors, 'mf.product'),
    embedding(a.users, half, 1, 'mlp_user'),
    embedding(a.items, half, 1, 'mlp_item'),
    ...mlp,
    linear(a.factors + a.mlp[a.mlp.length - 1], 1, { name: 'final' }),
    act('sigmoid', 1),
    loss(1, 'bce'),
  ];
}
