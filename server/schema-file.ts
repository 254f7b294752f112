// The committed schema.graphql: what the code's schema prints to, and the elements of a schema
// that lack a description. `npm run schema` rewrites the file; test/schema.test.ts fails when the
// file and the code disagree, or when anything the API declares is undocumented.
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isSpecifiedScalarType,
  printSchema,
  type GraphQLSchema,
} from 'graphql';
import { trainplanSchema } from './schema.js';

export const SCHEMA_FILE = fileURLToPath(new URL('../schema.graphql', import.meta.url));

export async function printedSchema(): Promise<string> {
  return printSchema(await trainplanSchema()) + '\n';
}

/** Elements the federation specification adds (`_service`, `_Any`, `link__Import`, ...) are Apollo's, not ours. */
const isFederationName = (name: string) => name.startsWith('_') || /^(link|federation)__/.test(name);

/** Every declared element of the schema: types, fields, arguments, input fields, enum values. */
export function schemaElements(schema: GraphQLSchema): { path: string; description: string | null }[] {
  const elements: { path: string; description: string | null }[] = [];
  const add = (path: string, description: string | null | undefined) =>
    elements.push({ path, description: description?.trim() || null });
  for (const type of Object.values(schema.getTypeMap())) {
    if (isSpecifiedScalarType(type) || isFederationName(type.name)) continue;
    add(type.name, type.description);
    if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (isFederationName(field.name)) continue;
        add(`${type.name}.${field.name}`, field.description);
        if ('args' in field)
          for (const arg of field.args) add(`${type.name}.${field.name}(${arg.name})`, arg.description);
      }
    }
    if (isEnumType(type))
      for (const value of type.getValues()) add(`${type.name}.${value.name}`, value.description);
  }
  return elements;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(SCHEMA_FILE, await printedSchema());
  console.log(`wrote ${SCHEMA_FILE}`);
}
