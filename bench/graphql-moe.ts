// The GraphQL defaults for an imported mixture-of-experts config, as a user first asks: recommend
// over the whole catalog (default precisions, 1-16 GPUs per node, up to 8 nodes, the model's six
// batch sizes: 102,480 candidates) for Qwen3-30B-A3B's Hugging Face config.json at MEGATRON, through
// the HTTP server (startServer: the learned model loads at startup) with its default time budget.
// Prints per request the CPU time of this process (server and client), the wall time and whether it
// answered or was refused (SEARCH_TIMEOUT). The answer cache is cleared before each request.
// The server warms up before it listens (server/warm-up.ts); TRAINPLAN_WARM_UP=0 shows the first
// request without it.
// Run: npx tsx bench/graphql-moe.ts   (BENCH_RUNS requests, default 4; MODEL_ID another HF config;
// REQUEST_BUDGET_MS asks for that timeBudgetMs, up to the server's maxTimeBudgetMs)
import { startServer } from '../server/app.js';
import { recommendCache } from '../service/cache.js';
import { HF_CONFIGS } from '../test/import-fixtures.js';

const id = process.env.MODEL_ID ?? 'Qwen/Qwen3-30B-A3B';
const fixture = HF_CONFIGS.find((c) => c.id === id);
if (!fixture) throw new Error(`no Hugging Face config ${id} in test/import-fixtures.ts`);
const query = `query($config: String!) {
  recommend(input: { workload: { customModel: { huggingFaceConfig: $config }, seqLen: 4096, samples: 1e11 }, softwareStack: MEGATRON${process.env.REQUEST_BUDGET_MS ? `, timeBudgetMs: ${Number(process.env.REQUEST_BUDGET_MS)}` : ''} }) {
    evaluated plans { gpu { id } precision nodes gpusPerNode }
  }
}`;
const server = await startServer(0, '127.0.0.1');
console.log(
  `GraphQL recommend defaults for ${id} (node ${process.version}, budget ${process.env.REQUEST_BUDGET_MS || server.config.timeBudgetMs} ms)`,
);
for (let i = 1; i <= Number(process.env.BENCH_RUNS ?? 4); i++) {
  recommendCache.clear();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const res = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables: { config: JSON.stringify(fixture.config) } }),
  });
  const body = (await res.json()) as {
    data?: {
      recommend: { evaluated: number; plans: { gpu: { id: string }; precision: string; nodes: number }[] };
    };
    errors?: { extensions?: { code?: string } }[];
  };
  const cpu = process.cpuUsage(cpu0);
  const answer = body.errors
    ? `refused: ${body.errors[0].extensions?.code}`
    : `${body.data!.recommend.plans.length} plans of ${body.data!.recommend.evaluated} candidates, plan 1 ${body.data!.recommend.plans[0]?.nodes} x ${body.data!.recommend.plans[0]?.gpu.id} ${body.data!.recommend.plans[0]?.precision}`;
  console.log(
    `request ${i}: CPU ${Math.round((cpu.user + cpu.system) / 1e3)} ms, wall ${Math.round(performance.now() - t0)} ms, ${answer}`,
  );
}
await server.close();
