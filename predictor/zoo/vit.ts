// Vision Transformer (Dosovitskiy et al. 2021): patch embedding, [CLS] token, learned positions,
// pre-norm encoder blocks, classification from the [CLS] token.
import type { Layer } from '../types.js';
import { attention, feedForward, sublayer } from './attention.js';
import { add, dropout, embedding, linear, loss, norm, repeat } from './common.js';
import { archOf, imageSizeOf, type ZooEntry } from './spec.js';

interface VitArch {
  patch: number;
  layers: number;
  hidden: number;
  heads: number;
  ffn: number;
  numClasses: number;
  dropout: boolean;
  /** Input channels (default 3, RGB). */
  channels?: number;
  /** q, k and v are separate linears (transformers' ViT); torchvision's fuses them (nn.MultiheadAttention's in_proj). */
  separateQkv?: boolean;
}

export function buildVit(e: ZooEntry): Layer[] {
  const a = archOf<VitArch>(e, ['patch', 'layers', 'hidden', 'heads', 'ffn', 'numClasses', 'dropout']);
  const size = imageSizeOf(e);
  const d = a.hidden;
  const T = Math.floor(size / a.patch) ** 2 + 1; // patches + [CLS]
  const x = T * d;
  const res = (name: string) => ({
    name,
    tokens: T,
    hidden: d,
    norm: 'layernorm' as const,
    preNorm: true,
    dropout: a.dropout,
  });
  const block = [
    ...sublayer(
      attention({
        name: 'attn',
        queries: T,
        keys: T,
        hidden: d,
        heads: a.heads,
        headDim: d / a.heads,
        bias: true,
        probDropout: false,
        separateProjections: a.separateQkv ?? false,
      }),
      res('attn'),
    ),
    ...sublayer(
      feedForward({
        name: 'mlp',
        tokens: T,
        hidden: d,
        ffn: a.ffn,
        act: 'gelu',
        bias: true,
        innerDropout: a.dropout,
      }),
      res('mlp'),
    ),
  ];
  return [
    {
      type: 'conv2d',
      name: 'patch_embed',
      inC: a.channels ?? 3,
      outC: d,
      kernel: a.patch,
      stride: a.patch,
      inH: size,
      inW: size,
      bias: true,
    },
    // The [CLS] token and the position table are learned tensors added to the sequence; a
    // one-row "embedding" is how the vocabulary holds a bare learned vector.
    embedding(1, d, 1, 'cls_token'),
    embedding(T, d, T, 'position_embeddings'),
    add(x, 'embeddings.sum'),
    ...(a.dropout ? [dropout(x, 'embeddings.dropout')] : []),
    ...repeat(block, a.layers),
    norm('layernorm', d, x, 'final_norm'),
    linear(d, a.numClasses, { name: 'head' }),
    loss(a.numClasses),
  ];
}
