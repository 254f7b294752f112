// A plain layer list in the zoo's own vocabulary (predictor/types.ts `Layer`), checked field by
// field: every layer's type, the dimensions it requires, and nothing it does not know. Either a bare
// array of layers or an object { layers, name?, batchElement?, throughputUnit?, unitsPerBatchElement?,
// seqLen?, imageSize?, optimizer?, batchSizes? }. Dimensions are per sample, as in the zoo.
import { createHash } from 'node:crypto';
import { InputError, shownValue } from '../input-error.js';
import { convOut } from '../layers.js';
import type { Layer, LayerType, ModelDef, OptimizerKind, SampleUnit } from '../types.js';
import { IMPORT_LIMITS, type ImportedModel, type ImportOptions } from './types.js';
import { ATTENTION_IMPLEMENTATIONS } from '../../seeds/types.js';

/**
 * 'int' >= 1, 'int0' >= 0 (dimensions), 'size' a positive count per sample that may be an average
 * (Transformer-XL's adaptive-softmax clusters see 4.8 tokens per sample), up to IMPORT_LIMITS.elements;
 * 'experts' 2 to IMPORT_LIMITS.experts (one expert is a plain linear).
 */
type Kind = 'int' | 'int0' | 'size' | 'bool' | 'pair' | 'pair0' | 'experts' | readonly string[];
interface Spec {
  required: Record<string, Kind>;
  optional: Record<string, Kind>;
}

const NORMS = ['batchnorm', 'layernorm', 'rmsnorm', 'groupnorm', 'frozen_batchnorm'] as const;
const ACTIVATIONS = ['relu', 'gelu', 'gelu_new', 'silu', 'sigmoid', 'tanh', 'swish'] as const;
const ELEMENTWISE = ['add', 'mul', 'dropout', 'scale', 'rotary', 'copy', 'combine'] as const;

/** What each layer type takes ('pair': an int or [h, w]). */
export const LAYER_FIELDS: Record<LayerType, Spec> = {
  conv2d: {
    required: { inC: 'int', outC: 'int', kernel: 'pair', inH: 'int', inW: 'int' },
    optional: { stride: 'int', padding: 'pair0', groups: 'int', bias: 'bool' },
  },
  conv1d: {
    required: { inC: 'int', outC: 'int', kernel: 'int', inL: 'int' },
    optional: { stride: 'int', padding: 'int0', dilation: 'int', groups: 'int', bias: 'bool', steps: 'int' },
  },
  linear: {
    required: { inFeatures: 'int', outFeatures: 'int' },
    optional: {
      tokens: 'size',
      bias: 'bool',
      tied: 'bool',
      steps: 'int',
      experts: 'experts',
      router: 'bool',
      projections: 'int',
    },
  },
  matmul: {
    required: { m: 'int', n: 'int', k: 'int' },
    optional: { batches: 'int', causal: 'bool', sharedRight: 'bool' },
  },
  embedding: { required: { vocab: 'int0', dim: 'int', tokens: 'size' }, optional: {} },
  norm: { required: { kind: NORMS, channels: 'int', elements: 'size' }, optional: {} },
  activation: { required: { kind: ACTIVATIONS, elements: 'size' }, optional: {} },
  elementwise: { required: { kind: ELEMENTWISE, elements: 'size' }, optional: { inputs: 'size' } },
  softmax: { required: { elements: 'size' }, optional: {} },
  pool: {
    required: {
      kind: ['max', 'avg', 'global_avg'],
      channels: 'int',
      inH: 'int',
      inW: 'int',
      kernel: 'int',
      stride: 'int',
    },
    optional: { padding: 'int0' },
  },
  rnn: {
    required: { cell: ['lstm', 'gru'], inputSize: 'int', hiddenSize: 'int', steps: 'int' },
    optional: { bidirectional: 'bool', stepwiseInput: 'bool' },
  },
  loss: { required: { elements: 'size' }, optional: { kind: ['log_softmax_nll'] } },
};
const COMMON: Record<string, Kind> = { count: 'int', frozen: 'bool', sameInputAs: 'int' };
export const LAYER_TYPES = Object.keys(LAYER_FIELDS) as LayerType[];
const SAMPLE_UNITS: SampleUnit[] = [
  'image',
  'sequence',
  'token',
  'sample',
  'audio_sample',
  'mel_frame',
  'user',
];
const OPTIMIZERS: OptimizerKind[] = ['sgd', 'adam', 'lamb'];

