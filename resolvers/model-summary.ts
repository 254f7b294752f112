// Models users bring, through the API: ModelInput -> the import library (predictor/import/), with
// every size limit checked first and every failure a BAD_USER_INPUT naming the field; and
// `modelSummary`, which shows what the predictor sees of a zoo or custom model.
import { Arg, Int, Query, Resolver } from 'type-graphql';
import { InputError } from '../predictor/input-error.js';
import { importModel, IMPORT_LIMITS, type ImportedModel } from '../predictor/import/index.js';
import { activationBytesPerSampleOn } from '../predictor/memory.js';
import { parallelStructure } from '../predictor/parallel.js';
import { costOf } from '../predictor/predict.js';
import type { ModelDef, Precision } from '../predictor/types.js';
import { getModel, loadZoo } from '../predictor/zoo/index.js';
import { ModelInput, ModelSummary } from '../schema/custom-model.js';
import { PrecisionEnum } from '../schema/types.js';
import { asGraphQLError, badInput, integer } from './validate.js';
import { modelView } from './views.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A custom model from its GraphQL input; `field` is where it sits (e.g. 'workload.customModel'). */
export function customModel(
  input: ModelInput,
  field: string,
  seqLen: number | undefined,
  seqLenField: string,
): ImportedModel {
  let onnx: Uint8Array | undefined;
  if (input.onnxBase64 != null) {
    const f = `${field}.onnxBase64`;
    const text = input.onnxBase64.replace(/\s+/g, '');
    if (text.length > IMPORT_LIMITS.onnxBase64Chars)
      throw badInput(
        f,
        `is ${text.length} characters; at most ${IMPORT_LIMITS.onnxBase64Chars} (export the weights as external data: only the graph and the initializers' shapes are read)`,
      );
    if (text.length === 0 || text.length % 4 === 1 || !BASE64.test(text))
      throw badInput(f, 'is not base64 (A-Z, a-z, 0-9, +, / and = padding)');
    onnx = Buffer.from(text, 'base64');
  }
  if (input.huggingFaceConfig != null && input.huggingFaceConfig.length > IMPORT_LIMITS.configChars) {
    throw badInput(
      `${field}.huggingFaceConfig`,
      `is ${input.huggingFaceConfig.length} characters; at most ${IMPORT_LIMITS.configChars}`,
    );
  }
  if (input.layers != null && input.layers.length > IMPORT_LIMITS.layers) {
    throw badInput(
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
  try {
    return importModel(
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
  } catch (e) {
    throw asGraphQLError(e);
  }
}

/** A zoo model (at `seqLen` when given) or a custom one; exactly one of the two. */
export function resolveModel(
  id: string | null | undefined,
  custom: ModelInput | null | undefined,
  seqLen: number | null | undefined,
  fields: { model: string; customModel: string; seqLen: string },
): ImportedModel {
  const s = seqLen == null ? undefined : integer(fields.seqLen, seqLen, 1, IMPORT_LIMITS.seqLen);
  if ((id == null) === (custom == null))
    throw badInput(fields.model, `give exactly one of ${fields.model} (a zoo id) or ${fields.customModel}`);
  if (custom != null) return customModel(custom, fields.customModel, s, fields.seqLen);
  const zoo = getModel(id!, s === undefined ? undefined : { seqLenOrImageSize: s });
  if (!zoo) {
    const ids = loadZoo().map((m) => m.id);
    throw badInput(
      fields.model,
      `unknown model "${id!.slice(0, 80)}"; allowed: ${ids.slice(0, 12).join(', ')}, ... (${ids.length} in all; see the query models), or give ${fields.customModel}`,
    );
  }
  if (s !== undefined && zoo.seqLen === undefined && zoo.imageSize === undefined)
    throw badInput(fields.seqLen, `${zoo.id} has no sequence length or image size to set`);
  return { model: zoo, notes: [], unsupported: [] };
}

const GIB = 2 ** 30;

export function summaryOf(
  m: ModelDef,
  imported: Pick<ImportedModel, 'notes' | 'unsupported'>,
  precision: Precision,
): ModelSummary {
  const view = modelView(m);
  const cost = costOf(m);
  const s = parallelStructure(cost, m.layers);
  return {
    id: m.id,
    name: m.name,
    family: m.family,
    source: m.source,
    batchElement: m.batchElement,
    throughputUnit: m.throughputUnit,
    unitsPerBatchElement: m.unitsPerBatchElement,
    seqLen: m.seqLen,
    imageSize: m.imageSize,
    optimizer: m.optimizer,
    parameters: view.parameters,
    forwardFlopsPerSample: view.forwardFlopsPerSample,
    backwardFlopsPerSample: view.backwardFlopsPerSample,
    layerCount: view.layerCount,
    layersByType: view.layersByType,
    activationElementsPerSample: cost.activationElements,
    precision,
    activationGbPerSample: activationBytesPerSampleOn(cost, precision, 1, 'none') / GIB,
    activationGbPerSampleSelective: activationBytesPerSampleOn(cost, precision, 1, 'selective') / GIB,
    transformerBlocks: s.attentionCore.some(Boolean) ? s.blocks : 0,
    attentionHeads: s.heads,
    tensorParallelizable: s.tensorParallelizable,
    unsupportedOperators: imported.unsupported,
    notes: imported.notes,
  };
}

@Resolver()
export class ModelSummaryResolver {
  @Query(() => ModelSummary, {
    description:
      'What the predictor sees of a zoo model or a model you bring (Hugging Face config, ONNX graph, layer list): parameters, FLOPs and activations per sample, layers by type, transformer structure, and operators it could not cost.',
  })
  modelSummary(
    @Arg('model', () => String, { nullable: true, description: 'A zoo model id; or give customModel.' })
    model?: string,
    @Arg('customModel', () => ModelInput, {
      nullable: true,
      description: 'A model that is not in the zoo; or give model.',
    })
    custom?: ModelInput,
    @Arg('seqLen', () => Int, { nullable: true, description: 'Sequence length (or image size).' })
    seqLen?: number,
    @Arg('precision', () => PrecisionEnum, {
      defaultValue: 'AMP_BF16',
      description: 'Precision the activation memory is counted at.',
    })
    precision: Precision = 'AMP_BF16',
  ): ModelSummary {
    try {
      const imported = resolveModel(model, custom, seqLen, {
        model: 'model',
        customModel: 'customModel',
        seqLen: 'seqLen',
      });
      return summaryOf(imported.model, imported, precision);
    } catch (e) {
      throw e instanceof InputError ? asGraphQLError(e) : e;
    }
  }
}
