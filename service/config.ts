// The process's configuration, in one place: every setting, its environment variable, its
// command-line flag, its default and its allowed range. Flags win over the environment, the
// environment over the defaults. `trainplan serve --help` and docs/operations.md list the same
// table. It lives in the service layer because both the service (search limits, cache sizes, time
// budget) and the server above it (port, body and query limits) read it; nothing here starts a
// server: cli/main.ts (serve) and server/app.ts do.
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { getGpu, loadGpus, parseCsv } from '../seeds/catalog.js';
import { defaultDataDir } from '../store/store.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface ServerConfig {
  port: number;
  host: string;
  workers: number;
  logLevel: LogLevel;
  prices: string | undefined;
  dataDir: string;
  databaseUrl: string | undefined;
  maxBodyBytes: number;
  maxTokens: number;
  maxDepth: number;
  maxComplexity: number;
  maxRootFields: number;
  maxAliases: number;
  maxCandidates: number;
  timeBudgetMs: number;
  maxTimeBudgetMs: number;
  warmUp: number;
  maxInFlight: number;
  cacheEntries: number;
  cachePlans: number;
  requestTimeoutMs: number;
  shutdownDelayMs: number;
  shutdownGraceMs: number;
}

interface Setting {
  key: keyof ServerConfig;
  env: string;
  flag: string;
  kind: 'int' | 'string' | 'level' | 'file';
  min?: number;
  max?: number;
  default: number | string | undefined;
  doc: string;
}

