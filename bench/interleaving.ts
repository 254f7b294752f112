// What searching interleaved pipelines (parallel-search.ts pipelineSchedules) costs and gives: the
// same requests with the stack's interleavedPipeline on and off, alternated in one process, their
// median search time and plan 1. MEGATRON on H100 and A100 (400 Gbps between nodes, flat prices),
// 8 GPUs per node, up to 32 nodes, with and without a fixed global batch.
// Run: npx tsx bench/interleaving.ts   (BENCH_RUNS timed runs each, default 5)
import { recommend, type Plan, type RecommendRequest } from '../optimizer/recommend.js';
import { overrideStackEffects } from '../predictor/software.js';
import { getGpu, loadEfficiency } from '../seeds/catalog.js';
import { benchRequest } from './requests.js';

const eff = loadEfficiency();
const runs = Number(process.env.BENCH_RUNS ?? 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const layout = (p: Plan | undefined) =>
  p
    ? `$${p.costUsd!.toFixed(0)} ${p.nodes} nodes TP${p.parallelism.tensorParallel} PP${p.parallelism.pipelineParallel} VP${p.parallelism.virtualPipelineStages}`
    : 'no plan';

for (const id of ['llama2_7b', 'llama3_70b', 'llama3_1_405b', 'qwen3_30b_a3b'])
  for (const globalBatch of [undefined, 1024]) {
    const req: RecommendRequest = benchRequest(id, {
      stack: 'MEGATRON',
      gpus: [getGpu('H100-SXM5-80GB')!, getGpu('A100-SXM4-80GB')!],
      maxNodes: 32,
      gpusPerNodeChoices: [8],
      samples: 1e11,
      parallelismSearch: 'auto',
      prices: { 'H100-SXM5-80GB': 6.88, 'A100-SXM4-80GB': 4 },
      interNodeGbps: () => 400,
      ...(globalBatch ? { globalBatch } : {}),
    });
    const timed = { on: [] as number[], off: [] as number[] };
    const top: { on?: Plan; off?: Plan } = {};
    for (let i = 0; i <= runs; i++)
      for (const mode of ['on', 'off'] as const) {
        const restore =
          mode === 'off' ? overrideStackEffects('MEGATRON', { interleavedPipeline: false }) : null;
        try {
          const t0 = performance.now();
          const r = recommend(req, eff);
          // The first round warms up (model costs, JIT) and is not timed.
          if (i > 0) timed[mode].push(performance.now() - t0);
          top[mode] = r.plans[0];
        } finally {
          restore?.();
        }
      }
    const on = median(timed.on),
      off = median(timed.off);
    console.log(
      `${id} globalBatch ${globalBatch ?? 'none'}: ${on.toFixed(0)} ms interleaving, ${off.toFixed(0)} ms without (x${(on / off).toFixed(2)}); plan 1 ${layout(top.on)} / ${layout(top.off)}`,
    );
  }