function checkValue(v: unknown, kind: Kind, where: string, fail: (m: string) => never): unknown {
  const max = IMPORT_LIMITS.dimension;
  const isInt = (x: unknown, min: number) =>
    typeof x === 'number' && Number.isInteger(x) && x >= min && x <= max;
  if (Array.isArray(kind)) {
    if (typeof v !== 'string' || !kind.includes(v))
      fail(`${where} must be one of ${kind.join(', ')} (got ${shownValue(v)})`);
    return v;
  }
  switch (kind) {
    case 'int':
    case 'int0':
      if (!isInt(v, kind === 'int' ? 1 : 0))
        fail(`${where} must be an integer from ${kind === 'int' ? 1 : 0} to ${max} (got ${shownValue(v)})`);
      return v;
    case 'experts':
      if (!isInt(v, 2) || (v as number) > IMPORT_LIMITS.experts)
        fail(
          `${where} must be an integer from 2 to ${IMPORT_LIMITS.experts} (got ${shownValue(v)}; one expert is a plain linear: leave it out)`,
        );
      return v;
    case 'size':
      if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > IMPORT_LIMITS.elements)
        fail(`${where} must be a positive number up to ${IMPORT_LIMITS.elements} (got ${shownValue(v)})`);
      return v;
    case 'bool':
      if (typeof v !== 'boolean') fail(`${where} must be true or false (got ${shownValue(v)})`);
      return v;
    case 'pair':
    case 'pair0': {
      const min = kind === 'pair' ? 1 : 0;
      if (isInt(v, min)) return v;
      if (Array.isArray(v) && v.length === 2 && v.every((x) => isInt(x, min))) return v;
      return fail(`${where} must be an integer from ${min} or a pair [h, w] of them (got ${shownValue(v)})`);
    }
  }
  return fail(`${where}: unknown kind`);
}

