import { Arg, Query, Resolver } from 'type-graphql';
import { getGpu, loadGpus } from '../seeds/catalog.js';
import { getModel, loadZoo } from '../predictor/zoo/index.js';
import { Gpu, Model, PrecisionInfo } from '../schema/types.js';
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
  precisions(): PrecisionInfo[] {
    return precisionViews();
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
