// The schema as a product: committed (schema.graphql), documented everywhere, consistent casing.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isEnumType } from 'graphql';
import { trainplanSchema } from '../server/schema.js';
import { printedSchema, schemaElements, SCHEMA_FILE } from '../server/schema-file.js';

describe('schema.graphql', () => {
  it('is what the code builds (after a schema change run `npm run schema` and commit it)', async () => {
    const committed = readFileSync(SCHEMA_FILE, 'utf8');
    const built = await printedSchema();
    if (built !== committed) {
      const a = committed.split('\n');
      const b = built.split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      expect.fail(
        `schema.graphql is stale: first difference at line ${line + 1}:\n  committed: ${a[line]}\n  code:      ${b[line]}\nrun \`npm run schema\` and commit schema.graphql`,
      );
    }
  });
});

describe('schema documentation', () => {
  it('has a description on every type, field, argument, input field and enum value', async () => {
    const elements = schemaElements(await trainplanSchema());
    const missing = elements.filter((e) => e.description === null).map((e) => e.path);
    const coverage = (elements.length - missing.length) / elements.length;
    expect(elements.length).toBeGreaterThan(500);
    expect(missing, `undocumented: ${missing.join(', ')}`).toEqual([]);
    expect(coverage).toBe(1);
  });

  it('names every enum value in CONSTANT_CASE', async () => {
    const schema = await trainplanSchema();
    const offending = Object.values(schema.getTypeMap())
      .filter(isEnumType)
      .filter((t) => !t.name.startsWith('__'))
      .flatMap((t) => t.getValues().map((v) => `${t.name}.${v.name}`))
      .filter((path) => !/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/.test(path.split('.')[1]));
    expect(offending).toEqual([]);
  });

  it('declares closed sets as enums: Rejection.reason lists the optimizer reasons', async () => {
    const schema = await trainplanSchema();
    const reason = schema.getType('RejectReason');
    expect(isEnumType(reason)).toBe(true);
    const rejection = schema.getType('Rejection');
    expect(String((rejection as any).getFields().reason.type)).toBe('RejectReason!');
    expect(isEnumType(reason) && reason.getValues().map((v) => v.name)).toContain('OUT_OF_MEMORY');
  });
});
