// The published decoders as zoo entries: an architecture row of seeds/measurements/llm_models.csv (the
// one place those shapes are stated) read as the zoo's decoder builder reads models.json's decoders.
// Two users: the published runs' predictions (predictor/llm.ts builds each run's decoder from its
// row) and the zoo, which lists the published models a user may ask for by id (models.json
// `published`) without restating their shapes.
import { loadLlmModelExtra, loadLlmVocab, type LlmModelExtra } from '../../seeds/tables.js';
import { loadLlmArchitectures, loadLlmRuns, type LlmArchitecture } from '../../seeds/llm.js';
import type { PublishedZooModel } from '../../seeds/types.js';
import type { ZooEntry } from './spec.js';
import type { LatentAttentionArch, MoeArch } from './decoder.js';

/** What names a published architecture's entry: the zoo's id and name, its batch sizes, why its length. */
export interface PublishedAs {
  id: string;
  name: string;
  batchSizes: number[];
  /** Where the entry's default sequence length comes from, appended to its source. */
  seqLenSource?: string;
}

/** The vocabulary measurements/llm_vocab.json gives a model whose architecture row leaves it to the tokenizer. */
function tokenizerVocab(model: string): number | null {
  const e = loadLlmVocab()[model];
  return typeof e === 'object' ? e.vocab : null;
}

/** What measurements/llm_models_extra.json adds to a model's architecture row (nothing for most). */
function modelExtra(model: string): LlmModelExtra | null {
  const e = loadLlmModelExtra()[model];
  return typeof e === 'object' ? e : null;
}

/**
 * The sliding window a model's configuration states, and on how many of its layers: all but every
 * fullAttentionEvery-th (Megatron-Core's window_attn_skip_freq: layer numbers 1, 2, ... divisible by it
 * attend to the whole sequence), so it follows the layer count a proxy run trains.
 */
function attentionWindowOf(
  extra: LlmModelExtra | null,
  layers: number,
): { attentionWindow: number; windowedLayers?: number } | null {
  if (!extra?.attentionWindow) return null;
  const every = extra.fullAttentionEvery;
  return {
    attentionWindow: extra.attentionWindow,
    ...(every ? { windowedLayers: layers - Math.floor(layers / every) } : {}),
  };
}

/**
 * Gated-MLP rows are Llama-style: RMSNorm, SwiGLU, rotary, no biases. The others keep LayerNorm and a
 * non-gated MLP (GELU; Nemotron's squared ReLU saves its input as GELU does) with their family's
 * positions and biases:
 * - NeMo's GPT-3 config classes (the row's source names `class GPTConfig...`) inherit GPTConfig's
 *   position_embedding_type = "learned_absolute" and Megatron-Core's add_bias_linear = True (the
 *   GPT-3 classes fuse bias + GELU: bias_activation_fusion = True), NVIDIA/NeMo
 *   nemo/collections/llm/gpt/model/base.py;
 * - Nemotron-4 uses rotary positions and no bias terms (Parmar et al. 2024, arXiv:2402.16819,
 *   section 2), as NeMo's Nemotron config classes set;
 * - a row whose `position` column says learned (MosaicML's MPT table) has learned positions.
 * A missing vocabulary (NeMo's configs leave it to the tokenizer) is the one
 * measurements/llm_vocab.json gives; a sliding attention window and biases on every linear layer
 * (gpt-oss: NeMo's GPTOSSConfig window_size, window_attn_skip_freq and add_bias_linear), the ones
 * measurements/llm_models_extra.json gives. `as` names the entry (the zoo's id for the published
 * models it lists; the row's own name for a published run's decoder).
 */
export function publishedZooEntry(
  a: LlmArchitecture,
  seqLen: number,
  as: PublishedAs = { id: a.model, name: a.model, batchSizes: [1] },
): ZooEntry | string {
  if (!a.layers || !a.hidden || !a.heads || !a.ffnHidden)
    return 'architecture not published (layers, hidden, heads or FFN size missing)';
  const latent = latentAttentionOf(a);
  if (typeof latent === 'string') return latent;
  const moe = moeOf(a);
  if (typeof moe === 'string') return moe;
  const vocab = a.vocab ?? tokenizerVocab(a.model);
  if (vocab === null) return 'vocabulary not published and not in measurements/llm_vocab.json';
  const gated = a.gatedMlp;
  const gptConfig = !gated && /class GPTConfig\d/.test(a.source);
  const extra = modelExtra(a.model);
  const window = attentionWindowOf(extra, a.layers);
  const learnedPositions = gptConfig || /^learned/i.test(a.position);
  return {
    id: as.id,
    name: as.name,
    family: 'decoder',
    batchElement: 'sequence',
    throughputUnit: 'tokens/s',
    unitsPerBatchElement: 'seqLen',
    seqLen,
    optimizer: 'adam',
    batchSizes: as.batchSizes,
    source: `seeds/measurements/llm_models.csv (${a.source})${as.seqLenSource ? `; ${as.seqLenSource}` : ''}`,
    arch: {
      layers: a.layers,
      hidden: a.hidden,
      heads: a.heads,
      kvHeads: a.kvHeads ?? a.heads,
      ...(a.headDim && a.headDim * a.heads !== a.hidden ? { headDim: a.headDim } : {}),
      ffn: a.ffnHidden,
      vocab,
      norm: gated ? 'rmsnorm' : 'layernorm',
      mlp: gated ? 'swiglu' : 'gelu',
      positions: learnedPositions ? 'learned' : 'rotary',
      ...(learnedPositions ? { maxPositions: seqLen } : {}),
      bias: gptConfig || !!extra?.linearBiases,
      tiedHead: a.tiedEmbeddings,
      dropout: false,
      ...(window ?? {}),
      ...(moe ? { moe } : {}),
      ...(latent ? { latentAttention: latent } : {}),
    },
  };
}

