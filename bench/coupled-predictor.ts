// What timing the coupled planners' configurations with the learned correction (the default, as
// recommend) costs against the roofline alone: the docs' fleet, procurement and federated examples
// and a 20-job x 10-option procurement, each asked with predictor LEARNED and ANALYTICAL in one run,
// alternating, median wall time of BENCH_RUNS (default 3), in-process through GraphQL (planner threads).
// Run: npx tsx bench/coupled-predictor.ts
import { readFileSync } from 'node:fs';
import { createApollo } from '../server/apollo.js';
import { syntheticProcurement } from '../test/synthetic-requests.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const apollo = await createApollo();
const example = (name: string) =>
  JSON.parse(readFileSync(new URL(`../docs/examples/${name}`, import.meta.url), 'utf8')) as Record<
    string,
    unknown
  >;
const FLEET =
  'query($input: FleetInput!) { planFleet(input: $input) { status predictor modelSize { candidates } } }';
const PROCUREMENT =
  'query($input: ProcurementInput!) { planProcurement(input: $input) { status predictor modelSize { candidates } } }';
const FEDERATED =
  'query($input: FederatedInput!) { planFederatedRound(input: $input) { status predictor modelSize { candidates } } }';
const cases = [
  { name: 'fleet, docs/examples/fleet.json', query: FLEET, input: example('fleet.json') },
  { name: 'fleet, docs/examples/fleet-makespan.json', query: FLEET, input: example('fleet-makespan.json') },
  {
    name: 'procurement, docs/examples/procurement.json',
    query: PROCUREMENT,
    input: example('procurement.json'),
  },
  { name: 'federated, docs/examples/federated.json', query: FEDERATED, input: example('federated.json') },
  {
    name: 'federated, docs/examples/federated-dropouts.json',
    query: FEDERATED,
    input: example('federated-dropouts.json'),
  },
  {
    name: 'procurement, 20 jobs x 10 options x 24 months',
    query: PROCUREMENT,
    input: syntheticProcurement({ jobs: 20, options: 10, months: 24, timeLimitSeconds: 60 }),
  },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log('| case | candidates | LEARNED s | ANALYTICAL s | ratio |\n|---|---:|---:|---:|---:|');
for (const c of cases) {
  const times: Record<string, number[]> = { LEARNED: [], ANALYTICAL: [] };
  let candidates = '';
  for (let i = 0; i < RUNS; i++)
    for (const predictor of ['LEARNED', 'ANALYTICAL'] as const) {
      const t0 = performance.now();
      const r = await apollo.executeOperation({
        query: c.query,
        variables: { input: { ...c.input, predictor } },
      });
      times[predictor].push((performance.now() - t0) / 1e3);
      const body = r.body.kind === 'single' ? r.body.singleResult : undefined;
      if (body?.errors) throw new Error(`${c.name} (${predictor}): ${body.errors[0].message}`);
      const plan = Object.values(body?.data ?? {})[0] as { modelSize: { candidates: number } };
      if (predictor === 'LEARNED') candidates = String(plan.modelSize.candidates);
    }
  const [l, a] = [median(times.LEARNED), median(times.ANALYTICAL)];
  console.log(`| ${c.name} | ${candidates} | ${l.toFixed(2)} | ${a.toFixed(2)} | ${(l / a).toFixed(2)} |`);
}
await apollo.stop();
process.exit(0);
