// Models users bring: a Hugging Face config.json, an ONNX graph, or a layer list in the zoo's
// vocabulary, each turned into the ModelDef the predictor already understands. The API passes the
// contents (service/models.ts); the CLI passes file paths (loadModelFile).
import { readFileSync, statSync } from 'node:fs';
import { extname } from 'node:path';
import { InputError } from '../input-error.js';
import type { ModelDef } from '../types.js';
import { fromHuggingFaceConfig, parseHuggingFaceConfig } from './huggingface.js';
import { fromLayerList } from './layer-list.js';
import { fromOnnx } from './onnx-graph.js';
import { IMPORT_LIMITS, type ImportedModel, type ImportOptions } from './types.js';

export { HF_MODEL_TYPES, fromHuggingFaceConfig, parseHuggingFaceConfig } from './huggingface.js';
export { LAYER_FIELDS, LAYER_TYPES, checkLayer, fromLayerList } from './layer-list.js';
export { fromOnnx } from './onnx-graph.js';
export { IMPORT_LIMITS, type ImportedModel, type ImportOptions, type UnsupportedOperator } from './types.js';

/** One of the three forms (exactly one must be given). */
export interface ModelSource {
  /** config.json: its text, or the parsed object. */
  huggingFaceConfig?: string | object;
  /** The bytes of a .onnx file. */
  onnx?: Uint8Array;
  /** A layer list: an array of layers, or an object with `layers` and metadata. */
  layers?: unknown;
}

/** `fieldOf(form)` names each form in errors (e.g. 'workload.customModel.onnxBase64'). */
export function importModel(
  src: ModelSource,
  o: ImportOptions & { fieldOf?: (form: keyof ModelSource) => string; field?: string } = {},
): ImportedModel {
  const forms = (['huggingFaceConfig', 'onnx', 'layers'] as const).filter(
    (k) => src[k] !== undefined && src[k] !== null,
  );
  const field = o.field ?? 'customModel';
  if (forms.length !== 1)
    throw new InputError(
      field,
      `give exactly one of huggingFaceConfig, onnxBase64 or layers (got ${forms.length ? forms.join(', ') : 'none'})`,
    );
  const form = forms[0];
  const opts = { ...o, field: o.fieldOf?.(form) ?? `${field}.${form}` };
  switch (form) {
    case 'huggingFaceConfig':
      return typeof src.huggingFaceConfig === 'string'
        ? parseHuggingFaceConfig(src.huggingFaceConfig, opts)
        : fromHuggingFaceConfig(src.huggingFaceConfig, opts);
    case 'onnx':
      return fromOnnx(src.onnx!, opts);
    case 'layers':
      return fromLayerList(src.layers, opts);
  }
}

const fileCache = new Map<string, { mtimeMs: number; size: number; imported: ImportedModel }>();

/**
 * A model file: `.onnx` (an ONNX graph), or `.json` holding a Hugging Face config (it has a
 * "model_type") or a layer list (an array, or an object with "layers"). Cached per path, size,
 * modification time and options.
 */
export function loadModelFile(path: string, o: ImportOptions = {}): ImportedModel {
  const field = o.field ?? 'model';
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new InputError(field, `no such model file "${path}" (and not a zoo model id)`);
  }
  if (!st.isFile()) throw new InputError(field, `"${path}" is not a file`);
  const onnx = extname(path).toLowerCase() === '.onnx';
  const limit = onnx ? IMPORT_LIMITS.onnxBytes : IMPORT_LIMITS.configChars * 10;
  if (st.size > limit)
    throw new InputError(
      field,
      `"${path}" is ${st.size} bytes; at most ${limit}${onnx ? ' (export the weights as external data)' : ''}`,
    );
  const key = `${path}\u0000${JSON.stringify(o)}`;
  const hit = fileCache.get(key);
  if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.imported;
  const opts = { ...o, field, name: o.name ?? path };
  let imported: ImportedModel;
  if (onnx) imported = fromOnnx(readFileSync(path), opts);
  else {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(path, 'utf8'));
    } catch (e) {
      throw new InputError(
        field,
        `"${path}" is neither .onnx nor JSON: ${(e as Error).message.slice(0, 160)}`,
      );
    }
    const isConfig =
      typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && 'model_type' in parsed;
    imported = isConfig ? fromHuggingFaceConfig(parsed, opts) : fromLayerList(parsed, opts);
  }
  fileCache.set(key, { mtimeMs: st.mtimeMs, size: st.size, imported });
  return imported;
}

/** True when a predict-csv `model` cell names a file rather than a zoo id. */
export const looksLikeModelFile = (s: string) =>
  /\.(onnx|json)$/i.test(s) || s.includes('/') || s.includes('\\');

/**
 * Factor from a custom model's throughput unit to a measurement row's: the same unit, or a count of
 * batch elements ("sequences/s", "samples/s", "images/s") against a model counted in units per element.
 */
export function customUnitFactor(model: ModelDef, rowUnit: string): number | string {
  const unit = rowUnit.replace(/\s*\(.*$/, '').trim();
  if (!unit || unit === model.throughputUnit) return 1;
  if (['sequences/s', 'samples/s', 'images/s', 'items/s'].includes(unit))
    return 1 / model.unitsPerBatchElement;
  if (unit === 'tokens/s' && model.batchElement === 'sequence' && model.seqLen)
    return model.seqLen / model.unitsPerBatchElement;
  return `row unit "${rowUnit}" is not this model's unit (${model.throughputUnit})`;
}