/**
 * Multi-head latent attention's sizes, from the row's attention column as NeMo's config gives them
 * ("MLA (q_lora_rank=1536, kv_lora_rank=512, qk_head_dim=128, qk_pos_emb_head_dim=64, v_head_dim=128)");
 * null for any other attention, or why they cannot be read.
 */
function latentAttentionOf(a: LlmArchitecture): LatentAttentionArch | null | string {
  if (!/^MLA\b/i.test(a.attention)) return null;
  const field = (name: string) => {
    const m = new RegExp(`\\b${name}\\s*=\\s*(\\d+)`).exec(a.attention);
    return m ? Number(m[1]) : null;
  };
  const sizes = {
    qLoraRank: field('q_lora_rank'),
    kvLoraRank: field('kv_lora_rank'),
    qkHeadDim: field('qk_head_dim'),
    qkRopeHeadDim: field('qk_pos_emb_head_dim'),
    vHeadDim: field('v_head_dim'),
  };
  if (Object.values(sizes).some((v) => v === null))
    return `multi-head latent attention without all of its sizes in "${a.attention}"`;
  return sizes as LatentAttentionArch;
}

/**
 * The experts an architecture row describes (null = dense), or why they cannot be built. Mixtral's
 * NeMo config has no separate expert width: its ffn_hidden is the expert's. moe_layer_freq is read
 * in the one form the rows use, "[0] * k + [1] * n" (the first k layers dense).
 */
function moeOf(a: LlmArchitecture): MoeArch | null | string {
  if ((a.experts ?? 1) <= 1) return null;
  if (!a.expertsTopK) return 'mixture of experts without a stated top-k';
  let denseLayers = 0;
  if (a.moeLayerFreq.trim() !== '') {
    const m = /^\s*\[0\]\s*\*\s*(\d+)\s*\+\s*\[1\]\s*\*\s*(\d+)\s*$/.exec(a.moeLayerFreq);
    if (!m || Number(m[1]) + Number(m[2]) !== a.layers)
      return `moe_layer_freq "${a.moeLayerFreq}" is not read (expected "[0] * k + [1] * n" over the layers)`;
    denseLayers = Number(m[1]);
  }
  return {
    experts: a.experts!,
    topK: a.expertsTopK,
    ffn: a.moeFfnHidden ?? a.ffnHidden!,
    ...(a.sharedExpertFfn ? { sharedFfn: a.sharedExpertFfn } : {}),
    ...(denseLayers > 0 ? { denseLayers } : {}),
  };
}

/**
 * The sequence length a published model is asked at by default: the one models.json states, else
 * the length most of its published runs trained (the longer on a tie), which is where its answers
 * have the most evidence behind them; and where that number comes from.
 */
export function publishedSeqLen(m: PublishedZooModel): { seqLen: number; source: string } | string {
  if (m.seqLen)
    return {
      seqLen: m.seqLen,
      source: `default sequence length ${m.seqLen}: ${m.seqLenSource ?? 'models.json'}`,
    };
  const counts = new Map<number, number>();
  for (const r of loadLlmRuns())
    if (r.model === m.architecture && r.seqLen) counts.set(r.seqLen, (counts.get(r.seqLen) ?? 0) + 1);
  const [best] = [...counts].sort((a, b) => b[1] - a[1] || b[0] - a[0]);
  if (!best) return `no sequence length stated and no published run of ${m.architecture} to take one from`;
  const runs = [...counts.values()].reduce((s, n) => s + n, 0);
  return {
    seqLen: best[0],
    source: `default sequence length ${best[0]}: the length ${best[1]} of its ${runs} published runs trained (llm_train.csv)`,
  };
}

/** The zoo entry of one models.json `published` model; throws on one that cannot be built (the data is ours). */
export function zooEntryOfPublished(m: PublishedZooModel, seqLen?: number): ZooEntry {
  const a = loadLlmArchitectures().find((x) => x.model === m.architecture);
  if (!a)
    throw new Error(`models.json ${m.id}: architecture "${m.architecture}" is not a row of llm_models.csv`);
  const length = publishedSeqLen(m);
  if (typeof length === 'string') throw new Error(`models.json ${m.id}: ${length}`);
  const entry = publishedZooEntry(a, seqLen ?? length.seqLen, {
    id: m.id,
    name: m.name,
    batchSizes: m.batchSizes,
    seqLenSource: length.source,
  });
  if (typeof entry === 'string') throw new Error(`models.json ${m.id}: ${entry}`);
  return entry;
}
