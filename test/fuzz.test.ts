// Fuzz: many malformed and hostile requests (wrong types, deep nesting, huge lists and numbers,
// NaN/Infinity as strings, unknown fields, aliases and fragment bombs, oversized and broken
// bodies, odd methods, paths and raw bytes) against a real `trainplan serve` process on
// 127.0.0.1. Seeded, so every run sends the same requests. Passes when no answer is a 5xx, no
// error leaks a stack trace or a path, every answer is a clear error or data, every request is
// answered within its time budget, and the server is still up, ready, with bounded memory.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGpus } from '../seeds/catalog.js';
import { loadZoo } from '../predictor/zoo/index.js';
import { spawnServer, type ServerProcess } from './spawn-server.js';

const SEED = 0x7a11;
const REQUESTS = 500;
const CONCURRENCY = 4;
/** The server's per-request budget in this test (TRAINPLAN_TIME_BUDGET_MS). */
const BUDGET_MS = 300;
/** Allowed on top of the budget for what follows a stopped search (ranking, JSON) and a busy CI machine. */
const SERVER_MARGIN_MS = 3000;
/** The server's V8 heap limit in this test (--max-old-space-size). */
const HEAP_MB = 512;

/** mulberry32: a small seeded generator. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
    chance: (p: number) => next() < p,
  };
}
type Rng = ReturnType<typeof rng>;

interface Req {
  kind: string;
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}

const MODELS = loadZoo().map((m) => m.id);
const GPUS = loadGpus().map((g) => g.id);
const json = { 'content-type': 'application/json' };

const HOSTILE_VALUES: unknown[] = [
  'NaN',
  'Infinity',
  '-Infinity',
  '1e999',
  '-1e999',
  '0x1F',
  '',
  ' ',
  '1,5',
  null,
  true,
  false,
  [],
  {},
  [1, 2, 3],
  { $gt: 1 },
  1e308,
  -1e308,
  2 ** 53 + 1,
  -0,
  0,
  -1,
  1e-320,
  5e-324,
  -5e-324,
  2.2250738585072014e-308,
  1e-7,
  1.5,
  2147483648,
  -2147483649,
  'x'.repeat(50_000),
  '💥\u0000\u202e',
  '__proto__',
  { __proto__: { polluted: true } },
  [[[[[[1]]]]]],
  'FP99',
  'COST; DROP TABLE',
  '../../etc/passwd',
];
const HOSTILE_LITERALS = [
  'NaN',
  'Infinity',
  '"NaN"',
  '"Infinity"',
  '1e400',
  '-1e400',
  '-1',
  '0',
  '[]',
  '[[[[1]]]]',
  '{}',
  'null',
  '"x"',
  'true',
  '999999999999',
  '$nope',
  'FP99',
  '1.5',
  '-0',
  '0.0000001',
  `"${'y'.repeat(20_000)}"`,
  '{ a: 1 }',
  '"\\u0000"',
  '2147483648',
];

function baseRecommend(r: Rng): Record<string, unknown> {
  return {
    workload: { model: r.pick(MODELS), samples: r.pick([1e6, 1.2e8, 5e9]) },
    objective: r.pick(['COST', 'TIME']),
    maxNodes: r.int(1, 4),
    limit: r.int(1, 20),
    ...(r.chance(0.5) ? { gpus: Array.from({ length: r.int(1, 4) }, () => r.pick(GPUS)) } : {}),
    ...(r.chance(0.3) ? { deadlineHours: r.pick([1, 24, 1000]) } : {}),
    ...(r.chance(0.3) ? { budgetUsd: r.pick([10, 1e4, 1e6]) } : {}),
  };
}
function basePredict(r: Rng): Record<string, unknown> {
  return {
    workload: { model: r.pick(MODELS), samples: r.pick([1e6, 1.2e8]) },
    gpu: r.pick(GPUS),
    nodes: r.int(1, 4),
    gpusPerNode: r.pick([1, 2, 4, 8]),
    batchSizePerGpu: r.pick([1, 8, 32, 256]),
    precision: r.pick(['FP32', 'AMP_FP16', 'BF16', 'FP8']),
  };
}
const RECOMMEND_FIELDS = [
  'workload',
  'workload.model',
  'workload.samples',
  'objective',
  'deadlineHours',
  'budgetUsd',
  'gpus',
  'precisions',
  'maxNodes',
  'maxGpus',
  'gpusPerNode',
  'batchSizes',
  'globalBatch',
  'prices',
  'interNodeGbps',
  'fp32UsesTf32',
  'limit',
  'timeBudgetMs',
  'unknownField',
];
const PREDICT_FIELDS = [
  'workload',
  'workload.model',
  'workload.samples',
  'gpu',
  'nodes',
  'gpusPerNode',
  'batchSizePerGpu',
  'gradAccumSteps',
  'precision',
  'fp32UsesTf32',
  'interNodeGbps',
  'priceUsdPerGpuHour',
  'bogus',
];

function mutate(r: Rng, input: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  const out = structuredClone(input) as Record<string, any>;
  for (let n = r.int(1, 3); n > 0; n--) {
    const f = r.pick(fields);
    const [a, b] = f.split('.');
    const target = b ? (out[a] ??= {}) : out;
    const key = b ?? a;
    if (typeof target !== 'object' || target === null) continue;
    const roll = r.next();
    if (roll < 0.15) delete target[key];
    else if (roll < 0.25)
      target[key] = Array.from({ length: r.pick([0, 101, 5000, 100_000]) }, (_, i) =>
        key === 'prices' ? { gpu: r.pick(GPUS), usdPerGpuHour: i } : key === 'gpus' ? r.pick(GPUS) : i + 1,
      );
    else target[key] = r.pick(HOSTILE_VALUES);
  }
  return out;
}

const SELECT_REC =
  '{ status evaluated feasible plans { rank gpu { id } costUsd totalHours } rejected { reason count } }';
const SELECT_PRED = '{ stepTimeMs costUsd totalHours memoryGbPerGpu fitsInMemory }';

function generate(r: Rng): Req {
  const roll = r.int(0, 21);
  switch (roll) {
    case 0:
    case 1:
    case 2: {
      // variables with wrong types, NaN/Infinity strings, huge lists, unknown fields
      const input = mutate(r, baseRecommend(r), RECOMMEND_FIELDS);
      return {
        kind: 'recommend-vars',
        headers: json,
        body: JSON.stringify({
          query: `query Q($input: RecommendInput!) { recommend(input: $input) ${SELECT_REC} }`,
          variables: { input },
        }),
      };
    }
    case 3:
    case 4: {
      const input = mutate(r, basePredict(r), PREDICT_FIELDS);
      return {
        kind: 'predict-vars',
        headers: json,
        body: JSON.stringify({
          query: `query($input: PredictInput!) { predict(input: $input) ${SELECT_PRED} }`,
          variables: { input },
        }),
      };
    }
    case 5:
    case 6: {
      // inline literals
      const field = r.pick(RECOMMEND_FIELDS.filter((f) => !f.includes('.')));
      const lit = r.pick(HOSTILE_LITERALS);
      const w =
        field === 'workload'
          ? ''
          : `workload: { model: "${r.pick(MODELS)}", samples: ${r.pick(HOSTILE_LITERALS.slice(0, 8).concat(['1e8']))} }, `;
      return {
        kind: 'recommend-literal',
        headers: json,
        body: JSON.stringify({
          query: `{ recommend(input: { ${w}${field}: ${lit}, maxNodes: 2 }) ${SELECT_REC} }`,
        }),
      };
    }
    case 7: {
      const field = r.pick(PREDICT_FIELDS.filter((f) => !f.includes('.')));
      return {
        kind: 'predict-literal',
        headers: json,
        body: JSON.stringify({
          query: `{ predict(input: { workload: { model: "${r.pick(MODELS)}", samples: 1e6 }, gpu: "T4", batchSizePerGpu: 8, precision: FP32, ${field}: ${r.pick(HOSTILE_LITERALS)} }) ${SELECT_PRED} }`,
        }),
      };
    }
    case 8: {
      // deep nesting: selections, list literals, input objects, JSON variables
      const n = r.pick([16, 40, 130, 1000, 20_000]);
      const which = r.int(0, 3);
      const query =
        which === 0
          ? '{' + 'gpus{'.repeat(n) + 'id' + '}'.repeat(n + 1)
          : which === 1
            ? `{ recommend(input: { workload: { model: "bert_large_squad", samples: 1 }, batchSizes: ${'['.repeat(n)}1${']'.repeat(n)} }) { status } }`
            : which === 2
              ? `{ predict(input: ${'{ a: '.repeat(n)}1${' }'.repeat(n)}) { stepTimeMs } }`
              : `{ __schema { types { fields { type { ${'ofType { '.repeat(Math.min(n, 60))}name${' }'.repeat(Math.min(n, 60))} } } } } }`;
      return { kind: `deep-${which}`, headers: json, body: JSON.stringify({ query }) };
    }
    case 9: {
      const n = r.pick([100, 10_000, 100_000]);
      const deepVar = '['.repeat(n) + ']'.repeat(n);
      return {
        kind: 'deep-json-variables',
        headers: json,
        body: `{"query":"query($input: RecommendInput!) { recommend(input: $input) { status } }","variables":{"input":{"workload":${deepVar}}}}`,
      };
    }
    case 10: {
      // aliases and fragment bombs
      const n = r.pick([2, 11, 25, 60, 1000]);
      const which = r.int(0, 2);
      const query =
        which === 0
          ? `{ ${Array.from({ length: n }, (_, i) => `r${i}: recommend(input: { workload: { model: "resnet50_v1.5", samples: 1e8 }, maxNodes: 8 }) { status }`).join(' ')} }`
          : which === 1
            ? `{ gpus { ${Array.from({ length: n }, (_, i) => `a${i}: id`).join(' ')} } }`
            : `query { ...F0 } ${Array.from({ length: Math.min(n, 40) }, (_, i) => `fragment F${i} on Query { ${i < Math.min(n, 40) - 1 ? `...F${i + 1} ...F${i + 1}` : 'recommend(input: { workload: { model: "resnet50_v1.5", samples: 1e8 } }) { status }'} }`).join(' ')}`;
      return { kind: `aliases-${which}`, headers: json, body: JSON.stringify({ query }) };
    }
    case 11: {
      // bodies that are not GraphQL requests
      const bodies = [
        '',
        '{',
        '{"query": ',
        'null',
        '1',
        '"q"',
        '[]',
        '[{"query":"{ gpus { id } }"},{"query":"{ models { id } }"}]',
        '{"query": 5}',
        '{"query": {"a": 1}}',
        '{"query": "{ gpus { id } }", "variables": "x"}',
        '{"query": "{ gpus { id } }", "variables": [1]}',
        '{"query": "{ gpus { id } }", "operationName": 7}',
        '{"variables": {}}',
        '{"query": "query A { gpus { id } } query B { models { id } }"}',
        '{"query": "mutation { x }"}',
        '{"query": "subscription { x }"}',
        '\u0000\u0001\u0002',
        '{"query": "{ gpus { id } }"'.repeat(3),
      ];
      return { kind: 'bad-body', headers: json, body: r.pick(bodies) };
    }
    case 12: {
      // oversized bodies
      const size = r.pick([1_000_001, 1_500_000, 4_000_000]);
      return { kind: 'oversized', headers: json, body: '{"query":"' + 'x'.repeat(size) + '"}' };
    }
    case 13: {
      // content types, methods, paths
      const which = r.int(0, 5);
      if (which === 0)
        return {
          kind: 'content-type',
          headers: {
            'content-type': r.pick([
              'text/plain',
              'application/graphql',
              'multipart/form-data; boundary=x',
              'application/x-www-form-urlencoded',
              'application/json; charset=utf-16',
            ]),
          },
          body: '{"query":"{ gpus { id } }"}',
        };
      if (which === 1)
        return {
          kind: 'method',
          method: r.pick(['PUT', 'DELETE', 'PATCH', 'OPTIONS']),
          headers: json,
          body: '{"query":"{ gpus { id } }"}',
        };
      if (which === 2)
        return {
          kind: 'get',
          method: 'GET',
          path: `/graphql?query=${encodeURIComponent(r.pick(['{ gpus { id } }', 'mutation { x }', '{'.repeat(500), '{ recommend(input: { workload: { model: "x", samples: 1 } }) { status } }']))}`,
          headers: r.chance(0.5) ? { 'apollo-require-preflight': 'true' } : {},
        };
      if (which === 3)
        return {
          kind: 'path',
          method: 'GET',
          path: r.pick([
            '/../etc/passwd',
            '/graphql/../../',
            '/%ff%fe',
            '/' + 'a'.repeat(8000),
            '/graphql?query=%',
            '/ready?x=1',
            '/favicon.ico',
            '/harness/measure.py?model=%00&seqLen=1e999',
            '/harness/measure.py?model=' + 'x'.repeat(5000),
          ]),
        };
      if (which === 4)
        return {
          kind: 'header-id',
          headers: { ...json, 'x-request-id': r.pick(['', 'a'.repeat(500), '../../x', 'ok-123', '\u00e9']) },
          body: '{"query":"{ gpus { id } }"}',
        };
      return {
        kind: 'json-charset',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ gpu(id: \\"' + 'z'.repeat(r.pick([10, 100_000])) + '\\") { id } }"}',
      };
    }
    case 14:
    case 15: {
      // heavy but valid: searches over the cap, and searches the budget stops
      const which = r.int(0, 2);
      const input =
        which === 0
          ? {
              workload: { model: r.pick(MODELS), samples: 1e9 },
              maxNodes: 4096,
              batchSizes: Array.from({ length: 20 }, (_, i) => i + 1),
            }
          : which === 1
            ? {
                workload: { model: r.pick(['resnet50_v1.5', 'bert_large_squad']), samples: 1e9 },
                maxNodes: r.int(150, 230),
                limit: 200,
              }
            : {
                workload: { model: r.pick(MODELS), samples: 1e9 },
                maxNodes: 64,
                limit: 200,
                timeBudgetMs: r.pick([1, 50]),
              };
      return {
        kind: `heavy-${which}`,
        headers: json,
        body: JSON.stringify({
          query: `query($input: RecommendInput!) { recommend(input: $input) ${SELECT_REC} paretoFront: recommend(input: $input) { status } }`,
          variables: { input },
        }),
      };
    }
    case 16: {
      // unknown fields, arguments, types, directives
      const q = r.pick([
        '{ nope }',
        '{ gpus { nope } }',
        '{ gpus(limit: 1) { id } }',
        '{ recommend { status } }',
        '{ recommend(input: {}) { status } }',
        'query($x: Nope) { gpus { id } }',
        '{ gpus @nope { id } }',
        '{ gpus @skip(if: "yes") { id } }',
        '{ __type(name: "Recommendation") { fields { name } } }',
        '{ __typename }',
        'query { ...F }',
        'fragment F on Query { gpus { id } }',
        '{ gpus { ... on Model { id } } }',
      ]);
      return { kind: 'unknown', headers: json, body: JSON.stringify({ query: q }) };
    }
    case 17: {
      // random bytes and garbage GraphQL
      const alphabet = '{}[]()$@!:=,."\\#\n\t abcxyz0123456789-+eE';
      const q = Array.from(
        { length: r.pick([5, 50, 500, 5000]) },
        () => alphabet[r.int(0, alphabet.length - 1)],
      ).join('');
      return { kind: 'garbage', headers: json, body: JSON.stringify({ query: q }) };
    }
    case 18: {
      // many tokens
      return {
        kind: 'tokens',
        headers: json,
        body: JSON.stringify({ query: `{ gpus { ${'id '.repeat(r.pick([1000, 19_000, 60_000]))} } }` }),
      };
    }
    case 19: {
      // valid, small: the server must keep answering these correctly in the middle of the storm
      return {
        kind: 'valid',
        headers: json,
        body: JSON.stringify({
          query: `query($input: RecommendInput!) { recommend(input: $input) ${SELECT_REC} }`,
          variables: {
            input: {
              workload: { model: 'resnet50_v1.5', samples: 1.2e8 },
              gpus: ['T4', 'A100-SXM4-80GB'],
              maxNodes: 2,
            },
          },
        }),
      };
    }
    default: {
      // huge and tiny numbers in every numeric field
      const input = baseRecommend(r);
      for (const k of [
        'maxNodes',
        'limit',
        'deadlineHours',
        'budgetUsd',
        'interNodeGbps',
        'globalBatch',
        'maxGpus',
      ])
        if (r.chance(0.3))
          (input as Record<string, unknown>)[k] = r.pick([
            1e308,
            -1e308,
            1e-308,
            2 ** 31,
            -(2 ** 31),
            0,
            -0.5,
            4097,
            1e18,
          ]);
      (input.workload as Record<string, unknown>).samples = r.pick([
        1e300,
        1e-300,
        5e-324,
        0.5,
        -1,
        0,
        1e18,
        1.0000001e18,
        Number.MAX_SAFE_INTEGER,
      ]);
      return {
        kind: 'numbers',
        headers: json,
        body: JSON.stringify({
          query: `query($input: RecommendInput!) { recommend(input: $input) ${SELECT_REC} }`,
          variables: { input },
        }),
      };
    }
  }
}

interface Outcome {
  kind: string;
  status: number;
  ms: number;
  body: string;
  requestId: string | null;
}

async function send(base: string, req: Req): Promise<Outcome> {
  const t0 = performance.now();
  const res = await fetch(base + (req.path ?? '/graphql'), {
    method: req.method ?? 'POST',
    headers: req.headers,
    body: req.method === 'GET' || req.method === 'OPTIONS' ? undefined : req.body,
    signal: AbortSignal.timeout(20_000),
  });
  const body = await res.text();
  return {
    kind: req.kind,
    status: res.status,
    ms: performance.now() - t0,
    body,
    requestId: res.headers.get('x-request-id'),
  };
}

/** Bytes that are not HTTP at all, or headers too large: the answer (if any) must be a 4xx. */
function raw(port: number, payload: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    s.setTimeout(5000, () => s.destroy());
    s.on('data', (d) => {
      got += d.toString('latin1');
    });
    s.on('close', () => resolve(got));
    s.on('error', () => resolve(got));
    s.on('connect', () => s.end(payload));
  });
}

