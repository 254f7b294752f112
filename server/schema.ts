import 'reflect-metadata';
import { buildSchema } from 'type-graphql';
import type { GraphQLSchema } from 'graphql';
import { CatalogResolver } from '../resolvers/catalog.js';
import { PlanningResolver } from '../resolvers/planning.js';
import { CoupledResolver } from '../resolvers/coupled.js';
import { ModelSummaryResolver } from '../resolvers/model-summary.js';

const QUERY_DESCRIPTION =
  'trainplan: which GPU type, how many nodes, which batch size and precision for a training job, and what it costs (USD) and how long it takes (hours). Catalog lookups, one-configuration predictions, ranked plans, and coupled plans solved as mixed-integer programs.';

let schema: Promise<GraphQLSchema> | undefined;
export function trainplanSchema(): Promise<GraphQLSchema> {
  schema ??= buildSchema({
    resolvers: [CatalogResolver, PlanningResolver, CoupledResolver, ModelSummaryResolver],
    validate: false,
  }).then((built) => {
    // type-graphql has no option for the root type's description.
    built.getQueryType()!.description = QUERY_DESCRIPTION;
    return built;
  });
  return schema;
}
