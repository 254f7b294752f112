// How many of recommend's plans the measurement harness can time: every zoo model, under the
// eager and the Megatron stack, up to 4 nodes, the top 10 plans each, through the GraphQL API as a
// frontend asks. Prints the plans that come with harness commands and, for the others, each
// reason the note gives (counted).
//
//   npx tsx bench/harness-coverage.ts [--max-nodes 4] [--limit 10]
import { createApollo } from '../server/apollo.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const server = await createApollo();
async function ask<T>(query: string, variables: Record<string, unknown> = {}) {
  const res = await server.executeOperation(
    { query, variables },
    { contextValue: { deadlineAt: performance.now() + 120_000 } },
  );
  if (res.body.kind !== 'single') throw new Error('expected a single result');
  return res.body.singleResult as { data?: T; errors?: { message: string }[] };
}
interface Plans {
  recommend: { plans: { harness: { commands: string[]; note: string } }[] };
}
const RECOMMEND = `query($i: RecommendInput!) { recommend(input: $i) { plans { harness { commands note } } } }`;
const models = (await ask<{ models: { id: string }[] }>('{ models { id } }')).data!.models.map((m) => m.id);
let plans = 0,
  timed = 0;
const reasons = new Map<string, number>();
for (const model of models)
  for (const softwareStack of ['PYTORCH_EAGER', 'MEGATRON']) {
    const r = await ask<Plans>(RECOMMEND, {
      i: {
        workload: { model, samples: 1e6 },
        softwareStack,
        maxNodes: arg('max-nodes', 4),
        limit: arg('limit', 10),
      },
    });
    if (r.errors) {
      console.log(`${model} ${softwareStack}: ${r.errors[0].message}`);
      continue;
    }
    for (const p of r.data!.recommend.plans) {
      plans++;
      if (p.harness.commands.length) timed++;
      else {
        const why = p.harness.note.split(': time it with your own training code')[0];
        reasons.set(why, (reasons.get(why) ?? 0) + 1);
      }
    }
  }
console.log(`${timed} of ${plans} plans (${((100 * timed) / plans).toFixed(1)}%) come with harness commands`);
for (const [why, n] of [...reasons].sort((a, b) => b[1] - a[1])) console.log(`${n}\t${why}`);
process.exit(0);