const LEAKS = /\/work\/|node_modules|\.ts:\d+|\n\s+at |stacktrace|INTERNAL_SERVER_ERROR/;

describe('fuzz: hostile requests against the real server', () => {
  let srv: ServerProcess;
  // A 512 MB heap: a server whose memory grew without bound would die of it, and fail the test.
  beforeAll(async () => {
    srv = await spawnServer({
      env: {
        TRAINPLAN_TIME_BUDGET_MS: String(BUDGET_MS),
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=${HEAP_MB}`,
      },
    });
  });
  afterAll(async () => {
    await srv?.stop('SIGKILL');
  });

  it(`answers ${REQUESTS} seeded hostile requests without a 5xx, a leak, or a hang, and stays up with bounded memory`, async () => {
    const before = (await (await fetch(`${srv.base}/ready`)).json()) as {
      memory: { heapUsedMb: number; rssMb: number };
    };
    const r = rng(SEED);
    const reqs = Array.from({ length: REQUESTS }, () => generate(r));
    const outcomes: Outcome[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < reqs.length) {
          const req = reqs[next++];
          outcomes.push(
            await send(srv.base, req).catch((e) => ({
              kind: req.kind,
              status: -1,
              ms: 0,
              body: String(e?.cause ?? e),
              requestId: null,
            })),
          );
        }
      }),
    );
    const port = Number(new URL(srv.base).port);
    const rawAnswers = await Promise.all([
      raw(port, 'GARBAGE\r\n\r\n'),
      raw(port, '\u0000\u0001\u0002\u0003\r\n\r\n'),
      raw(port, `GET /health HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`),
      raw(port, 'POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-length: -5\r\n\r\n'),
      raw(
        port,
        'POST /graphql HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\ncontent-type: application/json\r\n\r\nzz\r\n',
      ),
    ]);

    const byStatus: Record<string, number> = {};
    for (const o of outcomes) byStatus[o.status] = (byStatus[o.status] ?? 0) + 1;
    const problems: string[] = [];
    for (const o of outcomes) {
      const where = `${o.kind} -> ${o.status} (${o.requestId}): ${o.body.slice(0, 300)}`;
      if (o.status < 200 || o.status >= 500) problems.push(`bad status: ${where}`);
      const leak = o.body.match(LEAKS);
      if (leak)
        problems.push(
          `leak "${leak[0]}" in ${o.kind} -> ${o.status}: ...${o.body.slice(Math.max(0, (leak.index ?? 0) - 200), (leak.index ?? 0) + 100)}`,
        );
      if (o.status >= 400 && o.status !== 404 && o.body.startsWith('{')) {
        const errs = (
          JSON.parse(o.body) as { errors?: { message?: unknown; extensions?: { code?: unknown } }[] }
        ).errors;
        if (
          !errs?.length ||
          errs.some(
            (e) => typeof e.message !== 'string' || !e.message || typeof e.extensions?.code !== 'string',
          )
        )
          problems.push(`unclear error: ${where}`);
      }
      // Under this load a valid search may be refused (SEARCH_TIMEOUT), never answered in part.
      if (
        o.kind === 'valid' &&
        (o.status !== 200 ||
          !(o.body.includes('"status":"COMPLETE"') || o.body.includes('"code":"SEARCH_TIMEOUT"')))
      )
        problems.push(`valid request failed: ${where}`);
    }
    for (const a of rawAnswers)
      if (a && !/^HTTP\/1\.1 4\d\d/.test(a)) problems.push(`raw answer not 4xx: ${a.slice(0, 100)}`);
    expect(problems.slice(0, 10)).toEqual([]);
    // No server faults: every error a request caused was about the request.
    expect(
      srv.logs
        .filter((l) => l.level === 'error')
        .map((l) => `${l.msg}: ${l.error}`)
        .slice(0, 5),
    ).toEqual([]);

    // Every request was handled within the budget (the server's own log of each request's duration).
    const durations = srv.logs
      .filter((l) => l.msg === 'request' && l.path === '/graphql')
      .map((l) => l.durationMs as number);
    expect(durations.length).toBeGreaterThanOrEqual(REQUESTS * 0.9);
    expect(Math.max(...durations)).toBeLessThan(BUDGET_MS + SERVER_MARGIN_MS);
    // ...and no client waited unreasonably (queued behind at most CONCURRENCY - 1 others).
    expect(Math.max(...outcomes.map((o) => o.ms))).toBeLessThan(CONCURRENCY * (BUDGET_MS + SERVER_MARGIN_MS));
    // Searches that cannot finish within the budget are refused with a clear code, never cut short.
    expect(outcomes.filter((o) => o.body.includes('"code":"SEARCH_TIMEOUT"')).length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.body.includes('"status":"TIMEOUT"')).length).toBe(0);

    const health = await fetch(`${srv.base}/health`);
    expect(health.status).toBe(200);
    const after = (await (await fetch(`${srv.base}/ready`)).json()) as {
      status: string;
      inFlight: number;
      memory: { heapUsedMb: number; rssMb: number };
    };
    expect(after.status).toBe('ready');
    expect(after.inFlight).toBe(0);
    expect(after.memory.heapUsedMb).toBeLessThan(HEAP_MB);
    expect(after.memory.rssMb).toBeLessThan(2 * HEAP_MB);
    expect(srv.proc.exitCode).toBeNull();
    console.log(
      `fuzz: ${outcomes.length} requests, statuses ${JSON.stringify(byStatus)}, max server ms ${Math.max(...durations).toFixed(0)}, heap ${before.memory.heapUsedMb} -> ${after.memory.heapUsedMb} MB, rss ${after.memory.rssMb} MB`,
    );
  });
});
