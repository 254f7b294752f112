// Load: concurrent clients (autocannon) against predict and recommend on 127.0.0.1 for a fixed
// time, with 1 and with 2 workers (trainplan serve --workers N); prints requests/s, p50/p99
// latency and errors. Recommend runs twice: one identical request over and over (after the first,
// the LRU cache answers) and a stream of distinct requests (every one a search): the difference
// is the cache's effect. "server time" is each request's durationMs from the server's own log: the
// work, without the wait in the queue that the client-side latency also holds. SEARCH_TIMEOUT counts
// the answers that were refusals (a 200 with a GraphQL error, which autocannon counts as answered).
// Then faults under load (BENCH_FAULTS=0 skips them): with 2 workers and the same clients, one worker
// gets SIGTERM mid-load (it drains while the other serves, and is replaced), one worker gets SIGKILL
// (a crash: its in-flight requests are lost, the only failures allowed), and finally the primary
// gets SIGTERM (the whole server drains). Each reports requests answered, failed (reset or cut
// after being sent: goal zero except for the crash) and refused (new connections after the port
// closed, which a load balancer would have sent elsewhere).
// Run: npx tsx bench/load.ts   (BENCH_DURATION seconds per run, default 10; BENCH_CONNECTIONS, default 16;
//      BENCH_WORKERS, default "1,2")
import autocannon from 'autocannon';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { mkdtempSync, readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServerOnPort } from '../test/spawn-server.js';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const workerCounts = (process.env.BENCH_WORKERS ?? '1,2').split(',').map(Number);

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });

const PREDICT = JSON.stringify({
  query:
    '{ predict(input: { workload: { model: "bert_large_squad", samples: 8.8e6 }, gpu: "A100-SXM4-80GB", nodes: 2, gpusPerNode: 8, batchSizePerGpu: 32, precision: AMP_BF16 }) { stepTimeMs totalHours costUsd memoryGbPerGpu predictor } }',
});
const RECOMMEND_QUERY =
  'query($input: RecommendInput!) { recommend(input: $input) { status evaluated feasible plans { rank gpu { id } nodes gpusPerNode batchSizePerGpu precision totalHours costUsd } paretoFront { totalHours costUsd } } }';
/** A typical page request: six GPU types, every precision, the model's batch sizes, up to 8 nodes (7,680 candidates). */
const recommendInput = (samples: number) => ({
  workload: { model: 'resnet50_v1.5', samples },
  objective: 'COST',
  deadlineHours: 48,
  maxNodes: 8,
  limit: 10,
  gpus: ['T4', 'A10G', 'L4', 'V100-SXM2-16GB', 'A100-SXM4-80GB', 'H100-SXM5-80GB'],
});
const RECOMMEND_SAME = JSON.stringify({
  query: RECOMMEND_QUERY,
  variables: { input: recommendInput(1.2e8) },
});

interface Row {
  workers: number;
  scenario: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** Answered with a SEARCH_TIMEOUT refusal (a 200 with a GraphQL error), not with plans. */
  searchTimeouts: number;
  total: number;
  serverP50: number;
  serverP99: number;
}

/** durationMs of the requests the server logged from line `from` on: its own time per request, without queueing. */
function serverDurations(logFile: string, from: number): { lines: number; p50: number; p99: number } {
  const lines = readFileSync(logFile, 'utf8').split('\n');
  const d = lines
    .slice(from)
    .filter((l) => l.includes('"msg":"request"') && l.includes('"path":"/graphql"'))
    .map((l) => (JSON.parse(l) as { durationMs: number }).durationMs)
    .sort((a, b) => a - b);
  const q = (p: number) => (d.length ? d[Math.min(d.length - 1, Math.floor(p * d.length))] : NaN);
  return { lines: lines.length - 1, p50: q(0.5), p99: q(0.99) };
}

