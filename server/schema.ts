import 'reflect-metadata';
import { buildSchema } from 'type-graphql';
import type { GraphQLSchema } from 'graphql';
import { CatalogResolver } from '../resolvers/catalog.js';
import { PlanningResolver } from '../resolvers/planning.js';
import { CoupledResolver } from '../resolvers/coupled.js';
import { ModelSummaryResolver } from '../resolvers/model-summary.js';

let schema: Promise<GraphQLSchema> | undefined;
export function trainplanSchema(): Promise<GraphQLSchema> {
  schema ??= buildSchema({
    resolvers: [CatalogResolver, PlanningResolver, CoupledResolver, ModelSummaryResolver],
    validate: false,
  });
  return schema;
}