/** Every setting. The order is the order of the documentation table. */
export const SETTINGS: readonly Setting[] = [
  {
    key: 'port',
    env: 'PORT',
    flag: 'port',
    kind: 'int',
    min: 0,
    max: 65535,
    default: 4000,
    doc: 'TCP port (0 picks a free one; the `listening` log line says which).',
  },
  {
    key: 'host',
    env: 'HOST',
    flag: 'host',
    kind: 'string',
    default: '0.0.0.0',
    doc: 'Address to listen on.',
  },
  {
    key: 'workers',
    env: 'TRAINPLAN_WORKERS',
    flag: 'workers',
    kind: 'int',
    min: 0,
    max: 256,
    default: 1,
    doc: 'Processes serving requests (Node cluster); 0 = one per CPU core. 1 = no cluster.',
  },
  {
    key: 'logLevel',
    env: 'LOG_LEVEL',
    flag: 'log-level',
    kind: 'level',
    default: 'info',
    doc: `JSON log lines at this level and above: ${LOG_LEVELS.join(', ')}.`,
  },
  {
    key: 'prices',
    env: 'TRAINPLAN_PRICES',
    flag: 'prices',
    kind: 'file',
    default: undefined,
    doc: "JSON or CSV file of gpu,usdPerGpuHour: server-wide default prices (a request's `prices` still win).",
  },
  {
    key: 'dataDir',
    env: 'TRAINPLAN_DATA_DIR',
    flag: 'data-dir',
    kind: 'string',
    default: defaultDataDir(),
    doc: 'Folder of the embedded SQLite database of recorded runs (trainplan.sqlite, WAL mode: --workers processes share it); created on the first recorded run; also where trainplan calibrate refit writes refit-predictor.onnx/.json. Default $XDG_DATA_HOME/trainplan, else ~/.local/share/trainplan.',
  },
  {
    key: 'databaseUrl',
    env: 'DATABASE_URL',
    flag: 'database-url',
    kind: 'string',
    default: undefined,
    doc: 'postgres://user:password@host:port/db: keep recorded runs in PostgreSQL instead (replicas on several machines share them); --data-dir then holds only a refit of the learned correction (trainplan calibrate refit).',
  },
  {
    key: 'maxBodyBytes',
    env: 'TRAINPLAN_MAX_BODY_BYTES',
    flag: 'max-body-bytes',
    kind: 'int',
    min: 1024,
    max: 100_000_000,
    default: 1_000_000,
    doc: 'Largest request body; larger ones get 413.',
  },
  {
    key: 'maxTokens',
    env: 'TRAINPLAN_MAX_TOKENS',
    flag: 'max-tokens',
    kind: 'int',
    min: 100,
    max: 1_000_000,
    default: 20_000,
    doc: 'Most GraphQL tokens one query may have (checked while parsing).',
  },
  {
    key: 'maxDepth',
    env: 'TRAINPLAN_MAX_DEPTH',
    flag: 'max-depth',
    kind: 'int',
    min: 2,
    max: 100,
    default: 15,
    doc: 'Deepest field nesting, fragments expanded (the deepest query this schema needs is 5 levels; the standard introspection query, getIntrospectionQuery(), needs 15).',
  },
  {
    key: 'maxComplexity',
    env: 'TRAINPLAN_MAX_COMPLEXITY',
    flag: 'max-complexity',
    kind: 'int',
    min: 10,
    max: 1_000_000,
    default: 1000,
    doc: "Most cost per query, fragments expanded: each field 1, `predict` 10, `recommend`, `planFleet`, `planProcurement` and `planFederatedRound` 100 (or a field's own type-graphql `complexity`).",
  },
  {
    key: 'maxRootFields',
    env: 'TRAINPLAN_MAX_ROOT_FIELDS',
    flag: 'max-root-fields',
    kind: 'int',
    min: 1,
    max: 10_000,
    default: 20,
    doc: 'Most top-level fields (aliases included) per operation.',
  },
  {
    key: 'maxAliases',
    env: 'TRAINPLAN_MAX_ALIASES',
    flag: 'max-aliases',
    kind: 'int',
    min: 0,
    max: 100_000,
    default: 50,
    doc: 'Most aliased fields per document.',
  },
  {
    key: 'maxCandidates',
    env: 'TRAINPLAN_MAX_CANDIDATES',
    flag: 'max-candidates',
    kind: 'int',
    min: 1,
    max: 100_000_000,
    default: 2_000_000,
    doc: 'Largest recommend search (gpus x precisions x batchSizes x gpusPerNode x maxNodes); larger ones are refused, saying by how much and what to narrow.',
  },
  {
    key: 'timeBudgetMs',
    env: 'TRAINPLAN_TIME_BUDGET_MS',
    flag: 'time-budget-ms',
    kind: 'int',
    min: 1,
    max: 600_000,
    default: 2000,
    doc: 'Per-request time budget, from arrival: a search or its learned correction still running then (or a request that waited it out in a queue) is refused with error code SEARCH_TIMEOUT, never answered in part. A request may ask for another (`timeBudgetMs`), up to maxTimeBudgetMs.',
  },
  {
    key: 'maxTimeBudgetMs',
    env: 'TRAINPLAN_MAX_TIME_BUDGET_MS',
    flag: 'max-time-budget-ms',
    kind: 'int',
    min: 1,
    max: 600_000,
    default: 10_000,
    doc: "The most a request may ask for with `timeBudgetMs` (at least timeBudgetMs), so a client whose search is refused can ask for more than the default. A search shares its process's event loop, pausing so probes and other requests are answered (the searches running at once share a 50 ms slice per turn of the loop) and sharing the CPU.",
  },
  {
    key: 'warmUp',
    env: 'TRAINPLAN_WARM_UP',
    flag: 'warm-up',
    kind: 'int',
    min: 0,
    max: 1,
    default: 1,
    doc: '1: before it opens its port, each process runs one search (seeds/warm-up.json, about a second here) so that the first request is not also the one that pays for compiling the search (server/warm-up.ts says what that cost). 0 skips it (a faster start, a slower first search).',
  },
  {
    key: 'maxInFlight',
    env: 'TRAINPLAN_MAX_IN_FLIGHT',
    flag: 'max-in-flight',
    kind: 'int',
    min: 1,
    max: 100_000,
    default: 256,
    doc: 'Requests one process holds at once; more get 503 with Retry-After (load shedding, keeps memory bounded).',
  },
  {
    key: 'cacheEntries',
    env: 'TRAINPLAN_CACHE_ENTRIES',
    flag: 'cache-entries',
    kind: 'int',
    min: 0,
    max: 1_000_000,
    default: 256,
    doc: 'Recommend results kept in the LRU cache, per process; 0 turns the cache off.',
  },
  {
    key: 'cachePlans',
    env: 'TRAINPLAN_CACHE_PLANS',
    flag: 'cache-plans',
    kind: 'int',
    min: 0,
    max: 10_000_000,
    default: 10_000,
    doc: 'Plans (ranked + Pareto) the cache holds in all, which bounds its memory: about 3 KB a plan, so about 30 MB at the default.',
  },
  {
    key: 'requestTimeoutMs',
    env: 'TRAINPLAN_REQUEST_TIMEOUT_MS',
    flag: 'request-timeout-ms',
    kind: 'int',
    min: 1000,
    max: 3_600_000,
    default: 30_000,
    doc: 'Time a client has to send a whole request (slow senders are cut off with 408).',
  },
  {
    key: 'shutdownDelayMs',
    env: 'TRAINPLAN_SHUTDOWN_DELAY_MS',
    flag: 'shutdown-delay-ms',
    kind: 'int',
    min: 0,
    max: 600_000,
    default: 1000,
    doc: "On SIGTERM/SIGINT: how long `/ready` answers 503 while requests are still served (each answer with `connection: close`) before the server starts closing, so a load balancer stops sending first. Set it to the balancer's health-check interval times its failure threshold.",
  },
  {
    key: 'shutdownGraceMs',
    env: 'TRAINPLAN_SHUTDOWN_GRACE_MS',
    flag: 'shutdown-grace-ms',
    kind: 'int',
    min: 0,
    max: 600_000,
    default: 10_000,
    doc: 'On SIGTERM/SIGINT, after the delay: how long accepted requests may take to finish before the remaining connections are closed.',
  },
];

export class ConfigError extends Error {}

