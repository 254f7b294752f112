import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type Running } from '../server/app.js';
import { loadZoo } from '../predictor/zoo/index.js';

let running: Running;
beforeAll(async () => {
  // This file checks the HTTP front, not the time budget (test/fuzz.test.ts does): a budget
  // generous enough that a busy test machine never turns the search into SEARCH_TIMEOUT.
  running = await startServer(0, '127.0.0.1', { timeBudgetMs: 60_000 });
});
afterAll(async () => {
  await running.close();
});

describe('the real HTTP server', () => {
  it('answers a recommend query over HTTP', async () => {
    const res = await fetch(running.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query:
          '{ recommend(input: { workload: { model: "resnet50_v1.5", samples: 1.2e8 }, maxNodes: 2, limit: 2 }) { plans { rank gpu { id } costUsd } } }',
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      errors?: unknown;
      data: { recommend: { plans: { costUsd: number }[] } };
    };
    expect(body.errors).toBeUndefined();
    expect(body.data.recommend.plans).toHaveLength(2);
    expect(body.data.recommend.plans[0].costUsd).toBeGreaterThan(0);
  });

  it('serves a local query page to browsers (no CDN), and /health', async () => {
    const page = await fetch(running.url, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('trainplan');
    expect(html).not.toMatch(/https?:\/\/(?!localhost)/);
    const health = await fetch(running.url.replace('/graphql', '/health'));
    expect(await health.json()).toEqual({ status: 'ok' });
  });

  it('hands out the measurement harness, a zoo model embedded when asked, and names a bad parameter', async () => {
    const at = (query: string) => fetch(running.url.replace('/graphql', `/harness/measure.py${query}`));
    const plain = await at('');
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-disposition')).toBe('attachment; filename="measure.py"');
    expect(await plain.text()).toMatch(/^EMBEDDED_MODEL = None$/m);
    // The same script `trainplan harness --model M --seq-len N` writes: the model's layers inside.
    const bert = await (await at('?model=bert_base_squad&seqLen=128')).text();
    const embedded = JSON.parse(JSON.parse(/^EMBEDDED_MODEL = json\.loads\((.*)\)$/m.exec(bert)![1])) as {
      id: string;
      seqLen: number;
    };
    expect(embedded).toMatchObject({ id: 'bert_base_squad', seqLen: 128 });
    const cases: [string, string, RegExp][] = [
      [
        '?model=nope',
        'model',
        new RegExp(
          `^model: unknown model "nope"; allowed: resnet50_v1\\.5, .* \\(${loadZoo().length} in all; see the query models\\)$`,
        ),
      ],
      ['?model=resnet50_v1.5&seqLen=abc', 'seqLen', /^seqLen: must be an integer/],
      ['?model=ncf_neumf&seqLen=64', 'seqLen', /no sequence length or image size to set/],
      ['?seqLen=64', 'seqLen', /^seqLen: needs model$/],
    ];
    for (const [query, field, message] of cases) {
      const res = await at(query);
      expect(res.status, query).toBe(400);
      const { errors } = (await res.json()) as {
        errors: { message: string; extensions: { code: string; field: string } }[];
      };
      expect(errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
      expect(errors[0].message).toMatch(message);
    }
  });

  it('rejects an oversized body and malformed JSON without a 5xx', async () => {
    const big = await fetch(running.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(2_000_000),
    });
    expect(big.status).toBe(413);
    const bad = await fetch(running.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query": ',
    });
    expect(bad.status).toBe(400);
    const unknownField = await fetch(running.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ nope }' }),
    });
    expect(unknownField.status).toBe(400);
  });
});
