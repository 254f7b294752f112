// The layers point one way (docs/architecture.md): seeds -> predictor -> optimizer -> service ->
// schema + resolvers -> server, with cli on top. This test reads the import statements of every
// product .ts file and fails on an import cycle (between any files, type-only imports included) or
// on an import that points up a layer.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');

/** Each folder and the folders (besides itself) it may import from. */
const MAY_IMPORT: Record<string, string[]> = {
  seeds: [],
  predictor: ['seeds'],
  optimizer: ['seeds', 'predictor'],
  // The measurement store: persistence only, below the service that checks what goes in.
  store: [],
  service: ['seeds', 'predictor', 'optimizer', 'store'],
  schema: ['seeds', 'predictor', 'optimizer', 'service'],
  resolvers: ['seeds', 'predictor', 'optimizer', 'service', 'schema'],
  server: ['seeds', 'predictor', 'optimizer', 'store', 'service', 'schema', 'resolvers'],
  cli: ['seeds', 'predictor', 'optimizer', 'store', 'service', 'schema', 'resolvers', 'server'],
};
/** Packages that belong to the API layers only. */
const API_PACKAGES = /^(graphql|type-graphql|@apollo\/|graphql-)/;
const API_LAYERS = new Set(['schema', 'resolvers', 'server', 'cli']);

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every module specifier a file names: static imports and re-exports, side-effect imports, import(). */
export function specifiers(source: string): string[] {
  const out: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\s[^'"]*?\sfrom\s+['"]([^'"]+)['"]/gm,
    /^\s*import\s+['"]([^'"]+)['"]/gm,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of source.matchAll(re)) out.push(m[1]);
  return out;
}

const layerOf = (file: string) => relative(root, file).split('/')[0];

interface Graph {
  files: string[];
  edges: Map<string, string[]>;
  packages: Map<string, string[]>;
}

function importGraph(): Graph {
  const files = Object.keys(MAY_IMPORT).flatMap((layer) => tsFiles(join(root, layer)));
  const edges = new Map<string, string[]>();
  const packages = new Map<string, string[]>();
  for (const file of files) {
    const specs = specifiers(readFileSync(file, 'utf8'));
    edges.set(
      file,
      specs.filter((s) => s.startsWith('.')).map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts'))),
    );
    packages.set(
      file,
      specs.filter((s) => !s.startsWith('.')),
    );
  }
  return { files, edges, packages };
}

/** Strongly connected components of more than one file (or a file importing itself): the cycles. */
function cycles(g: Graph): string[][] {
  let index = 0;
  const stack: string[] = [];
  const onStack = new Set<string>();
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of g.edges.get(v) ?? []) {
      if (!g.edges.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(relative(root, w));
      } while (w !== v);
      if (scc.length > 1 || (g.edges.get(v) ?? []).includes(v)) found.push(scc.sort());
    }
  };
  for (const f of g.files) if (!idx.has(f)) visit(f);
  return found;
}

describe('architecture', () => {
  const graph = importGraph();

  it('reads the imports of every product file', () => {
    expect(graph.files.length).toBeGreaterThan(60);
    const all = [...graph.edges.values()].flat();
    expect(all.length).toBeGreaterThan(200);
    // Every relative import resolves to a file this test knows (else it would be blind to it).
    const known = new Set(graph.files);
    const unresolved = all.filter((f) => !known.has(f) && f.endsWith('.ts') && !f.includes('/test/'));
    expect(unresolved.map((f) => relative(root, f))).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('imports only down the layers: seeds -> predictor -> optimizer -> service -> schema/resolvers -> server', () => {
    const upward: string[] = [];
    for (const [file, targets] of graph.edges) {
      const from = layerOf(file);
      for (const target of targets) {
        const to = layerOf(target);
        if (to !== from && !MAY_IMPORT[from].includes(to))
          upward.push(`${relative(root, file)} -> ${relative(root, target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('keeps GraphQL out of the domain and the service layer', () => {
    const leaks: string[] = [];
    for (const [file, pkgs] of graph.packages)
      for (const p of pkgs)
        if (API_PACKAGES.test(p) && !API_LAYERS.has(layerOf(file)))
          leaks.push(`${relative(root, file)} -> ${p}`);
    expect(leaks).toEqual([]);
  });

  it('has one door for data: only seeds/ opens the files in seeds/', () => {
    const readers = graph.files
      .filter((file) => layerOf(file) !== 'seeds')
      .filter((file) => /new URL\(\s*['"][^'"]*seeds\//.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    expect(readers).toEqual([]);
  });

  it('would see a cycle and an upward import', () => {
    const a = join(root, 'predictor/a.ts'),
      b = join(root, 'predictor/b.ts');
    expect(
      cycles({
        files: [a, b],
        edges: new Map([
          [a, [b]],
          [b, [a]],
        ]),
        packages: new Map(),
      }),
    ).toEqual([['predictor/a.ts', 'predictor/b.ts']]);
    expect(specifiers("import type { X } from '../server/app.js';\nexport { y } from './y.js';")).toEqual([
      '../server/app.js',
      './y.js',
    ]);
    expect(MAY_IMPORT.seeds.includes('predictor')).toBe(false);
  });
});
