// The API as an Apollo Federation 2 subgraph: it composes into a supergraph, another subgraph can
// extend its entities (Gpu and Model, keyed by id), and the gateway's entity lookups resolve.
import { describe, expect, it } from 'vitest';
import { composeServices } from '@apollo/composition';
import { printSubgraphSchema } from '@apollo/subgraph';
import { getNamedType, isEnumType, isInputObjectType, isObjectType, parse } from 'graphql';
import { trainplanSchema } from '../server/schema.js';
import { apolloForTests } from './graphql-client.js';

const run = apolloForTests();
const trainplanSubgraph = async () => ({
  name: 'trainplan',
  url: 'http://trainplan.local/graphql',
  typeDefs: parse(printSubgraphSchema(await trainplanSchema())),
});

describe('federation subgraph', () => {
  it('composes alone into a supergraph with Gpu and Model as entities keyed by id', async () => {
    const result = composeServices([await trainplanSubgraph()]);
    expect(result.errors).toBeUndefined();
    const supergraph = result.supergraphSdl!;
    expect(supergraph).toMatch(/type Gpu\s+@join__type\(graph: TRAINPLAN, key: "id"\)/);
    expect(supergraph).toMatch(/type Model\s+@join__type\(graph: TRAINPLAN, key: "id"\)/);
    expect(supergraph).toMatch(/recommend\(/);
  });

  it('composes with another subgraph that extends Gpu by its key', async () => {
    const inventory = {
      name: 'inventory',
      url: 'http://inventory.local/graphql',
      typeDefs: parse(`
        extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
        type Gpu @key(fields: "id") { id: ID! racksInStock: Int! }
        type Query { stockedGpus: [Gpu!]! }
      `),
    };
    const result = composeServices([await trainplanSubgraph(), inventory]);
    expect(result.errors).toBeUndefined();
    const gpuType = result.supergraphSdl!.match(/type Gpu\b[^{]*\{([^}]*)\}/)![1];
    expect(gpuType).toMatch(/racksInStock: Int! @join__field\(graph: INVENTORY\)/);
    expect(gpuType).toMatch(/memoryGb: Float! @join__field\(graph: TRAINPLAN\)/);
  });

  it('resolves entity references by id, and null for an unknown id', async () => {
    const r = await run(
      `query ($representations: [_Any!]!) { _entities(representations: $representations) {
         ... on Gpu { id memoryGb vendor } ... on Model { id parameters throughputUnit } } }`,
      {
        representations: [
          { __typename: 'Gpu', id: 'H100-SXM5-80GB' },
          { __typename: 'Model', id: 'resnet50_v1.5' },
          { __typename: 'Gpu', id: 'no-such-gpu' },
        ],
      },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data!._entities).toEqual([
      { id: 'H100-SXM5-80GB', memoryGb: 80, vendor: 'NVIDIA' },
      { id: 'resnet50_v1.5', parameters: 25_557_032, throughputUnit: 'images/s' },
      null,
    ]);
  });

  it('gives resolvers the internal value of an enum default (framework PYTORCH is "PyTorch")', async () => {
    const schema = await trainplanSchema();
    const wrong: string[] = [];
    let checked = 0;
    const check = (path: string, input: { type: any; defaultValue: unknown }) => {
      checked++;
      const named = getNamedType(input.type);
      if (!isEnumType(named) || input.defaultValue === undefined) return;
      const internal = named.getValues().map((v) => v.value);
      const values = Array.isArray(input.defaultValue) ? input.defaultValue : [input.defaultValue];
      if (!values.every((v) => internal.includes(v))) wrong.push(`${path} = ${String(input.defaultValue)}`);
    };
    for (const type of Object.values(schema.getTypeMap())) {
      if (isInputObjectType(type))
        for (const f of Object.values(type.getFields())) check(`${type.name}.${f.name}`, f);
      if (isObjectType(type))
        for (const f of Object.values(type.getFields()))
          for (const a of f.args) check(`${type.name}.${f.name}(${a.name})`, a);
    }
    expect(checked).toBeGreaterThan(100);
    expect(wrong).toEqual([]);
    const predictInput = schema.getType('PredictInput');
    expect(isInputObjectType(predictInput) && predictInput.getFields().framework.defaultValue).toBe(
      'PyTorch',
    );
  });
});
