// The browser pages' code (web/), bundled by esbuild in memory the first time a page asks for it
// and served from /assets: no CDN, no network, and nothing generated is committed. GraphiQL's
// Monaco editor runs its language services in web workers, so each worker is its own bundle.
import { readFileSync } from 'node:fs';
import { extname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = `${ROOT}.assets`;

export interface Asset {
  body: Uint8Array;
  contentType: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.ttf': 'font/ttf',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * @graphiql/react imports 'monaco-graphql/esm/utils' without an extension, and monaco-graphql's
 * exports map ("./*": "./*") does not add one; bundlers that guess extensions (Vite) hide that.
 */
const extensionlessMonacoGraphql: Plugin = {
  name: 'extensionless-monaco-graphql',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^monaco-graphql\/esm\/[\w/-]+$/ }, (args) =>
      pluginBuild.resolve(`${args.path}.js`, { kind: args.kind, resolveDir: args.resolveDir }),
    );
  },
};

/**
 * GraphiQL checks the variables pane against a JSON schema that graphql-language-service 5.7 builds
 * with every non-null input field required, also one with a default (graphql/graphiql#3571, open):
 * the default query's `workload` was underlined, "Missing property fineTuning", and any input
 * variable was told to give the 69 input fields this schema defaults. A field with a default is
 * optional (GraphQL spec, input coercion); null stays refused. The build stops if the line is gone.
 */
const VARIABLES_SCHEMA = /graphql-language-service[\\/]esm[\\/]utils[\\/]getVariablesJSONSchema\.js$/;
const REQUIRED_FIELD = 'if (fieldRequired) {';
const defaultedFieldsOptional: Plugin = {
  name: 'defaulted-fields-optional',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: VARIABLES_SCHEMA }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (source.split(REQUIRED_FIELD).length !== 2)
        throw new Error(`${args.path}: "${REQUIRED_FIELD}" not found once; revisit server/assets.ts`);
      return {
        contents: source.replace(REQUIRED_FIELD, 'if (fieldRequired && field.defaultValue === undefined) {'),
        loader: 'js',
      };
    });
  },
};

/** One build per page, so the explorer and the runs page do not wait for GraphiQL's much larger one. */
const BUILDS = {
  explorer: { explorer: 'web/explorer.ts' },
  calibrate: { calibrate: 'web/calibrate.ts' },
  graphiql: {
    graphiql: 'web/graphiql.tsx',
    'editor.worker': 'monaco-editor/esm/vs/editor/editor.worker.js',
    'json.worker': 'monaco-editor/esm/vs/language/json/json.worker.js',
    'graphql.worker': 'monaco-graphql/esm/graphql.worker.js',
  },
} as const;
type BuildName = keyof typeof BUILDS;

async function bundle(entryPoints: Record<string, string>): Promise<Map<string, Asset>> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints,
    outdir: OUT,
    write: false,
    bundle: true,
    format: 'iife',
    minify: true,
    target: 'es2022',
    jsx: 'automatic',
    publicPath: '/assets',
    assetNames: '[name]-[hash]',
    loader: { '.ttf': 'file', '.woff': 'file', '.woff2': 'file', '.svg': 'dataurl', '.png': 'dataurl' },
    define: { 'process.env.NODE_ENV': '"production"' },
    plugins: [extensionlessMonacoGraphql, defaultedFieldsOptional],
    logLevel: 'error',
  });
  const assets = new Map<string, Asset>();
  for (const file of result.outputFiles) {
    const name = relative(OUT, file.path).replaceAll('\\', '/');
    assets.set(`/assets/${name}`, {
      body: file.contents,
      contentType: CONTENT_TYPES[extname(name)] ?? 'application/octet-stream',
    });
  }
  return assets;
}

const bundled = new Map<BuildName, Promise<Map<string, Asset>>>();
/** One build's files, built once per process (a failed build is retried on the next request). */
export function webAssets(name: BuildName): Promise<Map<string, Asset>> {
  let assets = bundled.get(name);
  if (!assets) {
    assets = bundle(BUILDS[name]).catch((e: unknown) => {
      bundled.delete(name);
      throw e;
    });
    bundled.set(name, assets);
  }
  return assets;
}

/** The file at an /assets path: the explorer's or the runs page's own, or else one of GraphiQL's. */
export async function webAsset(path: string): Promise<Asset | undefined> {
  const name: BuildName = path.startsWith('/assets/explorer.')
    ? 'explorer'
    : path.startsWith('/assets/calibrate.')
      ? 'calibrate'
      : 'graphiql';
  return (await webAssets(name)).get(path);
}

const pages = new Map<string, string>();
/** A page of web/ (its HTML only; the code comes from /assets). */
export function webPage(name: 'explorer' | 'calibrate' | 'graphiql'): string {
  let html = pages.get(name);
  if (html === undefined) {
    html = readFileSync(`${ROOT}web/${name}.html`, 'utf8');
    pages.set(name, html);
  }
  return html;
}
