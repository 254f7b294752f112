// Operability: configuration, request ids and logs, /health and /ready, query-shape limits,
// the time budget, the recommend cache, error masking, price overrides, graceful shutdown and
// the --workers cluster.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type Running } from '../server/app.js';
import { formatError } from '../server/error-policy.js';
import {
  ConfigError,
  DEFAULTS,
  loadConfig,
  readPriceFile,
  runtimeConfig,
  setRuntimeConfig,
  timeBudgetCapMs,
} from '../service/config.js';
import { requestStore, setLogSink } from '../server/log.js';
import { recommendCache } from '../service/cache.js';
import { getGpu, setPriceOverrides } from '../seeds/catalog.js';
import { spawnServer } from './spawn-server.js';
import { HF_CONFIGS } from './import-fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'trainplan-ops-'));

describe('configuration', () => {
  it('defaults, then environment, then flags', () => {
    expect(loadConfig({}, {})).toEqual(DEFAULTS);
    const c = loadConfig(
      { PORT: '5000', LOG_LEVEL: 'warn', TRAINPLAN_TIME_BUDGET_MS: '750', TRAINPLAN_MAX_DEPTH: '9' },
      { port: '6000', 'max-candidates': '1_000' },
    );
    expect(c).toMatchObject({
      port: 6000,
      logLevel: 'warn',
      timeBudgetMs: 750,
      maxDepth: 9,
      maxCandidates: 1000,
      host: '0.0.0.0',
    });
  });

  it('lets a request ask for at most maxTimeBudgetMs, and never less than the default budget', () => {
    expect(timeBudgetCapMs(loadConfig({}, {}))).toBe(10_000);
    expect(timeBudgetCapMs(loadConfig({ TRAINPLAN_MAX_TIME_BUDGET_MS: '30000' }, {}))).toBe(30_000);
    // A cap below the default budget would refuse the default itself: the default wins.
    expect(
      timeBudgetCapMs(loadConfig({ TRAINPLAN_TIME_BUDGET_MS: '5000' }, { 'max-time-budget-ms': '3000' })),
    ).toBe(5000);
  });

  it.each([
    [{ PORT: '70000' }, {}, /^PORT: must be an integer from 0 to 65535 \(got "70000"\)/],
    [{}, { 'log-level': 'loud' }, /^--log-level: must be one of debug, info, warn, error, silent/],
    [
      { TRAINPLAN_TIME_BUDGET_MS: 'NaN' },
      {},
      /^TRAINPLAN_TIME_BUDGET_MS: must be an integer from 1 to 600000/,
    ],
    [{}, { workers: '-1' }, /^--workers: must be an integer from 0 to 256/],
  ])('refuses bad settings, naming them and the range (%#)', (env, flags, message) => {
    expect(() => loadConfig(env, flags)).toThrow(ConfigError);
    expect(() => loadConfig(env, flags)).toThrow(message);
  });

  it('reads price files as JSON or CSV, refusing unknown GPUs and bad prices', () => {
    const write = (name: string, text: string) => {
      const p = join(tmp, name);
      writeFileSync(p, text);
      return p;
    };
    expect(readPriceFile(write('a.json', '{"A100-SXM4-80GB": 1.25, "T4": 0.2}'))).toEqual({
      'A100-SXM4-80GB': 1.25,
      T4: 0.2,
    });
    expect(readPriceFile(write('b.json', '[{"gpu": "T4", "usdPerGpuHour": 0.3}]'))).toEqual({ T4: 0.3 });
    expect(readPriceFile(write('c.csv', 'gpu,usdPerGpuHour\nT4,0.25\nA100-SXM4-80GB,1.5\n'))).toEqual({
      T4: 0.25,
      'A100-SXM4-80GB': 1.5,
    });
    expect(() => readPriceFile(write('d.csv', 'gpu,usdPerGpuHour\nB9000,1\n'))).toThrow(
      /row 2: unknown GPU "B9000"; allowed: .*T4/,
    );
    expect(() => readPriceFile(write('e.json', '{"T4": -1}'))).toThrow(
      /key "T4": usdPerGpuHour must be a finite number from 0 to 10000 \(got -1\)/,
    );
    expect(() => readPriceFile(write('f.csv', 'name,price\nT4,1\n'))).toThrow(
      /header must be gpu,usdPerGpuHour/,
    );
    expect(() => readPriceFile(join(tmp, 'missing.json'))).toThrow(/cannot read it \(ENOENT\)/);
  });
});

