// Every zoo model on every catalog GPU in four precision modes at two batch sizes, through the
// GraphQL API as a frontend asks: what is refused and why (counted by reason), and whether any
// answer breaks what an answer must hold: every number finite and positive, P10 <= estimate <=
// P90, an 80% interval narrower than 4x, and a larger batch that fits not slower per sample (one
// that does not fit is said so by fitsInMemory; its step is hypothetical, and beyond every measured
// row the correction may let it creep up a few percent). Prints the refusals and every breach.
//
//   npx tsx bench/predict-sweep.ts [--batches 8,32] [--precisions FP32,AMP_FP16,AMP_BF16,FP8]
import { createApollo } from '../server/apollo.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return (i >= 0 ? process.argv[i + 1] : fallback).split(',');
};
const batches = arg('batches', '8,32').map(Number);
const precisions = arg('precisions', 'FP32,AMP_FP16,AMP_BF16,FP8');
const server = await createApollo();
async function ask(query: string, variables: Record<string, unknown> = {}) {
  const res = await server.executeOperation(
    { query, variables },
    { contextValue: { deadlineAt: performance.now() + 60_000 } },
  );
  if (res.body.kind !== 'single') throw new Error('expected a single result');
  return res.body.singleResult as { data?: Record<string, unknown>; errors?: { message: string }[] };
}
const PREDICT = `query($i: PredictInput!) { predict(input: $i) {
  stepTimeMs stepTimeMsP10 stepTimeMsP90 throughput memoryGbPerGpu fitsInMemory totalHours } }`;
const gpus = ((await ask('{ gpus { id } }')).data!.gpus as { id: string }[]).map((g) => g.id);
const models = ((await ask('{ models { id } }')).data!.models as { id: string }[]).map((m) => m.id);
const refusals = new Map<string, number>();
const breaches: string[] = [];
let answered = 0;
const started = performance.now();
for (const model of models)
  for (const gpu of gpus)
    for (const precision of precisions) {
      const perSample: { batch: number; ms: number; fits: boolean }[] = [];
      for (const batchSizePerGpu of batches) {
        const r = await ask(PREDICT, {
          i: { workload: { model, samples: 1e6 }, gpu, batchSizePerGpu, precision },
        });
        const at = `${model} on ${gpu} at ${precision}, batch ${batchSizePerGpu}`;
        if (r.errors) {
          // The reason without the names in it, so one reason counts once.
          const reason = r.errors[0].message.replace(gpu, '<gpu>').replace(model, '<model>').slice(0, 110);
          refusals.set(reason, (refusals.get(reason) ?? 0) + 1);
          continue;
        }
        answered++;
        const p = r.data!.predict as Record<string, number | boolean>;
        for (const [k, v] of Object.entries(p))
          if (typeof v === 'number' && !(Number.isFinite(v) && v > 0)) breaches.push(`${at}: ${k} = ${v}`);
        const [lo, mid, hi] = [p.stepTimeMsP10, p.stepTimeMs, p.stepTimeMsP90] as number[];
        if (!(lo <= mid && mid <= hi)) breaches.push(`${at}: interval ${lo}..${hi} around ${mid}`);
        if (hi / lo > 4) breaches.push(`${at}: interval x${(hi / lo).toFixed(1)} wide`);
        perSample.push({ batch: batchSizePerGpu, ms: mid / batchSizePerGpu, fits: p.fitsInMemory === true });
      }
      for (let k = 1; k < perSample.length; k++)
        if (perSample[k].fits && perSample[k].ms > 1.05 * perSample[k - 1].ms)
          breaches.push(
            `${model} on ${gpu} at ${precision}: batch ${perSample[k].batch} slower per sample than ${perSample[k - 1].batch}`,
          );
    }
await server.stop();
console.log(
  `${models.length} models x ${gpus.length} GPUs x ${precisions.length} precisions x ${batches.length} batches: ${answered} answered, ${[...refusals.values()].reduce((a, b) => a + b, 0)} refused, ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
console.log('\nrefused, by reason:');
for (const [reason, n] of [...refusals].sort((a, b) => b[1] - a[1]))
  console.log(`  ${String(n).padStart(5)}  ${reason}`);
console.log(`\nbreaches: ${breaches.length}`);
for (const b of breaches.slice(0, 50)) console.log(`  ${b}`);
