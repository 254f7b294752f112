// How long a recommend holds the event loop at a stretch: while the catalog's default ResNet-50
// request runs alone in the server's process, a 1 ms interval timer records the longest gap between
// its ticks (the longest the process could not read a request or answer a probe). The server gives
// the loop back between slices of its search and correction (predictor/turns.ts, SLICE_MS) and
// between onnxruntime's runs (predictor/learned/onnx.ts, RUN_ROWS); the gap is a slice plus what runs
// between two pauses. The answer cache is cleared before each request; the first is a warm-up.
// Run: npx tsx bench/event-loop.ts   (BENCH_RUNS requests, default 10)
import { startServer } from '../server/app.js';
import { recommendCache } from '../service/cache.js';

const runs = Number(process.env.BENCH_RUNS ?? 10);
const server = await startServer(0, '127.0.0.1');
const query = (samples: number) =>
  `{ recommend(input: { workload: { model: "resnet50_v1.5", samples: ${samples} }, limit: 3 }) { feasible } }`;
const gaps: number[] = [];
const times: number[] = [];
for (let i = 0; i <= runs; i++) {
  recommendCache.clear();
  let last = performance.now(),
    longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  const t0 = performance.now();
  const res = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: query(1.2e8 + i) }),
  });
  const body = (await res.json()) as { errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  const ms = performance.now() - t0;
  clearInterval(timer);
  if (i === 0) continue;
  gaps.push(longest);
  times.push(ms);
}
await server.close();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `ResNet-50, catalog defaults, ${runs} requests: longest event-loop gap median ${median(gaps).toFixed(0)} ms (max ${Math.max(...gaps).toFixed(0)}); request median ${median(times).toFixed(0)} ms`,
);
