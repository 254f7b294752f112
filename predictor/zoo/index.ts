// The model zoo: seeds/models.json (the numbers, with their sources) turned into ModelDefs by
// one builder per family. Built once and cached; variants at another sequence length or image
// size are built on demand (measurements quote e.g. BERT pre-training at 128 and 512 tokens).
import { loadPublishedZooModels, loadZooEntries } from '../../seeds/catalog.js';
import type { ModelDef } from '../types.js';
import { buildBert } from './bert.js';
import { buildConvNet } from './convnet.js';
import { buildDecoder } from './decoder.js';
import { buildEfficientNet } from './efficientnet.js';
import { buildGnmt } from './gnmt.js';
import { buildMaskRcnn } from './maskrcnn.js';
import { buildNcf } from './ncf.js';
import { buildResNet } from './resnet.js';
import { zooEntryOfPublished } from './published.js';
import { seqLenOf, type Builder, type ZooEntry } from './spec.js';
import { buildSsd } from './ssd.js';
import { buildT5 } from './t5.js';
import { buildTacotron2 } from './tacotron2.js';
import { buildTransformer } from './transformer.js';
import { buildTransformerXL } from './transformerxl.js';
import { buildVit } from './vit.js';
import { buildWaveGlow } from './waveglow.js';

export type { ZooEntry } from './spec.js';

const BUILDERS: Record<string, Builder> = {
  resnet: buildResNet,
  alexnet: buildConvNet,
  vgg: buildConvNet,
  inception: buildConvNet,
  efficientnet: buildEfficientNet,
  ssd: buildSsd,
  maskrcnn: buildMaskRcnn,
  bert: buildBert,
  decoder: buildDecoder,
  vit: buildVit,
  transformer: buildTransformer,
  transformerxl: buildTransformerXL,
  gnmt: buildGnmt,
  ncf: buildNcf,
  tacotron2: buildTacotron2,
  waveglow: buildWaveGlow,
  t5: buildT5,
};

export const ZOO_FAMILIES = Object.keys(BUILDERS);

/** One entry -> the predictor's ModelDef. */
export function modelFromZooEntry(entry: ZooEntry): ModelDef {
  const build = BUILDERS[entry.family];
  if (!build)
    throw new Error(
      `models.json ${entry.id}: no builder for family "${entry.family}" (have ${ZOO_FAMILIES.join(', ')})`,
    );
  if (!entry.batchSizes?.length) throw new Error(`models.json ${entry.id}: batchSizes is empty`);
  const units = entry.unitsPerBatchElement === 'seqLen' ? seqLenOf(entry) : entry.unitsPerBatchElement;
  return {
    id: entry.id,
    name: entry.name,
    family: entry.family,
    batchElement: entry.batchElement,
    throughputUnit: entry.throughputUnit,
    unitsPerBatchElement: units,
    ...(entry.seqLen !== undefined ? { seqLen: entry.seqLen } : {}),
    ...(entry.imageSize !== undefined ? { imageSize: entry.imageSize } : {}),
    optimizer: entry.optimizer,
    batchSizes: entry.batchSizes,
    source: entry.source,
    ...(entry.attention ? { attention: entry.attention } : {}),
    layers: build(entry),
  };
}

/**
 * A zoo model's entry: the one models.json states, or for a published decoder (models.json
 * `published`) the one its llm_models.csv row describes, at `seqLen` where given.
 */
function zooEntry(id: string, seqLen?: number): ZooEntry | undefined {
  const stated = loadZooEntries().find((e) => e.id === id);
  if (stated) return seqLen === undefined ? stated : { ...stated, seqLen };
  const published = loadPublishedZooModels().find((m) => m.id === id);
  return published && zooEntryOfPublished(published, seqLen);
}

let zoo: ModelDef[] | undefined;

/** Every zoo model: models.json's own entries, then the published decoders it lists. */
export function loadZoo(): ModelDef[] {
  return (zoo ??= [
    ...loadZooEntries().map(modelFromZooEntry),
    ...loadPublishedZooModels().map((m) => modelFromZooEntry(zooEntryOfPublished(m))),
  ]);
}

export interface ZooOverrides {
  /** A measurement's seq_len_or_image_size: replaces seqLen, or imageSize for image models. */
  seqLenOrImageSize?: number;
  /** Hyper-parameters overlaid on the entry's arch (a source's scripts ran the model so). */
  arch?: Record<string, unknown>;
}

const variants = new Map<string, ModelDef>();

/**
 * A zoo model, optionally rebuilt at another sequence length / image size or with some of its
 * hyper-parameters replaced. Models with no length (GNMT, NCF, Tacotron2, the token-batched
 * Transformer) ignore a length.
 */
export function getModel(id: string, overrides?: ZooOverrides): ModelDef | undefined {
  const base = loadZoo().find((m) => m.id === id);
  if (!base) return undefined;
  const sized = base.seqLen !== undefined || base.imageSize !== undefined;
  const given = overrides?.seqLenOrImageSize;
  const size = sized && given !== undefined && given !== (base.seqLen ?? base.imageSize) ? given : undefined;
  const arch = overrides?.arch && Object.keys(overrides.arch).length ? overrides.arch : undefined;
  if (size === undefined && !arch) return base;
  if (size !== undefined && !(Number.isFinite(size) && size > 0))
    throw new Error(`getModel(${id}): seqLenOrImageSize must be a positive number, got ${size}`);
  const key = `${id}@${size ?? ''}@${arch ? JSON.stringify(arch) : ''}`;
  let model = variants.get(key);
  if (!model) {
    let entry = zooEntry(id, size !== undefined && base.seqLen !== undefined ? size : undefined)!;
    if (size !== undefined && base.seqLen === undefined) entry = { ...entry, imageSize: size };
    if (arch) entry = { ...entry, arch: { ...entry.arch, ...arch } };
    model = modelFromZooEntry(entry);
    variants.set(key, model);
  }
  return model;
}
