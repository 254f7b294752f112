// The coupled planners against their time limit, and the event loop meanwhile: a 1,000-client
// federated round (timeLimitSeconds 10) and a 60-job, 20-option, 120-month procurement
// (timeLimitSeconds 5), run in-process through GraphQL while a 10 ms timer measures how late the
// event loop runs it (its worst lag is how long /health would have waited).
// Run: npx tsx bench/planner-limits.ts   (TRAINPLAN_PLANNER_WORKER=0 plans on the event loop, as before issue 14)
import { createApollo } from '../server/apollo.js';
import { syntheticFederated, syntheticProcurement } from '../test/synthetic-requests.js';

const apollo = await createApollo();
const cases = [
  {
    name: 'federated round, 1,000 clients, timeLimitSeconds 10',
    query: 'query($input: FederatedInput!) { planFederatedRound(input: $input) { status } }',
    input: syntheticFederated({ clients: 1000, timeLimitSeconds: 10 }),
  },
  {
    name: 'procurement, 60 jobs x 20 options x 120 months, timeLimitSeconds 5',
    query: 'query($input: ProcurementInput!) { planProcurement(input: $input) { status } }',
    input: syntheticProcurement({ jobs: 60, options: 20, months: 120, timeLimitSeconds: 5 }),
  },
];

console.log(
  `planner threads: ${/^(0|off|false|no)$/i.test(process.env.TRAINPLAN_PLANNER_WORKER ?? '') ? 'off (event loop)' : 'on'}`,
);
console.log('| case | answer | wall s | worst event-loop lag s |\n|---|---|---|---|');
for (const c of cases) {
  let worst = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 10);
    last = now;
  }, 10);
  const t0 = performance.now();
  const r = await apollo.executeOperation({ query: c.query, variables: { input: c.input } });
  const wall = performance.now() - t0;
  clearInterval(timer);
  const body = r.body.kind === 'single' ? r.body.singleResult : undefined;
  const answer = body?.errors
    ? `${body.errors[0].extensions?.code} ${String(body.errors[0].extensions?.field ?? '')}`
    : `status ${String((Object.values(body?.data ?? {})[0] as { status?: string } | undefined)?.status)}`;
  console.log(`| ${c.name} | ${answer} | ${(wall / 1e3).toFixed(1)} | ${(worst / 1e3).toFixed(2)} |`);
}
await apollo.stop();
process.exit(0);
