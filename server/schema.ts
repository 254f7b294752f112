// The API's schema: type-graphql builds it from the resolver classes, and it is served as an
// Apollo Federation 2 subgraph, so a gateway can compose it with other services. Gpu and Model
// are entities keyed by id (resolvers/catalog.ts resolves references to them).
import 'reflect-metadata';
import { buildSchema, createResolversMap } from 'type-graphql';
import { buildSubgraphSchema } from '@apollo/subgraph';
import {
  isInputObjectType,
  isObjectType,
  Kind,
  parse,
  printSchema,
  valueFromAST,
  type DocumentNode,
  type GraphQLArgument,
  type GraphQLInputField,
  type GraphQLSchema,
} from 'graphql';
// type-graphql lists the queries in the order their classes are evaluated: this import order is the
// order of Query's fields in schema.graphql.
import { CATALOG_ENTITIES, CatalogResolver } from '../resolvers/catalog.js';
import { ModelSummaryResolver } from '../resolvers/model-summary.js';
import { PlanningResolver } from '../resolvers/planning.js';
import { CoupledResolver } from '../resolvers/coupled.js';
import { MeasurementFieldsResolver, MeasurementsResolver } from '../resolvers/measurements.js';

const QUERY_DESCRIPTION =
  'trainplan: which GPU type, how many nodes, which batch size and precision for a training job, and what it costs (USD) and how long it takes (hours). Catalog lookups, one-configuration predictions, ranked plans, and coupled plans solved as mixed-integer programs.';

const FEDERATION_LINK = 'https://specs.apollo.dev/federation/v2.7';

/** The type-graphql schema's SDL with `@key(fields: "id")` on every entity and the federation link. */
export function subgraphDocument(sdl: string, entities: readonly string[]): DocumentNode {
  const document = parse(sdl);
  const key = parse(`type X @key(fields: "id") { id: ID }`).definitions[0];
  const keyDirective = key.kind === Kind.OBJECT_TYPE_DEFINITION ? key.directives! : [];
  const link = parse(`extend schema @link(url: "${FEDERATION_LINK}", import: ["@key"])`).definitions;
  return {
    ...document,
    definitions: [
      ...link,
      ...document.definitions.map((definition) =>
        definition.kind === Kind.OBJECT_TYPE_DEFINITION && entities.includes(definition.name.value)
          ? { ...definition, directives: [...(definition.directives ?? []), ...keyDirective] }
          : definition,
      ),
    ],
  };
}

async function build(): Promise<GraphQLSchema> {
  const built = await buildSchema({
    resolvers: [
      CatalogResolver,
      PlanningResolver,
      CoupledResolver,
      ModelSummaryResolver,
      MeasurementsResolver,
      MeasurementFieldsResolver,
    ],
    validate: false,
  });
  // type-graphql has no option for the root type's description.
  built.getQueryType()!.description = QUERY_DESCRIPTION;
  built.getMutationType()!.description =
    "Recording and deleting a user's own measured runs (the evidence predictions are calibrated with).";
  // Rebuilt from its SDL by @apollo/subgraph; createResolversMap carries over every resolver and
  // every enum's internal values (LayerType CONV2D is 'conv2d' inside).
  const resolvers = createResolversMap(built) as Record<string, Record<string, unknown>>;
  for (const [type, resolveReference] of Object.entries(CATALOG_ENTITIES))
    resolvers[type] = { ...resolvers[type], __resolveReference: resolveReference };
  const subgraph = buildSubgraphSchema({
    typeDefs: subgraphDocument(printSchema(built), Object.keys(CATALOG_ENTITIES)),
    // @apollo/subgraph's resolver-map type is narrower than the map type-graphql returns.
    resolvers: resolvers as never,
  });
  internalDefaults(subgraph);
  return subgraph;
}

/**
 * Default values were read from the SDL before the enums got their internal values, so a default
 * like `framework = PYTORCH` would reach the resolver as 'PYTORCH' instead of 'PyTorch'. Read
 * every default again now that the enums know their values.
 */
function internalDefaults(schema: GraphQLSchema): void {
  const recoerce = (input: GraphQLInputField | GraphQLArgument) => {
    if (input.astNode?.defaultValue)
      input.defaultValue = valueFromAST(input.astNode.defaultValue, input.type);
  };
  for (const type of Object.values(schema.getTypeMap())) {
    if (isInputObjectType(type)) Object.values(type.getFields()).forEach(recoerce);
    if (isObjectType(type)) for (const field of Object.values(type.getFields())) field.args.forEach(recoerce);
  }
}

let schema: Promise<GraphQLSchema> | undefined;
export function trainplanSchema(): Promise<GraphQLSchema> {
  schema ??= build();
  return schema;
}
