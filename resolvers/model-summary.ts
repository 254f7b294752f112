// `modelSummary`: what the predictor sees of a zoo model or a model users bring (the model itself
// comes from service/models.ts, which checks every size limit and names the field at fault).
import { Arg, Int, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { ImportedModel } from '../predictor/import/index.js';
import { activationBytesPerSampleOn, stackMemory } from '../predictor/memory.js';
import { parallelStructure } from '../predictor/parallel.js';
import { costOf } from '../predictor/predict.js';
import type { ModelDef, Precision } from '../predictor/types.js';
import { ModelInput, ModelSummary } from '../schema/custom-model.js';
import { PrecisionEnum } from '../schema/types.js';
import { resolveModel } from '../service/models.js';
import { loadEfficiency } from '../seeds/catalog.js';
import { BadUserInput, FiniteAnswer } from './errors.js';
import { modelView } from './views.js';

const GIB = 2 ** 30;

export function summaryOf(
  m: ModelDef,
  imported: Pick<ImportedModel, 'notes' | 'unsupported'>,
  precision: Precision,
): ModelSummary {
  const view = modelView(m);
  const cost = costOf(m);
  const s = parallelStructure(cost, m.layers);
  // What predict keeps on the default software stack (PYTORCH_EAGER's composite norms included).
  const memory = stackMemory(undefined, precision, loadEfficiency()).eff.memory;
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
    activationGbPerSample: activationBytesPerSampleOn(cost, precision, 1, 'none', memory) / GIB,
    activationGbPerSampleSelective: activationBytesPerSampleOn(cost, precision, 1, 'selective', memory) / GIB,
    transformerBlocks: s.hasAttention ? s.blocks : 0,
    attentionHeads: s.heads,
    experts: s.experts,
    expertParameters: s.expertParameters,
    tensorParallelizable: s.tensorParallelizable,
    unsupportedOperators: imported.unsupported,
    notes: imported.notes,
  };
}

@Resolver()
@UseMiddleware(BadUserInput, FiniteAnswer)
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
    const imported = resolveModel(model, custom, seqLen, {
      model: 'model',
      customModel: 'customModel',
      seqLen: 'seqLen',
    });
    return summaryOf(imported.model, imported, precision);
  }
}
