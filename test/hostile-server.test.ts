// Faults at the HTTP front (issue 14), each against a real `trainplan serve` on 127.0.0.1:
// SIGTERM while requests wait on a busy event loop, partial headers, variables that amplify into
// huge errors or are coerced before their limits, and numbers that overflow in JSON.
import { connect } from 'node:net';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ERROR_MESSAGE_CHARS, MAX_INPUT_KEYS } from '../server/limits.js';
import { trainplanSchema } from '../server/schema.js';
import { spawnServer, type ServerProcess } from './spawn-server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One POST on its own connection; resolves with the status and body, or the socket error's code. */
function post(url: string, body: string): Promise<{ status: number; text: string } | { error: string }> {
  return new Promise((resolve) => {
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
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? String(e) }));
      },
    );
    req.on('error', (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? String(e) }));
    req.end(body);
  });
}

describe('variables are checked before GraphQL coerces them', () => {
  let srv: ServerProcess;
  beforeAll(async () => {
    srv = await spawnServer({ args: ['--max-body-bytes', '20000000'] });
  }, 60_000);
  afterAll(async () => {
    await srv?.stop('SIGKILL');
  });
  const Q = 'query($input: RecommendInput!) { recommend(input: $input) { status } }';

  it('no input type has more fields than the per-object key limit (so no valid request is refused)', async () => {
    const schema = await trainplanSchema();
    const widest = Math.max(
      ...Object.values(schema.getTypeMap())
        .filter((t) => t.constructor.name === 'GraphQLInputObjectType')
        .map((t) => Object.keys((t as unknown as { getFields(): object }).getFields()).length),
    );
    expect(widest).toBeGreaterThan(10);
    expect(widest).toBeLessThan(MAX_INPUT_KEYS);
  });

  it('50,000 unknown keys: a short 400 naming the object, not a 36-44 MB error after seconds of CPU', async () => {
    const junk: Record<string, number> = {};
    for (let i = 0; i < 50_000; i++) junk[`unknown_field_${i}`] = i;
    const t0 = performance.now();
    const r = await post(
      srv.url,
      JSON.stringify({
        query: Q,
        variables: { input: { workload: { model: 'resnet50_v1.5', samples: 1e6 }, ...junk } },
      }),
    );
    const ms = performance.now() - t0;
    expect('status' in r && r.status).toBe(400);
    if (!('text' in r)) return;
    expect(r.text.length).toBeLessThan(2000);
    const e = JSON.parse(r.text).errors[0];
    expect(e.extensions.code).toBe('BAD_USER_INPUT');
    expect(e.extensions.field).toBe('$input');
    expect(e.message).toMatch(/an object with 50001 keys; no input type has more than 100 fields/);
    expect(ms).toBeLessThan(3000);
  });

  it('a few unknown keys still get graphql-js errors, each message capped', async () => {
    const long: Record<string, string> = { model: 'resnet50_v1.5' };
    for (let i = 0; i < 90; i++) long[`k${i}`] = 'x'.repeat(5000);
    const r = await post(srv.url, JSON.stringify({ query: Q, variables: { input: { workload: long } } }));
    if (!('text' in r)) throw new Error(r.error);
    const errors = JSON.parse(r.text).errors as { message: string }[];
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) expect(e.message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS + 60);
    expect(r.text.length).toBeLessThan(200_000);
  });

  it('a million-entry layer list is refused before coercion, in well under a second of server time', async () => {
    const layers = Array.from({ length: 1_000_000 }, () => ({ type: 'relu' }));
    const t0 = performance.now();
    const r = await post(
      srv.url,
      JSON.stringify({
        query: 'query($m: ModelInput!) { modelSummary(customModel: $m) { parameters } }',
        variables: { m: { layers } },
      }),
    );
    const ms = performance.now() - t0;
    if (!('text' in r)) throw new Error(r.error);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).errors[0].message).toMatch(
      /^\$m\.layers: a list of 1000000 entries; no input takes more than 10000/,
    );
    expect(ms).toBeLessThan(5000);
  });

  it('1e999 in the JSON variables is named as an overflow at its path, not "null" or a bare "non numeric value"', async () => {
    const body = `{"query":${JSON.stringify(Q)},"variables":{"input":{"workload":{"model":"resnet50_v1.5","samples":1e999}}}}`;
    const r = await post(srv.url, body);
    if (!('text' in r)) throw new Error(r.error);
    expect(r.status).toBe(400);
    const e = JSON.parse(r.text).errors[0];
    expect(e.extensions.field).toBe('$input.workload.samples');
    expect(e.message).toMatch(/beyond the ±1\.8e308 a double holds/);
  });
});

describe('partial headers', () => {
  let srv: ServerProcess;
  beforeAll(async () => {
    srv = await spawnServer({ args: ['--request-timeout-ms', '2000'] });
  }, 60_000);
  afterAll(async () => {
    await srv?.stop('SIGKILL');
  });

  it('are cut at the documented header timeout (here 2 s), not up to 30 s later', async () => {
    const port = Number(new URL(srv.base).port);
    const t0 = performance.now();
    const closedAfter = await new Promise<number>((resolve, reject) => {
      const s = connect(port, '127.0.0.1', () => s.write('POST /graphql HTTP/1.1\r\nHost: x\r\nX-Slow: '));
      s.on('error', () => {});
      s.on('close', () => resolve(performance.now() - t0));
      setTimeout(() => reject(new Error('not cut within 10 s')), 10_000);
      s.resume();
    });
    expect(closedAfter).toBeGreaterThan(1900);
    expect(closedAfter).toBeLessThan(3500);
  });
});

describe('SIGTERM while requests wait on a busy event loop', () => {
  it('finishes every accepted request (none reset), then exits 0', async () => {
    // A long budget and grace: every waiting search gets to run (the drain, not the budget, is tested).
    const srv = await spawnServer({
      args: ['--shutdown-delay-ms', '200', '--time-budget-ms', '60000', '--shutdown-grace-ms', '60000'],
    });
    try {
      // Eight distinct searches at once: one runs, the others wait on its event loop, some not yet read.
      const answers = Array.from({ length: 8 }, (_, i) =>
        post(
          srv.url,
          JSON.stringify({
            query: `{ recommend(input: { workload: { model: "resnet50_v1.5", samples: ${1e8 + i} }, maxNodes: 8 }) { status plans { costUsd } } }`,
          }),
        ),
      );
      await sleep(150);
      srv.proc.kill('SIGTERM');
      const results = await Promise.all(answers);
      const failed = results.filter((r) => !('status' in r) || r.status !== 200);
      expect(failed, JSON.stringify(failed)).toEqual([]);
      // Answered, not reset, and answered in full.
      for (const r of results)
        if ('text' in r) {
          const body = JSON.parse(r.text);
          expect(body.data?.recommend?.status, r.text.slice(0, 500)).toBe('COMPLETE');
        }
      expect(await srv.exited).toBe(0);
    } finally {
      await srv.stop('SIGKILL');
    }
  }, 120_000);
});