/** A GraphQL request over HTTP (`body` as JSON, or as it is when a string), with the response and its JSON. */
async function postGraphql(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    res,
    json: (await res.json()) as {
      data?: Record<string, any>;
      errors?: { message: string; extensions: Record<string, unknown> }[];
    },
  };
}

describe('the HTTP front, in process', () => {
  let running: Running;
  const lines: Record<string, unknown>[] = [];
  let cachedAfterStart = -1;
  beforeAll(async () => {
    setLogSink((line) => lines.push(JSON.parse(line)));
    running = await startServer(0, '127.0.0.1', { logLevel: 'debug' });
    cachedAfterStart = recommendCache.size;
  });
  afterAll(async () => {
    await running.close();
    setLogSink(undefined);
  });

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    postGraphql(running.url, body, headers);
  const W = 'workload: { model: "resnet50_v1.5", samples: 1.2e8 }';

  it('searches once before it opens the port (seeds/warm-up.json), and keeps none of it', async () => {
    const warm = lines.filter((l) => l.msg === 'warmed up');
    expect(warm).toHaveLength(1);
    // Answered, not refused: the MoE config was imported and every layout of one GPU was searched.
    expect(warm[0].refused).toBeUndefined();
    expect(warm[0].evaluated).toBeGreaterThan(1000);
    expect(cachedAfterStart).toBe(0);
    // 0 skips it.
    const before = lines.length;
    // A server's settings become the process's: put this file's back for the tests after it.
    const config = runtimeConfig();
    const cold = await startServer(0, '127.0.0.1', { logLevel: 'debug', warmUp: 0 });
    await cold.close();
    setRuntimeConfig(config);
    expect(lines.slice(before).some((l) => l.msg === 'warmed up')).toBe(false);
  });

  it('echoes or makes a request id, puts it on errors, and logs one JSON line per request', async () => {
    const { res, json } = await post(
      { query: `query Plan { recommend(input: { ${W}, maxNodes: 1, limit: 1, gpus: ["T4"] }) { status } }` },
      { 'x-request-id': 'frontend-42' },
    );
    expect(res.headers.get('x-request-id')).toBe('frontend-42');
    expect(json.data!.recommend.status).toBe('COMPLETE');
    const line = lines.find((l) => l.msg === 'request' && l.requestId === 'frontend-42');
    expect(line).toMatchObject({
      level: 'info',
      method: 'POST',
      path: '/graphql',
      operationName: 'Plan',
      status: 200,
    });
    expect(typeof line!.durationMs).toBe('number');

    const bad = await post(
      { query: `{ recommend(input: { ${W}, limit: 0 }) { status } }` },
      { 'x-request-id': 'bad id with spaces' },
    );
    const id = bad.res.headers.get('x-request-id')!;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(bad.json.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', requestId: id });
    expect(bad.json.errors![0].extensions.stacktrace).toBeUndefined();
    expect(
      lines.some((l) => l.msg === 'request error' && l.requestId === id && l.code === 'BAD_USER_INPUT'),
    ).toBe(true);
  });

  it('/health is live; /ready reports checks, memory and the cache', async () => {
    expect(await (await fetch(`${running.url.replace('/graphql', '')}/health`)).json()).toEqual({
      status: 'ok',
    });
    const ready = await fetch(running.url.replace('/graphql', '/ready'));
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as Record<string, any>;
    expect(body.status).toBe('ready');
    expect(body.checks).toEqual({
      gpus: 'ok',
      models: 'ok',
      efficiency: 'ok',
      network: 'ok',
      learnedModel: 'ok',
    });
    expect(body.memory.heapUsedMb).toBeGreaterThan(0);
    expect(body.cache).toHaveProperty('hits');
  });

  it.each([
    [
      'depth',
      `{ __schema { types { fields { type { ${'ofType { '.repeat(11)}name ${'} '.repeat(11)}} } } } }`,
      /nests fields 16 deep, more than the limit of 15/,
    ],
    [
      'complexity',
      `{ ${Array.from({ length: 11 }, (_, i) => `r${i}: recommend(input: { ${W} }) { status }`).join(' ')} }`,
      /complexity 1111, more than the limit of 1000/,
    ],
    [
      'top-level fields',
      `{ ${Array.from({ length: 21 }, (_, i) => `t${i}: __typename`).join(' ')} }`,
      /21 top-level fields, more than the limit of 20/,
    ],
    [
      'aliases',
      `{ gpus { ${Array.from({ length: 51 }, (_, i) => `a${i}: id`).join(' ')} } }`,
      /51 aliased fields, more than the limit of 50/,
    ],
  ])('refuses a query over the %s limit before executing it', async (_name, query, message) => {
    const { res, json } = await post({ query });
    expect(res.status).toBe(400);
    expect(json.errors![0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(json.errors![0].message).toMatch(message);
  });

  it('counts fragment spreads once per use (a fragment bomb is refused)', async () => {
    const frags = Array.from(
      { length: 12 },
      (_, i) => `fragment F${i} on Query { ${i < 11 ? `...F${i + 1} ...F${i + 1}` : 'gpus { id }'} }`,
    ).join(' ');
    const { res, json } = await post({ query: `query { ...F0 } ${frags}` });
    expect(res.status).toBe(400);
    expect(json.errors!.map((e) => e.message).join('\n')).toMatch(/2048 top-level fields|complexity 4096/);
  });

  it('refuses absurd nesting before parsing, too many tokens while parsing, big bodies before reading them', async () => {
    const deep = await post({ query: '{' + 'gpus{'.repeat(5000) + 'id' + '}'.repeat(5001) });
    expect(deep.res.status).toBe(400);
    expect(deep.json.errors![0].message).toMatch(/nests brackets more than 128 deep/);
    const tokens = await post({ query: `{ gpus { ${'id '.repeat(25_000)} } }` });
    expect(tokens.res.status).toBe(400);
    expect(tokens.json.errors![0].message).toMatch(/more th\w+ 20000 tokens/);
    const big = await post('{"query": "' + ' '.repeat(1_100_000) + '{ gpus { id } }"}');
    expect(big.res.status).toBe(413);
    expect(big.json.errors![0].message).toBe(`request body larger than ${DEFAULTS.maxBodyBytes} bytes`);
  });

  it('refuses a search over the candidate cap, saying how big it was and what to narrow', async () => {
    const { json } = await post({ query: `{ recommend(input: { ${W}, maxNodes: 4096 }) { status } }` });
    expect(json.errors![0].extensions.code).toBe('BAD_USER_INPUT');
    expect(json.errors![0].message).toMatch(
      /would enumerate \d+ candidates .* more than the limit of 2000000: narrow gpus, providers, precisions, batchSizes or maxNodes/,
    );
  });

  it('refuses a search that cannot finish within its time budget (SEARCH_TIMEOUT), never answering with part of it', async () => {
    // maxNodes 150: 56 GPUs x 9 precisions x 4 batch sizes x 5 node sizes x 150 stays under the 2,000,000 cap.
    const q = (budget: number) =>
      `{ recommend(input: { ${W}, maxNodes: 150, timeBudgetMs: ${budget} }) { status evaluated plans { rank costUsd } } }`;
    // 250 ms: far less than this search takes, and more than reading and checking the request takes
    // on a loaded machine (with 20 ms, a busy CI machine sometimes spent the budget before the search
    // started, a refusal of its own: "used up its time budget ... before its search could start").
    const t0 = performance.now();
    const { json } = await post({ query: q(250) });
    expect(performance.now() - t0).toBeLessThan(2000 + 1000);
    expect(json.data).toBeNull();
    expect(json.errors![0].extensions.code).toBe('SEARCH_TIMEOUT');
    expect(json.errors![0].message).toMatch(
      /did not finish within its time budget of 250 ms; no partial answer is given: ask for a larger time budget \(timeBudgetMs, --time-budget-ms; up to 10000 ms here\)/,
    );
    expect(json.errors![0].extensions).toMatchObject({ budgetMs: 250, maxBudgetMs: 10_000 });
    // A request may ask for more than the server's 2 s default, up to maxTimeBudgetMs.
    const over = await post({ query: q(999_999) });
    expect(over.json.errors![0].message).toBe(
      'timeBudgetMs: must be an integer from 1 to 10000 (got 999999)',
    );
  });

  it('gives a request that names a larger budget that budget, up to the cap; one naming none gets the default', async () => {
    // A server whose default is far too short for this search but whose cap is not. (A server's
    // settings become the process's: the ones before are restored for the tests after this one.)
    const before = runtimeConfig();
    const tight = await startServer(0, '127.0.0.1', {
      warmUp: 0,
      timeBudgetMs: 5,
      maxTimeBudgetMs: 60_000,
    });
    try {
      const query = (url: string, budget?: number) =>
        postGraphql(url, {
          query: `{ recommend(input: { ${W}, gpus: ["A100-SXM4-80GB", "H100-SXM5-80GB"], maxNodes: 64${budget === undefined ? '' : `, timeBudgetMs: ${budget}`} }) { status evaluated plans { rank } } }`,
        }).then((r) => r.json);
      const ask = (budget?: number) => query(tight.url, budget);
      const refused = await ask();
      expect(refused.data).toBeNull();
      expect(refused.errors![0].extensions).toMatchObject({
        code: 'SEARCH_TIMEOUT',
        budgetMs: 5,
        maxBudgetMs: 60_000,
      });
      // (Refused during the search, or before it if 5 ms passed first: either way it says what to ask for.)
      expect(refused.errors![0].message).toMatch(
        /ask for a larger time budget \(timeBudgetMs, --time-budget-ms; up to 60000 ms here\)/,
      );
      const answered = await ask(60_000);
      expect(answered.errors).toBeUndefined();
      expect(answered.data!.recommend.status).toBe('COMPLETE');
      expect(answered.data!.recommend.plans.length).toBeGreaterThan(0);
      // A cap at the default leaves nothing to ask for: the refusal says so instead.
      const capped = await startServer(0, '127.0.0.1', {
        warmUp: 0,
        timeBudgetMs: 5,
        maxTimeBudgetMs: 1,
      });
      try {
        const body = await query(capped.url);
        expect(body.errors![0].extensions).toMatchObject({ code: 'SEARCH_TIMEOUT', maxBudgetMs: 5 });
        expect(body.errors![0].message).not.toMatch(/larger time budget/);
      } finally {
        await capped.close();
      }
    } finally {
      await tight.close();
      setRuntimeConfig(before);
    }
  });

  it('answers its probes while a long search runs, and an identical request waits for that search', async () => {
    // The GraphQL defaults for an imported mixture-of-experts config search for seconds here. The
    // test shares the server's event loop: its timer fires, and /health is sent and answered, only
    // if the search pauses. (Before, a search held the loop until it ended, /health after it.)
    const qwen = HF_CONFIGS.find((c) => c.id === 'Qwen/Qwen3-30B-A3B')!;
    const finished: string[] = [];
    recommendCache.clear();
    const ask = (name: string) =>
      post({
        query: `query($config: String!) { recommend(input: { workload: { customModel: { huggingFaceConfig: $config }, seqLen: 4096, samples: 1e11 }, softwareStack: MEGATRON, timeBudgetMs: 10000 }) { status evaluated plans { rank costUsd gpu { id } } } }`,
        variables: { config: JSON.stringify(qwen.config) },
      }).then((r) => {
        finished.push(name);
        return r;
      });
    const first = ask('recommend');
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The same question while the first is searching: it is answered by that search, not by its own.
    const second = ask('the same again');
    const health = await fetch(running.url.replace('/graphql', '/health'));
    finished.push('health');
    expect(health.status).toBe(200);
    const [a, b] = await Promise.all([first, second]);
    expect(a.json.errors).toBeUndefined();
    expect(a.json.data!.recommend).toMatchObject({ status: 'COMPLETE', evaluated: 97_104 });
    expect(b.json.data).toEqual(a.json.data);
    expect(finished).toEqual(['health', 'recommend', 'the same again']);
    // One search: the second request counts as a hit.
    expect(recommendCache.stats()).toMatchObject({ hits: 1, misses: 1 });
  });

  it('answers identical recommend requests from the cache (normalized: key order and explicit defaults do not matter)', async () => {
    const stats = async () =>
      (
        (await (await fetch(running.url.replace('/graphql', '/ready'))).json()) as {
          cache: { hits: number; misses: number };
        }
      ).cache;
    const before = await stats();
    const a = await post({
      query: `{ recommend(input: { ${W}, maxNodes: 3, gpus: ["T4", "A10G"] }) { status plans { rank costUsd gpu { id } } } }`,
    });
    const b = await post({
      query: `{ recommend(input: { gpus: ["T4", "A10G"], maxNodes: 3, limit: 10, objective: COST, ${W} }) { status plans { rank costUsd gpu { id } } } }`,
    });
    const after = await stats();
    expect(b.json.data).toEqual(a.json.data);
    expect(after.misses - before.misses).toBe(1);
    expect(after.hits - before.hits).toBe(1);
    // A refused search is not kept: the next identical request searches again.
    const t = `{ recommend(input: { ${W}, maxNodes: 150, timeBudgetMs: 5 }) { status } }`;
    expect((await post({ query: t })).json.errors![0].extensions.code).toBe('SEARCH_TIMEOUT');
    await post({ query: t });
    expect((await stats()).misses - after.misses).toBe(2);
  });

  it("graphql-js complaints about the request are the request's fault (BAD_REQUEST), not an internal error", async () => {
    const { json } = await post({ query: 'mutation { x }' });
    expect(json.errors![0].message).toMatch(/Cannot query field "x" on type "Mutation"/);
    expect(json.errors![0].extensions.code).not.toBe('INTERNAL_SERVER_ERROR');
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
  });

  it('hides server faults outside development: "internal error" and the request id; details only in the log', () => {
    const fault = {
      message: "Cannot read properties of undefined (reading 'x') at /work/main/predictor/step.ts:12",
      extensions: {
        code: 'INTERNAL_SERVER_ERROR',
        stacktrace: ['Error: ...', '    at step (/work/main/predictor/step.ts:12:3)'],
      },
    };
    const masked = requestStore.run({ requestId: 'r-1', startedAt: 0, deadlineAt: 0 }, () =>
      formatError(fault),
    );
    expect(masked).toEqual({
      message: 'internal error (request id r-1)',
      extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: 'r-1' },
    });
    const user = formatError({
      message: 'limit: must be an integer from 1 to 200 (got 0)',
      extensions: { code: 'BAD_USER_INPUT', field: 'limit' },
    });
    expect(user.message).toMatch(/^limit:/);
    const env = process.env.NODE_ENV;
    process.env.NODE_ENV = 'development';
    try {
      expect(formatError(fault).message).toBe(fault.message);
    } finally {
      process.env.NODE_ENV = env;
    }
  });
});

describe('price overrides', () => {
  let running: Running;
  beforeAll(async () => {
    const file = join(tmp, 'prices.csv');
    writeFileSync(file, 'gpu,usdPerGpuHour\nT4,0.05\n');
    running = await startServer(0, '127.0.0.1', { prices: file, logLevel: 'warn' });
  });
  afterAll(async () => {
    await running.close();
    setPriceOverrides(undefined);
  });

  it("become the default price everywhere; a request's prices still win", async () => {
    const q = (prices: string) => `{ gpu(id: "T4") { priceUsdPerGpuHour priceSource }
      recommend(input: { workload: { model: "resnet50_v1.5", samples: 1e7 }, gpus: ["T4"], maxNodes: 1, limit: 1 ${prices} }) { plans { priceUsdPerGpuHour costUsd totalHours totalGpus } } }`;
    const d = (await postGraphql(running.url, { query: q('') })).json.data!;
    expect(d.gpu.priceUsdPerGpuHour).toBe(0.05);
    expect(d.gpu.priceSource).toMatch(/^price override file .*prices\.csv \(catalog: /);
    const p = d.recommend.plans[0];
    expect(p.priceUsdPerGpuHour).toBe(0.05);
    expect(p.costUsd).toBeCloseTo(p.totalHours * p.totalGpus * 0.05, 9);
    const own = await postGraphql(running.url, {
      query: q(', prices: [{ gpu: "T4", usdPerGpuHour: 0.5 }]'),
    });
    expect(own.json.data!.recommend.plans[0].priceUsdPerGpuHour).toBe(0.5);
  });

  it('are undone by setPriceOverrides(undefined)', () => {
    setPriceOverrides(undefined);
    expect(getGpu('T4')!.priceUsdPerGpuHour).not.toBe(0.05);
  });
});

/** A POST whose body is sent in two parts, with `between` run in the middle. */
function splitPost(
  url: string,
  body: string,
  between: () => Promise<void>,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    const half = Math.floor(body.length / 2);
    req.write(body.slice(0, half));
    between().then(() => req.end(body.slice(half)), reject);
  });
}

const pidOf = (base: string) =>
  new Promise<number>((resolve, reject) => {
    request(`${base}/ready`, { agent: false }, (res) => {
      let t = '';
      res.on('data', (c) => {
        t += c;
      });
      res.on('end', () => resolve((JSON.parse(t) as { pid: number }).pid));
    })
      .on('error', reject)
      .end();
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('load shedding', () => {
  it('answers 503 with Retry-After beyond maxInFlight, and serves again once the load is gone', async () => {
    const running = await startServer(0, '127.0.0.1', { maxInFlight: 1, logLevel: 'warn' });
    try {
      let shed: Response | undefined;
      const held = await splitPost(running.url, JSON.stringify({ query: '{ __typename }' }), async () => {
        await sleep(200); // the first request is in flight, waiting for the rest of its body
        shed = await fetch(running.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"query":"{ __typename }"}',
        });
      });
      expect(held.status).toBe(200);
      expect(shed!.status).toBe(503);
      expect(shed!.headers.get('retry-after')).toBe('1');
      expect(
        ((await shed!.json()) as { errors: { message: string; extensions: { code: string } }[] }).errors[0],
      ).toMatchObject({
        message: 'busy: more than 1 requests in flight; retry',
        extensions: { code: 'UNAVAILABLE' },
      });
      const again = await fetch(running.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ __typename }"}',
      });
      expect(again.status).toBe(200);
    } finally {
      await running.close();
    }
  });
});