function parseSetting(s: Setting, raw: string, from: string): number | string {
  switch (s.kind) {
    case 'int': {
      const v = Number(raw.trim().replace(/_/g, ''));
      if (raw.trim() === '' || !Number.isInteger(v) || v < s.min! || v > s.max!) {
        throw new ConfigError(`${from}: must be an integer from ${s.min} to ${s.max} (got "${raw}")`);
      }
      return v;
    }
    case 'level':
      if (!(LOG_LEVELS as readonly string[]).includes(raw))
        throw new ConfigError(`${from}: must be one of ${LOG_LEVELS.join(', ')} (got "${raw}")`);
      return raw;
    default:
      if (raw === '') throw new ConfigError(`${from}: must not be empty`);
      return raw;
  }
}

export const DEFAULTS: ServerConfig = Object.fromEntries(
  SETTINGS.map((s) => [s.key, s.default]),
) as unknown as ServerConfig;

/** Defaults, then the environment, then flags (the `parseArgs` values of `serve`). */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  flags: Record<string, string | undefined> = {},
): ServerConfig {
  const out: Record<string, unknown> = { ...DEFAULTS };
  for (const s of SETTINGS) {
    const e = env[s.env];
    if (e !== undefined && e !== '') out[s.key] = parseSetting(s, e, s.env);
    const f = flags[s.flag];
    if (f !== undefined) out[s.key] = parseSetting(s, f, `--${s.flag}`);
  }
  return out as unknown as ServerConfig;
}

/** `parseArgs` options for every setting (all strings, checked by loadConfig). */
export function flagOptions(): Record<string, { type: 'string' }> {
  return Object.fromEntries(SETTINGS.map((s) => [s.flag, { type: 'string' as const }]));
}

export function flagHelp(): string {
  return SETTINGS.map(
    (s) => `  --${s.flag.padEnd(20)} ${s.env.padEnd(30)} default ${s.default ?? '(none)'}\n      ${s.doc}`,
  ).join('\n');
}

/**
 * The configuration of this process: the environment's (or, if it is invalid, the defaults; `serve`
 * reports the error) until a server is configured. In-process callers (the CLI's query and
 * recommend commands, tests) therefore honour TRAINPLAN_TIME_BUDGET_MS and the other limits too.
 */
let current: ServerConfig = (() => {
  try {
    return loadConfig(process.env, {});
  } catch {
    return { ...DEFAULTS };
  }
})();
export function runtimeConfig(): ServerConfig {
  return current;
}
export function setRuntimeConfig(c: ServerConfig): void {
  current = c;
}

/** The most a request may ask for with `timeBudgetMs`: the cap, never below the default budget. */
export function timeBudgetCapMs(c: ServerConfig = current): number {
  return Math.max(c.maxTimeBudgetMs, c.timeBudgetMs);
}

/**
 * Reads a price override file: JSON (`{"A100-SXM4-80GB": 1.6}` or `[{"gpu": ..., "usdPerGpuHour": ...}]`)
 * or CSV with the header `gpu,usdPerGpuHour` (`usd_per_gpu_hour` also accepted). Every GPU must be
 * in the catalog and every price a finite number from 0 to 10000; the error says which row is wrong.
 */
export function readPriceFile(path: string): Record<string, number> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(
      `prices file ${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
    );
  }
  const rows: { gpu: unknown; price: unknown; where: string }[] = [];
  const isJson = extname(path).toLowerCase() === '.json' || /^\s*[[{]/.test(text);
  if (isJson) {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (e) {
      throw new ConfigError(`prices file ${path}: not valid JSON (${(e as Error).message})`);
    }
    if (Array.isArray(data))
      data.forEach((r, i) =>
        rows.push({
          gpu: (r as Record<string, unknown>)?.gpu,
          price: (r as Record<string, unknown>)?.usdPerGpuHour,
          where: `entry ${i}`,
        }),
      );
    else if (data && typeof data === 'object')
      for (const [gpu, price] of Object.entries(data)) rows.push({ gpu, price, where: `key "${gpu}"` });
    else
      throw new ConfigError(
        `prices file ${path}: expected an object {gpu: usdPerGpuHour} or a list of {gpu, usdPerGpuHour}`,
      );
  } else {
    const csv = parseCsv(text);
    if (csv.length && !('gpu' in csv[0] && ('usdPerGpuHour' in csv[0] || 'usd_per_gpu_hour' in csv[0]))) {
      throw new ConfigError(`prices file ${path}: the CSV header must be gpu,usdPerGpuHour`);
    }
    csv.forEach((r, i) =>
      rows.push({ gpu: r.gpu, price: Number(r.usdPerGpuHour ?? r.usd_per_gpu_hour), where: `row ${i + 2}` }),
    );
  }
  const out: Record<string, number> = {};
  for (const { gpu, price, where } of rows) {
    if (typeof gpu !== 'string' || !getGpu(gpu)) {
      throw new ConfigError(
        `prices file ${path}, ${where}: unknown GPU ${JSON.stringify(gpu)}; allowed: ${loadGpus()
          .map((g) => g.id)
          .join(', ')}`,
      );
    }
    if (typeof price !== 'number' || !Number.isFinite(price) || price < 0 || price > 1e4) {
      throw new ConfigError(
        `prices file ${path}, ${where}: usdPerGpuHour must be a finite number from 0 to 10000 (got ${JSON.stringify(price)})`,
      );
    }
    out[gpu] = price;
  }
  return out;
}