async function run(
  url: string,
  scenario: string,
  body: string | ((i: number) => string),
): Promise<Omit<Row, 'workers' | 'serverP50' | 'serverP99'>> {
  let i = 0,
    searchTimeouts = 0;
  const headers = { 'content-type': 'application/json' };
  const onResponse = (_: number, text: string) => {
    if (text.includes('"SEARCH_TIMEOUT"')) searchTimeouts++;
  };
  const r = await autocannon({
    url,
    connections,
    duration,
    timeout: 30,
    requests: [
      typeof body === 'string'
        ? { method: 'POST', headers, body, onResponse }
        : { method: 'POST', headers, setupRequest: (req) => ({ ...req, body: body(i++) }), onResponse },
    ],
  });
  return {
    scenario,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
    searchTimeouts,
    total: r.requests.total,
  };
}

async function check(url: string, body: string) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const j = (await res.json()) as {
    errors?: { message: string }[];
    data?: { recommend?: { status: string } };
  };
  if (!res.ok || j.errors) throw new Error(`bench request failed: ${res.status} ${JSON.stringify(j.errors)}`);
  if (j.data?.recommend && j.data.recommend.status !== 'COMPLETE')
    throw new Error('bench recommend did not complete within the budget');
}

const dir = mkdtempSync(join(tmpdir(), 'trainplan-load-'));
const rows: Row[] = [];
console.log(
  `load benchmark: ${duration}s per run, ${connections} connections, node ${process.version}, ${availableParallelism()} CPUs (autocannon shares them)`,
);
for (const workers of workerCounts) {
  const logFile = join(dir, `server-${workers}.log`);
  const srv = await spawnServerOnPort(await freePort(), { workers, logFile });
  try {
    await check(srv.url, PREDICT);
    await check(srv.url, RECOMMEND_SAME);
    // Distinct requests: a different amount of work each time, so every one misses the cache.
    let seq = 0;
    const distinct = () =>
      JSON.stringify({ query: RECOMMEND_QUERY, variables: { input: recommendInput(1e8 + ++seq * 1000) } });
    await check(srv.url, distinct());
    for (const [scenario, body] of [
      ['predict', PREDICT],
      ['recommend, identical (cache hits)', RECOMMEND_SAME],
      ['recommend, distinct (cache misses)', distinct],
    ] as const) {
      const from = serverDurations(logFile, 0).lines;
      const r = await run(srv.url, scenario, body);
      await new Promise((res) => setTimeout(res, 300)); // let the last log lines land
      const server = serverDurations(logFile, from);
      const row: Row = { workers, ...r, serverP50: server.p50, serverP99: server.p99 };
      rows.push(row);
      console.log(
        `${String(workers).padStart(2)} worker(s)  ${scenario.padEnd(36)} ${row.rps.toFixed(0).padStart(6)} req/s  p50 ${String(row.p50).padStart(5)} ms  p99 ${String(row.p99).padStart(5)} ms  errors ${row.errors}  non-2xx ${row.non2xx}  SEARCH_TIMEOUT ${row.searchTimeouts}  (${row.total} requests; server time p50 ${row.serverP50} ms, p99 ${row.serverP99} ms)`,
      );
    }
  } finally {
    console.log(
      `   exit ${await srv.stop('SIGTERM')}; server log ${logFile} (${readFileSync(logFile, 'utf8').split('\n').length} lines)`,
    );
  }
}
console.log(
  '\n| workers | scenario | req/s | p50 ms | p99 ms | errors | non-2xx | SEARCH_TIMEOUT | server p50 ms | server p99 ms |\n|---|---|---|---|---|---|---|---|---|---|',
);
for (const r of rows)
  console.log(
    `| ${r.workers} | ${r.scenario} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.non2xx} | ${r.searchTimeouts} | ${r.serverP50} | ${r.serverP99} |`,
  );

// ------------------------------------------------------------------ faults under load

interface Tally {
  sent: number;
  ok: number;
  non2xx: number;
  /** Sent, then reset or cut before a full answer: what a drain must never do. */
  failed: number;
  /** Connection refused: the port was closed (after the drain) before the request was sent. */
  refused: number;
  codes: Record<string, number>;
}

