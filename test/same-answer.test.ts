// The same request gets the same answer however busy the server is: 8 clients at once against a
// real `trainplan serve` process (cache off, so every request searches) get byte-identical answers
// to the same requests asked one at a time, for ResNet-50, BERT and Llama questions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from './spawn-server.js';

const PLAN = `rank gpu { id } nodes gpusPerNode batchSizePerGpu precision totalHours totalHoursP90 costUsd costUsdP90 evidenceLevel
  offer { provider instance usdPerHour }`;
const QUESTIONS = [
  `{ recommend(input: { workload: { model: "resnet50_v1.5", samples: 115300000 }, deadlineHours: 24, maxNodes: 4, limit: 5 }) { status predictor evaluated feasible notes plans { ${PLAN} } paretoFront { ${PLAN} } rejected { reason count } } }`,
  `{ recommend(input: { workload: { model: "bert_large_squad", samples: 176000 }, maxNodes: 2, rankBy: P90, limit: 5 }) { status predictor evaluated feasible notes plans { ${PLAN} } paretoFront { ${PLAN} } rejected { reason count } } }`,
  `{ recommend(input: { workload: { model: "llama2_7b", samples: 2e9 }, gpus: ["A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB", "MI300X"], maxNodes: 4, limit: 5 }) { status predictor evaluated feasible notes plans { ${PLAN} } paretoFront { ${PLAN} } rejected { reason count } } }`,
];
const CLIENTS = 8;

let srv: ServerProcess;
beforeAll(async () => {
  // A generous budget: on this shared 2-core machine 8 concurrent searches must finish, not be refused.
  srv = await spawnServer({ args: ['--cache-entries', '0', '--time-budget-ms', '120000'] });
}, 60_000);
afterAll(async () => {
  await srv?.stop();
});

const ask = async (query: string) => {
  const res = await fetch(srv.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  expect(res.status).toBe(200);
  return res.text();
};

describe('the same answer under load', () => {
  it(`${CLIENTS} concurrent clients get exactly the answers of the same questions asked alone`, async () => {
    const alone: string[] = [];
    for (const q of QUESTIONS) alone.push(await ask(q));
    for (const a of alone) {
      expect(a).toContain('"status":"COMPLETE"');
      expect(a).toMatch(/"predictor":"gbdt-v\d+"/);
    }
    // Each client asks every question, starting at a different one, all at once.
    const loaded = await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        const answers: string[] = [];
        for (let k = 0; k < QUESTIONS.length; k++) {
          const i = (c + k) % QUESTIONS.length;
          answers[i] = await ask(QUESTIONS[i]);
        }
        return answers;
      }),
    );
    for (const answers of loaded) expect(answers).toEqual(alone);
  }, 300_000);
});
