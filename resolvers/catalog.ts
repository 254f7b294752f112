import { Arg, Query, Resolver } from 'type-graphql';
import { getGpu, loadGpus } from '../seeds/catalog.js';
import { getModel, loadZoo } from '../predictor/zoo/index.js';
import { Gpu, Model, PrecisionInfo, SoftwareStackEnum } from '../schema/types.js';
import { DEFAULT_STACK, type SoftwareStack } from '../predictor/software.js';
import { gpuView, modelView, precisionViews } from './views.js';

@Resolver()
export class CatalogResolver {
  @Query(() => [Gpu], { description: 'Every GPU of the catalog, with sources.' })
  gpus(): Gpu[] {
    return loadGpus().map(gpuView);
  }

  @Query(() => Gpu, { nullable: true, description: 'One GPU of the catalog by id; null when there is none.' })
  gpu(
    @Arg('id', () => String, { description: 'A catalog GPU id, e.g. H100-SXM5-80GB.' }) id: string,
  ): Gpu | null {
    const g = getGpu(id);
    return g ? gpuView(g) : null;
  }

  @Query(() => [Model], { description: 'The model zoo.' })
  models(): Model[] {
    return loadZoo().map(modelView);
  }

  @Query(() => Model, { nullable: true, description: 'One zoo model by id; null when there is none.' })
  model(
    @Arg('id', () => String, { description: 'A zoo model id, e.g. resnet50_v1.5.' }) id: string,
  ): Model | null {
    const m = getModel(id);
    return m ? modelView(m) : null;
  }

  @Query(() => [PrecisionInfo], { description: 'The precision modes and what each means for the hardware.' })
  precisions(
    @Arg('softwareStack', () => SoftwareStackEnum, {
      defaultValue: DEFAULT_STACK,
      description:
        "What trains the model, as predict's softwareStack: a stock PyTorch loop (PYTORCH_EAGER) keeps an FP8 or FP4 model in fp32 with no master copy, the other stacks Megatron-Core's bf16 weights with an fp32 master.",
    })
    softwareStack: SoftwareStack,
  ): PrecisionInfo[] {
    return precisionViews(softwareStack);
  }
}

/**
 * The catalog's federation entities: another subgraph may reference a Gpu or a Model by its id
 * (`@key(fields: "id")`), and the gateway asks this subgraph to resolve the rest of it.
 */
export const CATALOG_ENTITIES: Record<'Gpu' | 'Model', (reference: { id: string }) => Gpu | Model | null> = {
  Gpu: ({ id }) => {
    const g = getGpu(id);
    return g ? gpuView(g) : null;
  },
  Model: ({ id }) => {
    const m = getModel(id);
    return m ? modelView(m) : null;
  },
};