/** One layer, checked; `where` names it in errors (e.g. 'layers[3]'). */
export function checkLayer(raw: unknown, where: string, fail: (m: string) => never): Layer {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    fail(`${where} must be an object with a "type"`);
  const obj = raw as Record<string, unknown>;
  const type = obj.type as LayerType;
  const spec = LAYER_FIELDS[type];
  if (typeof type !== 'string' || !spec)
    fail(`${where}.type must be one of ${LAYER_TYPES.join(', ')} (got ${shownValue(obj.type)})`);
  const out: Record<string, unknown> = { type };
  for (const [key, v] of Object.entries(obj)) {
    if (key === 'type' || v === null || v === undefined) continue;
    if (key === 'name') {
      if (typeof v !== 'string') fail(`${where}.name must be a string`);
      out.name = v.slice(0, 200);
      continue;
    }
    const kind = spec.required[key] ?? spec.optional[key] ?? COMMON[key];
    if (!kind)
      fail(
        `${where}: a ${type} layer has no field "${key}" (it takes ${[...Object.keys(spec.required), ...Object.keys(spec.optional), ...Object.keys(COMMON), 'name'].join(', ')})`,
      );
    out[key] = checkValue(v, kind, `${where}.${key}`, fail);
  }
  for (const key of Object.keys(spec.required))
    if (out[key] === undefined) fail(`${where}: a ${type} layer needs "${key}"`);
  const l = out as unknown as Layer;
  // Shapes that would make negative or fractional sizes.
  if (l.type === 'conv2d' || l.type === 'conv1d') {
    const g = l.groups ?? 1;
    if (l.inC % g !== 0 || l.outC % g !== 0)
      fail(`${where}: groups (${g}) must divide inC (${l.inC}) and outC (${l.outC})`);
  }
  if (l.type === 'conv2d') {
    const [kh, kw] = Array.isArray(l.kernel) ? l.kernel : [l.kernel, l.kernel];
    const [ph, pw] = Array.isArray(l.padding) ? l.padding : [l.padding ?? 0, l.padding ?? 0];
    if (convOut(l.inH, kh, l.stride ?? 1, ph) < 1 || convOut(l.inW, kw, l.stride ?? 1, pw) < 1)
      fail(`${where}: a ${kh}x${kw} kernel does not fit a ${l.inH}x${l.inW} input with padding ${ph}x${pw}`);
  }
  if (l.type === 'conv1d' && convOut(l.inL, l.kernel, l.stride ?? 1, l.padding ?? 0, l.dilation ?? 1) < 1)
    fail(`${where}: kernel ${l.kernel} does not fit inL ${l.inL}`);
  // A per-step layer spreads its rows (tokens, or the length) over the steps: at least one each.
  if (l.type === 'linear' && l.steps !== undefined && l.steps > (l.tokens ?? 1))
    fail(
      `${where}: steps (${l.steps}) must be at most tokens (${l.tokens ?? 1}): each step runs at least one row`,
    );
  // Experts are costed as one grouped GEMM over the routed tokens (layers.ts), which reads neither a
  // shared weight nor per-step rows; a router is a plain linear whose weight every rank keeps whole.
  if (l.type === 'linear' && l.experts !== undefined) {
    const other = (['router', 'tied', 'steps'] as const).find((k) => l[k] !== undefined && l[k] !== false);
    if (other)
      fail(
        `${where}: a linear with experts cannot also be ${other === 'router' ? 'a router' : `"${other}"`}`,
      );
  }
  if (l.type === 'conv1d' && l.steps !== undefined && l.steps > l.inL)
    fail(`${where}: steps (${l.steps}) must be at most inL (${l.inL}): each step runs at least one position`);
  if (
    l.type === 'pool' &&
    l.kind !== 'global_avg' &&
    (convOut(l.inH, l.kernel, l.stride, l.padding ?? 0) < 1 ||
      convOut(l.inW, l.kernel, l.stride, l.padding ?? 0) < 1)
  )
    fail(`${where}: pool kernel ${l.kernel} does not fit ${l.inH}x${l.inW}`);
  return l;
}

/** JSON.stringify's replacer that writes every object's keys in sorted order. */
const sortedKeys = (_key: string, value: unknown): unknown =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : value;

