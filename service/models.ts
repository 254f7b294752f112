// Models users bring, from a request: a zoo id (at a sequence length when given) or a custom model
// (Hugging Face config, ONNX graph as base64, layer list) -> the import library (predictor/import/),
// with every size limit checked first and every failure an InputError naming the field.
import { importModel, IMPORT_LIMITS, type ImportedModel } from '../predictor/import/index.js';
import { costOf } from '../predictor/predict.js';
import type { ModelDef, OptimizerKind } from '../predictor/types.js';
import { getModel, loadZoo } from '../predictor/zoo/index.js';
import { InputError, integer } from './validate.js';

/** A custom model as a request gives it (the GraphQL ModelInput has this shape). */
export interface CustomModelInput {
  name?: string | null;
  huggingFaceConfig?: string | null;
  onnxBase64?: string | null;
  /** Layers in the zoo's vocabulary, flat: fields a layer type does not take are null or absent. */
  layers?: object[] | null;
  optimizer?: OptimizerKind | null;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A custom model from its GraphQL input; `field` is where it sits (e.g. 'workload.customModel'). */
export function customModel(
  input: CustomModelInput,
  field: string,
  seqLen: number | undefined,
  seqLenField: string,
): ImportedModel {
  let onnx: Uint8Array | undefined;
  if (input.onnxBase64 != null) {
    const f = `${field}.onnxBase64`;
    const text = input.onnxBase64.replace(/\s+/g, '');
    if (text.length > IMPORT_LIMITS.onnxBase64Chars)
      throw new InputError(
        f,
        `is ${text.length} characters; at most ${IMPORT_LIMITS.onnxBase64Chars} (export the weights as external data: only the graph and the initializers' shapes are read)`,
      );
    if (text.length === 0 || text.length % 4 === 1 || !BASE64.test(text))
      throw new InputError(f, 'is not base64 (A-Z, a-z, 0-9, +, / and = padding)');
    onnx = Buffer.from(text, 'base64');
  }
  if (input.huggingFaceConfig != null && input.huggingFaceConfig.length > IMPORT_LIMITS.configChars) {
    throw new InputError(
      `${field}.huggingFaceConfig`,
      `is ${input.huggingFaceConfig.length} characters; at most ${IMPORT_LIMITS.configChars}`,
    );
  }
  if (input.layers != null && input.layers.length > IMPORT_LIMITS.layers) {
    throw new InputError(
      `${field}.layers`,
      `lists ${input.layers.length} layers; at most ${IMPORT_LIMITS.layers} (repeat identical layers with count)`,
    );
  }
  // GraphQL's flat LayerInput -> the vocabulary's shapes: nulls dropped, one-value kernel/padding lists unwrapped.
  const layers = input.layers?.map((l) =>
    Object.fromEntries(
      Object.entries(l)
        .filter(([, v]) => v !== null && v !== undefined)
        .map(([k, v]) => [
          k,
          (k === 'kernel' || k === 'padding') && Array.isArray(v) && v.length === 1 ? v[0] : v,
        ]),
    ),
  );
  const imported = importModel(
    { huggingFaceConfig: input.huggingFaceConfig ?? undefined, onnx, layers: layers ?? undefined },
    {
      field,
      fieldOf: (form) => `${field}.${form === 'onnx' ? 'onnxBase64' : form}`,
      seqLen,
      seqLenField,
      name: input.name ?? undefined,
      optimizer: input.optimizer ?? undefined,
    },
  );
  checkCosts(
    imported.model,
    `${field}.${input.onnxBase64 != null ? 'onnxBase64' : input.layers != null ? 'layers' : 'huggingFaceConfig'}`,
  );
  return imported;
}

/** Per-layer quantities a model must have as finite, non-negative numbers (what predict multiplies). */
const COST_FIELDS = [
  'forwardFlops',
  'backwardFlops',
  'parameters',
  'inputElements',
  'outputElements',
] as const;

/**
 * A custom model whose costs are negative or not finite (a stride of 0, dimensions whose product
 * overflows) would give confident nonsense or Infinity downstream: refused here, naming the layer.
 */
function checkCosts(model: ModelDef, field: string): void {
  const cost = costOf(model);
  for (const layer of cost.layers)
    for (const k of COST_FIELDS) {
      const v = layer[k];
      if (!Number.isFinite(v) || v < 0)
        throw new InputError(
          field,
          `layer "${layer.name.slice(0, 80)}" (${layer.type}) has ${k} ${v}: its dimensions, strides or counts are out of range`,
        );
    }
  for (const k of ['parameters', 'forwardFlops', 'backwardFlops', 'activationElements'] as const)
    if (!Number.isFinite(cost[k]) || cost[k] < 0 || cost[k] > Number.MAX_SAFE_INTEGER * 1e6)
      throw new InputError(
        field,
        `the model's ${k} (${cost[k]}) is out of range: its dimensions are too large`,
      );
  // A graph whose weights are all missing or zero-sized (found by the malformed-graph fuzz) has
  // nothing to train: answering it would plan a job of 0 parameters and 0 FLOPs.
  for (const k of ['parameters', 'forwardFlops'] as const)
    if (cost[k] === 0)
      throw new InputError(
        field,
        `the model has 0 ${k === 'parameters' ? 'trainable parameters' : 'forward FLOPs'}: no layer with a weight of nonzero size was found (missing or zero-sized initializers?)`,
      );
}

/** A zoo model (at `seqLen` when given) or a custom one; exactly one of the two. */
export function resolveModel(
  id: string | null | undefined,
  custom: CustomModelInput | null | undefined,
  seqLen: number | null | undefined,
  fields: { model: string; customModel: string; seqLen: string },
): ImportedModel {
  if ((id == null) === (custom == null))
    throw new InputError(
      fields.model,
      `give exactly one of ${fields.model} (a zoo id) or ${fields.customModel}`,
    );
  if (custom != null) {
    const s = seqLen == null ? undefined : integer(fields.seqLen, seqLen, 1, IMPORT_LIMITS.seqLen);
    return customModel(custom, fields.customModel, s, fields.seqLen);
  }
  return {
    model: zooModel(id!, seqLen, fields, `, or give ${fields.customModel}`),
    notes: [],
    unsupported: [],
  };
}

/**
 * A zoo model by id, at `seqLen` (sequence length or image size) when given: the one place that
 * checks both, for every input that names a zoo model (`fields` name them in errors; `orElse`
 * ends the unknown-id message with what else the input takes).
 */
export function zooModel(
  id: string,
  seqLen: number | null | undefined,
  fields: { model: string; seqLen: string },
  orElse = '',
): ModelDef {
  const s = seqLen == null ? undefined : integer(fields.seqLen, seqLen, 1, IMPORT_LIMITS.seqLen);
  const zoo = getModel(id, s === undefined ? undefined : { seqLenOrImageSize: s });
  if (!zoo) {
    const ids = loadZoo().map((m) => m.id);
    throw new InputError(
      fields.model,
      `unknown model "${id.slice(0, 80)}"; allowed: ${ids.slice(0, 12).join(', ')}, ... (${ids.length} in all; see the query models)${orElse}`,
    );
  }
  if (s !== undefined && zoo.seqLen === undefined && zoo.imageSize === undefined)
    throw new InputError(fields.seqLen, `${zoo.id} has no sequence length or image size to set`);
  return zoo;
}
