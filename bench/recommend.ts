// Optimizer speed: candidates per second and recommend latency (median, p95) for searches of at
// least 50,000 candidates, straight through the library and through GraphQL.
// Run: npm run bench
import 'reflect-metadata';
import { graphql } from 'graphql';
import { recommend, searchSize, type RecommendRequest } from '../optimizer/recommend.js';
import { defaultInterNodeGbps, loadEfficiency } from '../seeds/catalog.js';
import { trainplanSchema } from '../server/schema.js';
import { llmModel } from '../predictor/llm.js';
import { loadLlmArchitectures } from '../seeds/llm.js';
import { benchRequest, modelRequest } from './requests.js';

const eff = loadEfficiency();

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const runs = Number(process.env.BENCH_RUNS ?? 20);

/** Times one request `times` times after a warm-up (model costs, JIT) and prints the median and p95. */
function timeRequest(label: string, req: RecommendRequest, times: number) {
  recommend(req, eff);
  const ms: number[] = [];
  let evaluated = 0;
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    evaluated = recommend(req, eff).evaluated;
    ms.push(performance.now() - t0);
  }
  const med = quantile(ms, 0.5);
  console.log(
    `${label.padEnd(34)} ${String(searchSize(req)).padStart(8)} enumerated ${String(evaluated).padStart(8)} evaluated  median ${med.toFixed(1).padStart(7)} ms  p95 ${quantile(ms, 0.95).toFixed(1).padStart(7)} ms  ${(evaluated / (med / 1e3) / 1e6).toFixed(2)} M candidates/s  (${times} runs)`,
  );
}

const bench = (label: string, modelId: string, maxNodes: number, batchSizes: number[]) =>
  timeRequest(
    label,
    benchRequest(modelId, {
      maxNodes,
      gpusPerNodeChoices: [1, 2, 4, 8, 16],
      batchSizes,
      interNodeGbps: (g) => defaultInterNodeGbps(g.id),
    }),
    runs,
  );

console.log(`recommend benchmark (${runs} runs each, node ${process.version})`);
bench('resnet50_v1.5, 64 nodes', 'resnet50_v1.5', 64, [32, 64, 128, 256]);
bench('bert_large_squad, 32 nodes', 'bert_large_squad', 32, [4, 8, 16, 32, 48]);
bench('gpt2_1558m, 128 nodes', 'gpt2_1558m', 128, [1, 2, 4, 8]);

// LLMs that fit nowhere without sharding: every layout searches TP, PP, ZeRO and recomputation, and a
// mixture-of-experts model EP too (parallel-search.ts). A user's first question, over the whole
// catalog at its defaults: every precision, 1-8 GPUs per node, up to 8 nodes, the model's batch sizes.
const archs = loadLlmArchitectures();
function benchLlm(name: string, llmRuns: number) {
  const model = llmModel(
    archs.find((a) => a.model === name)!,
    4096,
  );
  if (typeof model === 'string') throw new Error(model);
  timeRequest(
    `${name}, 8 nodes`,
    modelRequest(model, { maxNodes: 8, stack: 'MEGATRON', samples: 1e11, parallelismSearch: 'auto' }),
    llmRuns,
  );
}
const llmRuns = Number(process.env.BENCH_LLM_RUNS ?? 3);
benchLlm('Llama-3-70B', llmRuns);
benchLlm('Qwen3-30B-A3B', llmRuns);

const schema = await trainplanSchema();
// A different workload size each run, so the resolver's cache of identical requests never answers.
const query = (i: number) =>
  `{ recommend(input: { workload: { model: "resnet50_v1.5", samples: ${1.2e9 + i} }, maxNodes: 64, gpusPerNode: [1, 2, 4, 8, 16], batchSizes: [32, 64, 128, 256], limit: 10 }) { status predictor evaluated plans { rank gpu { id } costUsd totalHours } paretoFront { rank } } }`;
await graphql({ schema, source: query(-1) });
const times: number[] = [];
let evaluated = 0;
let label = '';
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  const r = await graphql({ schema, source: query(i) });
  if (r.errors) throw new Error(r.errors[0].message);
  const rec = (r.data as { recommend: { evaluated: number; status: string; predictor: string } }).recommend;
  evaluated = rec.evaluated;
  label = `${rec.predictor}, ${rec.status}`;
  times.push(performance.now() - t0);
}
console.log(
  `GraphQL recommend, resnet50, 64 nodes (${label})  ${evaluated} evaluated  median ${quantile(times, 0.5).toFixed(1)} ms  p95 ${quantile(times, 0.95).toFixed(1)} ms`,
);