describe('the server process', () => {
  it('on SIGTERM fails /ready first while still serving (answers close their connection), finishes the request in flight, and exits 0', async () => {
    const srv = await spawnServer({ args: ['--shutdown-delay-ms', '1500', '--time-budget-ms', '10000'] });
    try {
      const query = JSON.stringify({
        query:
          '{ recommend(input: { workload: { model: "resnet50_v1.5", samples: 1e8 }, maxNodes: 2, limit: 1 }) { status plans { costUsd } } }',
      });
      let readyDuringDelay = 0;
      let servedDuringDelay = '';
      const answer = await splitPost(srv.url, query, async () => {
        await sleep(300); // the server has the headers: the request is in flight
        srv.proc.kill('SIGTERM');
        await sleep(300);
        readyDuringDelay = (await fetch(`${srv.base}/ready`)).status;
        const health = await fetch(`${srv.base}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"query":"{ __typename }"}',
        });
        servedDuringDelay = `${health.status} ${health.headers.get('connection')}`;
        await sleep(1700);
      });
      expect(readyDuringDelay).toBe(503);
      expect(servedDuringDelay).toBe('200 close');
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text).data.recommend.status).toBe('COMPLETE');
      expect(await srv.exited).toBe(0);
      const msgs = srv.logs.map((l) => l.msg);
      expect(msgs).toContain(
        'shutting down: /ready fails, then the port closes and accepted requests finish',
      );
      expect(msgs.indexOf('stopped')).toBeGreaterThan(msgs.lastIndexOf('request'));
    } finally {
      await srv.stop('SIGKILL');
    }
  });

  it('--workers 2: two processes share the port, a dead worker is replaced, SIGTERM stops them all', async () => {
    const srv = await spawnServer({ workers: 2 });
    try {
      const pids = new Set<number>();
      for (let i = 0; i < 8 && pids.size < 2; i++) pids.add(await pidOf(srv.base));
      expect(pids.size).toBe(2);
      const [victim] = pids;
      process.kill(victim, 'SIGKILL');
      let replaced = false;
      // Up to 30 s: the new worker warms up (one search) before it listens, on a loaded CI machine.
      for (let i = 0; i < 300 && !replaced; i++) {
        await sleep(100);
        replaced = srv.logs.filter((l) => l.msg === 'listening').length >= 3;
      }
      expect(replaced).toBe(true);
      expect(
        srv.logs.some((l) => l.msg === 'worker exited; starting another' && l.workerPid === victim),
      ).toBe(true);
      const after = new Set<number>();
      for (let i = 0; i < 8 && after.size < 2; i++) after.add(await pidOf(srv.base));
      expect(after.has(victim)).toBe(false);
      expect(after.size).toBe(2);
      expect(await srv.stop('SIGTERM')).toBe(0);
      expect(srv.logs.map((l) => l.msg)).toContain('all workers stopped');
    } finally {
      await srv.stop('SIGKILL');
    }
  });
});

describe('a measurement store that does not answer', () => {
  it('holds up neither the start nor a request: both fail over to a clear error after the connect timeout', async () => {
    // A host that accepts the connection and never speaks: without a connect timeout the driver
    // waits for its handshake forever, and so did the warm-up (before the port opened) and every
    // request that reads the user's runs.
    const silent = createNetServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const before = runtimeConfig();
    const lines: Record<string, unknown>[] = [];
    setLogSink((line) => lines.push(JSON.parse(line)));
    let running: Running | undefined;
    try {
      running = await startServer(0, '127.0.0.1', {
        databaseUrl: `postgres://trainplan:secret@127.0.0.1:${port}/runs`,
        logLevel: 'info',
        warmUp: 1,
      });
      const warm = lines.find((l) => l.msg === 'warmed up');
      expect(warm?.refused).toMatch(/^INTERNAL_SERVER_ERROR/);
      const { json } = await postGraphql(running.url, {
        query:
          '{ predict(input: { workload: { model: "resnet50_v1.5", samples: 1e6 }, gpu: "A100-SXM4-80GB", batchSizePerGpu: 64, precision: AMP_FP16 }) { stepTimeMs } }',
      });
      expect(json.errors?.[0].extensions.code).toBe('INTERNAL_SERVER_ERROR');
      // The log says why, without the password.
      const fault = lines.find((l) => l.msg === 'internal error' && l.path === 'predict');
      expect(String(fault?.error)).toMatch(/connection timeout/);
      expect(JSON.stringify(lines)).not.toContain('secret');
    } finally {
      await running?.close();
      setLogSink(undefined);
      setRuntimeConfig(before);
      silent.close();
    }
  });
});