function send(agent: Agent, url: string, body: string): Promise<'ok' | 'non2xx' | 'refused' | string> {
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode && res.statusCode < 300 ? 'ok' : 'non2xx'));
        res.on('error', (e) => resolve((e as NodeJS.ErrnoException).code ?? 'error'));
      },
    );
    req.on('error', (e) => {
      const code = (e as NodeJS.ErrnoException).code ?? 'error';
      resolve(code === 'ECONNREFUSED' ? 'refused' : code);
    });
    req.end(body);
  });
}

/**
 * `connections` clients in closed loop until `stop` resolves; the tally. With `balancer`, they act
 * as a load balancer would: /ready is polled every 200 ms and no new request is sent once it fails.
 */
async function closedLoop(
  url: string,
  bodies: () => string,
  stop: Promise<unknown>,
  balancer?: string,
): Promise<Tally> {
  const t: Tally = { sent: 0, ok: 0, non2xx: 0, failed: 0, refused: 0, codes: {} };
  let stopped = false;
  void stop.then(() => (stopped = true));
  if (balancer)
    void (async () => {
      while (!stopped) {
        try {
          if ((await fetch(`${balancer}/ready`, { headers: { connection: 'close' } })).status !== 200)
            stopped = true;
        } catch {
          stopped = true;
        }
        await new Promise((res) => setTimeout(res, 200));
      }
    })();
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (!stopped) {
        t.sent++;
        const r = await send(agent, url, bodies());
        if (r === 'ok') t.ok++;
        else if (r === 'non2xx') t.non2xx++;
        else if (r === 'refused') {
          t.refused++;
          await new Promise((res) => setTimeout(res, 50));
        } else {
          t.failed++;
          t.codes[r] = (t.codes[r] ?? 0) + 1;
        }
      }
    }),
  );
  agent.destroy();
  return t;
}

const readyPid = async (base: string) =>
  ((await (await fetch(`${base}/ready`, { headers: { connection: 'close' } })).json()) as { pid: number })
    .pid;

if (process.env.BENCH_FAULTS !== '0') {
  const logFile = join(dir, 'server-faults.log');
  const srv = await spawnServerOnPort(await freePort(), { workers: 2, logFile });
  let seq = 0;
  const mixed = () =>
    ++seq % 4 === 0
      ? JSON.stringify({ query: RECOMMEND_QUERY, variables: { input: recommendInput(2e8 + seq * 1000) } })
      : PREDICT;
  const phases: { phase: string; tally: Tally }[] = [];
  const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));
  for (const [phase, signal] of [
    ['SIGTERM to one worker mid-load', 'SIGTERM'],
    ['SIGKILL to one worker mid-load (a crash)', 'SIGKILL'],
  ] as const) {
    const stop = sleep(duration * 1e3);
    const load = closedLoop(srv.url, mixed, stop);
    await sleep((duration * 1e3) / 3);
    process.kill(await readyPid(srv.base), signal);
    phases.push({ phase, tally: await load });
    await sleep(3000); // the primary's replacement worker starts
  }
  // The whole server: SIGTERM to the primary; the clients, as a load balancer, stop sending once
  // /ready fails (shutdownDelayMs, 1 s, before anything closes) and wait for what they sent.
  const load = closedLoop(srv.url, mixed, srv.exited, srv.base);
  await sleep((duration * 1e3) / 3);
  srv.proc.kill('SIGTERM');
  phases.push({ phase: `SIGTERM to the primary mid-load (exit ${await srv.exited})`, tally: await load });
  console.log(
    `\nfaults under load (2 workers, ${connections} keep-alive clients, predict with every 4th a recommend search):\n| fault | sent | answered 2xx | non-2xx | failed (reset after sending) | refused (port closed) |\n|---|---|---|---|---|---|`,
  );
  for (const { phase, tally: t } of phases)
    console.log(
      `| ${phase} | ${t.sent} | ${t.ok} | ${t.non2xx} | ${t.failed}${Object.keys(t.codes).length ? ` (${JSON.stringify(t.codes)})` : ''} | ${t.refused} |`,
    );
  console.log(`server log ${logFile}`);
}