/** A layer list (array, or object with `layers` and metadata) -> ModelDef. */
export function fromLayerList(input: unknown, o: ImportOptions = {}): ImportedModel {
  const field = o.field ?? 'layers';
  const fail = (m: string): never => {
    throw new InputError(field, m);
  };
  const meta = (Array.isArray(input) ? {} : input) as Record<string, unknown>;
  if (typeof meta !== 'object' || meta === null) fail('must be a list of layers, or an object with "layers"');
  const list = Array.isArray(input) ? input : meta.layers;
  if (!Array.isArray(list) || list.length === 0) fail('must hold at least one layer');
  if ((list as unknown[]).length > IMPORT_LIMITS.layers)
    fail(
      `lists ${(list as unknown[]).length} layers; at most ${IMPORT_LIMITS.layers} (repeat identical layers with "count")`,
    );
  const layers = (list as unknown[]).map((l, i) => checkLayer(l, `[${i}]`, fail));
  layers.forEach((l, i) => {
    if (l.sameInputAs !== undefined && l.sameInputAs > i)
      fail(
        `[${i}].sameInputAs must be from 1 to ${i} (the layer that many before this one reads the same tensor; got ${l.sameInputAs})`,
      );
  });
  const notes: string[] = [];
  // Expert parallelism's all-to-all is counted per router followed by expert layers (parallel.ts).
  const firstExperts = layers.findIndex((l) => l.type === 'linear' && (l.experts ?? 1) > 1);
  if (firstExperts >= 0 && !layers.slice(0, firstExperts).some((l) => l.type === 'linear' && l.router))
    notes.push(
      `[${firstExperts}] has experts but no router linear comes before it: under expert parallelism no all-to-all is counted for experts without a router (mark the gating linear "router": true)`,
    );
  if (!layers.some((l) => l.type === 'loss')) {
    notes.push(
      "the list has no loss layer; training needs one, so a loss over the last layer's outputs was added",
    );
    const last = layers[layers.length - 1];
    const elements = Math.max(
      1,
      Math.round(last.type === 'linear' ? (last.tokens ?? 1) * last.outFeatures : 1),
    );
    layers.push({ type: 'loss', elements, name: 'loss (added)' });
  }
  const str = <T extends string>(key: string, allowed: readonly T[], dflt: T): T => {
    const v = meta[key];
    if (v === undefined || v === null) return dflt;
    if (typeof v !== 'string' || !allowed.includes(v as T))
      fail(`"${key}" must be one of ${allowed.join(', ')}`);
    return v as T;
  };
  const posInt = (key: string): number | undefined => {
    const v = meta[key];
    if (v === undefined || v === null) return undefined;
    return checkValue(v, 'int', `"${key}"`, fail) as number;
  };
  const seqLen = posInt('seqLen'),
    imageSize = posInt('imageSize');
  if (o.seqLen !== undefined && o.seqLen !== (seqLen ?? imageSize)) {
    throw new InputError(
      o.seqLenField ?? 'seqLen',
      `a layer list fixes its own sizes (${seqLen ?? imageSize ?? 'none given'}); scale its layers instead of setting seqLen`,
    );
  }
  const batchElement = str('batchElement', SAMPLE_UNITS, 'sample');
  const units = meta.unitsPerBatchElement === undefined ? 1 : meta.unitsPerBatchElement;
  if (typeof units !== 'number' || !(units > 0) || !Number.isFinite(units))
    fail('"unitsPerBatchElement" must be a positive number');
  const throughputUnit =
    typeof meta.throughputUnit === 'string'
      ? meta.throughputUnit.slice(0, 60)
      : `${batchElement === 'sample' ? 'samples' : `${batchElement}s`}/s`;
  const batchSizes =
    meta.batchSizes === undefined
      ? [8, 16, 32]
      : Array.isArray(meta.batchSizes) && meta.batchSizes.length > 0 && meta.batchSizes.length <= 32
        ? meta.batchSizes.map((b, i) => checkValue(b, 'int', `"batchSizes"[${i}]`, fail) as number)
        : fail('"batchSizes" must be a list of 1 to 32 positive integers');
  // How the list's code runs its attention cores (ModelDef.attention): "eager" where it writes the
  // scores to memory; absent, one fused kernel.
  const attention =
    meta.attention === undefined || meta.attention === null
      ? undefined
      : str('attention', ATTENTION_IMPLEMENTATIONS, 'fused');
  // The id names the layers, not how they were written: keys in one order, so a list read from a
  // file and the same list given over GraphQL (its schema's field order) are one model, and a run
  // recorded from one calibrates predictions of the other. A stated attention is part of it.
  const hash = createHash('sha1')
    .update(JSON.stringify(attention ? [layers, attention] : layers, sortedKeys))
    .digest('hex')
    .slice(0, 10);
  const model: ModelDef = {
    id: `layers:${hash}`,
    name:
      o.name ??
      (typeof meta.name === 'string' ? meta.name.slice(0, 200) : `layer list (${layers.length} layers)`),
    family: 'custom',
    batchElement,
    throughputUnit,
    unitsPerBatchElement: units as number,
    ...(seqLen !== undefined ? { seqLen } : {}),
    ...(imageSize !== undefined ? { imageSize } : {}),
    optimizer: o.optimizer ?? str('optimizer', OPTIMIZERS, 'adam'),
    batchSizes,
    source: 'user-supplied layer list',
    ...(attention ? { attention } : {}),
    layers,
  };
  return { model, notes, unsupported: [] };
}
