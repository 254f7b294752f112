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

  @Query(() => Gpu, { nullable: true })
  gpu(@Arg('id', () => String) id: string): Gpu | null {
    const g = getGpu(id);
    return g ? gpuView(g) : null;
  }

  @Query(() => [Model], { description: 'The model zoo.' })
  models(): Model[] {
    return loadZoo().map(modelView);
  }

  @Query(() => Model, { nullable: true })
  model(@Arg('id', () => String) id: string): Model | null {
    const m = getModel(id);
    return m ? modelView(m) : null;
  }

  @Query(() => [PrecisionInfo])
  precisions(): PrecisionInfo[] {
    return precisionViews();
  }
}
