// The two browser pages in real headless Chromium (Debian's package, driven by playwright-core;
// .ci/run installs it): the explorer draws the chart and the table, names the field at fault,
// exports CSV; GraphiQL loads and runs its default query; no request leaves the machine.
// SCREENSHOT=1 also rewrites docs/explorer.png.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startServer, type Running } from '../server/app.js';
import { setRuntimeConfig } from '../service/config.js';
import { HF_CONFIGS } from './import-fixtures.js';
import { throwawayStore } from './throwaway-store.js';

// The runs page records runs: into a store of this file's own, not the machine's.
throwawayStore('trainplan-browser-');

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOT = fileURLToPath(new URL('../docs/explorer.png', import.meta.url));

let running: Running;
let browser: Browser;
let context: BrowserContext;
let base: string;
const outside: string[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  expect(existsSync(CHROMIUM), `${CHROMIUM} missing: apt-get install -y chromium (see .ci/run)`).toBe(true);
  // A loaded test machine must not refuse the page's searches (SEARCH_TIMEOUT): budgets are not what this tests.
  running = await startServer(0, '127.0.0.1', { logLevel: 'warn', timeBudgetMs: 60_000 });
  base = running.url.replace('/graphql', '');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  context = await browser.newContext({ viewport: { width: 1400, height: 1300 }, acceptDownloads: true });
  // Anything not addressed to this server is recorded and refused.
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === '127.0.0.1' || url.protocol === 'blob:' || url.protocol === 'data:')
      return route.continue();
    outside.push(url.href);
    return route.abort();
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await running?.close();
});

/** The explorer's ranked plans as shown, each row's cells by column heading. */
async function planRows(page: Page): Promise<Record<string, string>[]> {
  const headers = await page.locator('#plans thead th').allTextContents();
  const rows = await page.locator('#plans tbody tr').all();
  return Promise.all(
    rows.map(async (row) => {
      const cells = await row.locator('td').allTextContents();
      return Object.fromEntries(headers.map((h, i) => [h, cells[i]]));
    }),
  );
}

async function open(path: string): Promise<Page> {
  const page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(`${path}: ${e.message}`));
  await page.goto(`${base}${path}`);
  return page;
}

describe('plan explorer at /', () => {
  it('draws the cost-time chart, the ranked plans, precisions and rejections for the default query', async () => {
    const page = await open('/');
    await page.waitForSelector('#plans tbody tr', { timeout: 90_000 });
    await page.waitForSelector('#chart svg');
    await page.waitForSelector('#precisions svg', { timeout: 60_000 });
    const rows = await page.locator('#plans tbody tr').count();
    expect(rows).toBeGreaterThan(10);
    const first = await page.locator('#plans tbody tr').first().locator('td').allTextContents();
    expect(first[0]).toBe('1');
    expect(first[1]).toMatch(/\w/); // a GPU id
    // ResNet-50 never ran BF16 or apex-O2 FP16 (test/unmeasured-precision.test.ts): such plans say so
    // in their precision cell, and its AMP plans do not.
    const table = await page.locator('#plans tbody').textContent();
    expect(table).toMatch(/BF16 \(model never ran it\)/);
    expect(table).not.toMatch(/AMP_FP16 \(model never ran it\)/);
    // One dot per priced plan plus the Pareto front's, on log axes, with a colour legend per GPU.
    const dots = await page.locator('#chart svg circle').count();
    expect(dots).toBeGreaterThan(rows);
    expect(await page.locator('#chart').textContent()).toMatch(/training time \(hours\)/);
    expect(await page.locator('#chart svg').count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#rejections svg rect').count()).toBeGreaterThan(0);
    expect(await page.locator('#rejections').textContent()).toMatch(/NO_PRICE|UNSUPPORTED_PRECISION/);
    // The answer's notes, warnings marked: plan 1 runs a precision ResNet-50 never ran.
    const warnings = await page.locator('#notes li.warning').allTextContents();
    expect(warnings.join('\n')).toMatch(
      /^warning: plan 1 trains resnet50_v1\.5 in BF16, which none of its measurements ran/m,
    );
    expect(await page.locator('#notes li:not(.warning)').count()).toBeGreaterThan(0);
    // Each plan's evidence in a few words, in full on hover and, for the chosen plan (1, to begin
    // with), under the precision comparison.
    const evidence = page.locator('#plans tbody tr').first().locator('td').last();
    expect(await evidence.textContent()).toMatch(
      /^(model measured on this GPU|GPU measured, other models|GPU unmeasured)$/,
    );
    const full = await evidence.getAttribute('title');
    expect(full).toMatch(/^(calibrated|measured|unmeasured)/);
    expect(await page.locator('#chosen-evidence').textContent()).toBe(`Plan 1's evidence: ${full}`);
    // How to time the chosen plan: the harness at its batch and precision, then recording the run.
    const batch = (await planRows(page))[0]['batch/GPU'].split(' x')[0];
    // What share of the GPUs' peak each plan's time assumes, in whole percent.
    for (const row of await planRows(page)) expect(row.MFU).toMatch(/^[1-9]\d{0,2}%$/);
    const commands = (await page.locator('#harness-commands').textContent())!.split('\n');
    expect(commands).toHaveLength(3);
    expect(commands[0]).toBe('npx trainplan harness --model resnet50_v1.5 --out measure.py');
    expect(commands[1]).toMatch(new RegExp(`measure\\.py --batch-size ${batch} `));
    expect(commands[2]).toBe('npx trainplan calibrate import runs.csv');
    expect(await page.locator('#harness-note').textContent()).toMatch(/^times 20 steps after 5 warm-up/);
    // Or the script from this server, the model inside: the same file the first command writes.
    const href = (await page.locator('#harness-download').getAttribute('href'))!;
    expect(href).toBe('/harness/measure.py?model=resnet50_v1.5');
    expect(await (await fetch(`${base}${href}`)).text()).toMatch(
      /^EMBEDDED_MODEL = json\.loads\(.*resnet50_v1\.5/m,
    );
    // The precision comparison shows every precision the chosen GPU supports, the plan's marked.
    expect(await page.locator('#precisions').textContent()).toMatch(/this plan/);
    expect(await page.locator('#precisions svg circle').count()).toBeGreaterThan(1);
    // Hovering a plan shows its details.
    const dot = page.locator('#chart svg g[aria-label="dot"] circle').last();
    await dot.hover({ force: true });
    await expect.poll(() => page.locator('#chart g[aria-label="tip"]').textContent()).toMatch(/precision/);
    expect(await page.locator('#chart g[aria-label="tip"]').textContent()).toMatch(/MFU\s*0\.\d\d/);
    if (process.env.SCREENSHOT) await page.screenshot({ path: SCREENSHOT, fullPage: true });
    // CSV export: a header and one line per plan in the table.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#csv')]);
    const text = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\n');
    expect(text[0]).toMatch(/^rank,gpu,offer,nodes,gpus_per_node,batch_size_per_gpu/);
    expect(text).toHaveLength(rows + 1);
    await page.close();
  }, 180_000);

  it('shows the API error beside the field at fault', async () => {
    const page = await open('/');
    await page.waitForSelector('#plans tbody tr', { timeout: 90_000 });
    await page.fill('#deadline', '-5');
    await page.click('#recommend');
    const error = page.locator('[data-error-for="deadlineHours"]');
    await expect
      .poll(() => error.textContent(), { timeout: 30_000 })
      .toMatch(/deadlineHours: must be .*from 0.001/);
    expect(await page.locator('#deadline').getAttribute('class')).toMatch(/invalid/);
    // Fixing it clears the error and plans come back.
    await page.fill('#deadline', '24');
    await page.fill('#samples', '0');
    await page.click('#recommend');
    await expect
      .poll(() => page.locator('[data-error-for="workload.samples"]').textContent(), { timeout: 30_000 })
      .toMatch(/workload\.samples/);
    expect(await error.textContent()).toBe('');
    await page.close();
  }, 120_000);

  it('offers to search again for as long as the server allows when a search is refused for time', async () => {
    // A server whose default budget refuses every search, but which lets a request ask for a minute.
    // (A server's settings become the process's: the main server's are put back after.)
    const tight = await startServer(0, '127.0.0.1', {
      logLevel: 'warn',
      warmUp: 0,
      timeBudgetMs: 1,
      maxTimeBudgetMs: 60_000,
    });
    try {
      const page = await context.newPage();
      page.on('pageerror', (e) => pageErrors.push(`tight /: ${e.message}`));
      await page.goto(tight.url.replace('/graphql', '/'));
      const again = page.locator('#search-longer');
      await again.waitFor({ timeout: 60_000 });
      expect(await page.locator('#form-error').textContent()).toMatch(
        // (Refused before or during its search: 1 ms can pass while the request is read and checked.)
        /time budget of 1 ms.*ask for a larger time budget \(timeBudgetMs, --time-budget-ms; up to 60000 ms here\)/,
      );
      expect(await again.textContent()).toBe('Search again for up to 60 s');
      expect(await page.locator('#plans tbody tr').count()).toBe(0);
      await again.click();
      await page.waitForSelector('#plans tbody tr', { timeout: 90_000 });
      expect(await page.locator('#form-error').textContent()).toBe('');
      expect(await page.locator('#summary').textContent()).toMatch(/candidates evaluated, .* \(complete,/);
      await page.close();
    } finally {
      await tight.close();
      setRuntimeConfig(running.config);
    }
  }, 180_000);

  it("compares precisions at a mixture-of-experts plan's own layout, expert parallelism included", async () => {
    const page = await open('/');
    await page.waitForSelector('#plans tbody tr', { timeout: 90_000 });
    await page.selectOption('#model', 'qwen3_30b_a3b');
    await page.selectOption('#gpus', ['H100-SXM5-80GB']);
    await page.fill('#samples', '10000000000'); // 10 B tokens
    await page.fill('#deadline', '');
    await page.click('#recommend');
    await expect
      .poll(() => page.locator('#chosen').textContent(), { timeout: 90_000 })
      .toMatch(/H100-SXM5-80GB.* EP\d+/);
    await expect
      .poll(() => page.locator('#precisions').textContent(), { timeout: 60_000 })
      .toMatch(/this plan/);
    const [first] = await planRows(page);
    expect(first.layout).toMatch(/ EP\d+/);
    // The chosen plan's own precision, predicted again at its layout, is the plan: same hours, and it fits.
    const label = await page.locator('#precisions svg text', { hasText: 'this plan' }).textContent();
    const own = /^([\d.,]+) h · [^·]+( · out of memory)? · this plan$/.exec(label!);
    expect(own?.[1]).toBe(first.hours);
    expect(own?.[2]).toBeUndefined();
    await page.close();
  }, 180_000);

  it('ranks plans joining single-GPU rentals only on a network the person states', async () => {
    const page = await open('/');
    await page.waitForSelector('#plans tbody tr', { timeout: 90_000 });
    // ResNet-50 within 5 hours on GH200: one instance takes about 8, and Lambda states no network.
    await page.selectOption('#gpus', ['GH200']);
    await page.fill('#deadline', '5');
    await page.click('#recommend');
    await expect
      .poll(() => page.locator('#notes').textContent(), { timeout: 90_000 })
      .toMatch(
        /network bound the answer: a better plan \(\d x 1 GH200 .* joins \d Lambda gpu_1x_gh200 instances/,
      );
    expect(await page.locator('#plans tbody tr').count()).toBe(0);
    await page.fill('#inter-node-gbps', '100');
    await page.click('#recommend');
    await expect.poll(() => page.locator('#plans tbody tr').count(), { timeout: 90_000 }).toBeGreaterThan(0);
    const [first] = await planRows(page);
    expect(first.offer).toBe('Lambda gpu_1x_gh200');
    expect(first['nodes x GPUs']).toMatch(/^[2-4] x 1$/);
    expect(await page.locator('#notes').textContent()).not.toMatch(/network bound the answer/);
    await page.close();
  }, 180_000);

  it('costs plans across Ethernet-only instances over TCP, and compares precisions over the same network', async () => {
    const page = await open('/');
    await page.waitForSelector('#plans tbody tr', { timeout: 90_000 });
    // ResNet-50 as fast as it goes on AWS's A10G instances, whose ENA network NCCL crosses over TCP.
    await page.selectOption('#gpus', ['A10G']);
    await page.selectOption('#objective', 'TIME');
    await page.fill('#providers', 'AWS');
    await page.fill('#deadline', '');
    await page.fill('#max-nodes', '4');
    await page.click('#recommend');
    await expect
      .poll(async () => (await planRows(page))[0]?.['nodes x GPUs'], { timeout: 90_000 })
      .toMatch(/^4 x \d+$/);
    await expect
      .poll(() => page.locator('#precisions').textContent(), { timeout: 60_000 })
      .toMatch(/this plan/);
    const [tcp] = await planRows(page);
    // The plan's own precision, predicted again, is the plan: the comparison runs over TCP too.
    const label = await page.locator('#precisions svg text', { hasText: 'this plan' }).textContent();
    expect(/^([\d.,]+) h/.exec(label!)?.[1]).toBe(tcp.hours);
    // Over RDMA (EFA set up) the same instances train faster.
    await page.selectOption('#inter-node-transport', 'RDMA');
    await page.click('#recommend');
    await expect.poll(async () => (await planRows(page))[0]?.hours, { timeout: 90_000 }).not.toBe(tcp.hours);
    const [rdma] = await planRows(page);
    expect(Number(rdma.hours.replace(/,/g, ''))).toBeLessThan(Number(tcp.hours.replace(/,/g, '')));
    await page.close();
  }, 180_000);

  it('plans at the global batch given: every plan accumulates to it', async () => {
    const page = await open('/');
    await page.waitForSelector('#plans tbody tr', { timeout: 90_000 });
    await page.selectOption('#model', 'llama2_7b');
    // Total work is in tokens, the global batch in sequences: each field says its own unit.
    expect(await page.locator('#samples-unit').textContent()).toMatch(/^\(tokens:/);
    expect(await page.locator('#global-batch-unit').textContent()).toMatch(
      /^\(the recipe's, in sequences per step/,
    );
    await page.selectOption('#gpus', ['H100-SXM5-80GB']);
    await page.fill('#samples', '2000000000');
    await page.fill('#deadline', '');
    await page.fill('#global-batch', '64');
    await page.click('#recommend');
    await expect
      .poll(() => page.locator('#plans tbody tr').first().textContent(), { timeout: 90_000 })
      .toMatch(/H100-SXM5-80GB/);
    for (const row of (await planRows(page)).slice(0, 5)) {
      const [batch, accum = '1'] = row['batch/GPU'].split(' x');
      const dp = Number(/^DP(\d+)/.exec(row.layout)![1]);
      expect(Number(batch) * Number(accum) * dp).toBe(64);
    }
    expect(await page.locator('#notes').textContent()).not.toMatch(/without globalBatch/);
    await page.close();
  }, 180_000);

  it('asks under the software stack chosen, and compares precisions under it', async () => {
    const page = await open('/');
    await page.waitForSelector('#plans tbody tr', { timeout: 90_000 });
    // The stacks are the API's, the default first.
    const stacks = await page.locator('#software-stack option').allTextContents();
    expect(stacks[0]).toBe('PYTORCH_EAGER');
    expect(stacks).toEqual(expect.arrayContaining(['TORCH_COMPILE', 'MEGATRON', 'TUNED']));
    await page.selectOption('#model', 'llama3_8b');
    await page.selectOption('#gpus', ['H100-SXM5-80GB']);
    await page.selectOption('#software-stack', 'MEGATRON');
    await page.fill('#samples', '20000000000'); // 20 B tokens
    await page.fill('#deadline', '');
    await page.click('#recommend');
    await expect
      .poll(() => page.locator('#plans tbody tr').first().locator('td').last().getAttribute('title'), {
        timeout: 90_000,
      })
      .toMatch(/published runs of this architecture on H100-SXM5-80GB under MEGATRON/);
    await expect
      .poll(() => page.locator('#precisions svg text', { hasText: 'this plan' }).count(), { timeout: 60_000 })
      .toBe(1);
    const [first] = await planRows(page);
    const label = await page.locator('#precisions svg text', { hasText: 'this plan' }).textContent();
    // Under eager PyTorch the same plan takes longer: the comparison is the plan only under MEGATRON.
    expect(/^([\d.,]+) h/.exec(label!)?.[1]).toBe(first.hours);
    await page.close();
  }, 180_000);

  it('asks with the attention chosen, compares precisions and times the plan with it', async () => {
    const page = await open('/');
    await page.waitForSelector('#plans tbody tr', { timeout: 90_000 });
    // The API's implementations, after the model's own (its code's) as the default.
    expect(await page.locator('#attention option').allTextContents()).toEqual([
      "the model's code",
      'FUSED',
      'EAGER',
    ]);
    // The zoo's BERT is DeepLearningExamples' script, which writes the scores to memory; trained
    // with Hugging Face's code (FUSED), the fastest plan on the same GPUs is faster.
    await page.selectOption('#model', 'bert_large_squad');
    await page.selectOption('#gpus', ['A100-SXM4-80GB']);
    await page.selectOption('#objective', 'TIME');
    await page.fill('#deadline', '');
    await page.click('#recommend');
    await expect
      .poll(() => page.locator('#plans tbody tr').first().textContent(), { timeout: 90_000 })
      .toMatch(/A100-SXM4-80GB/);
    const [script] = await planRows(page);
    expect(await page.locator('#harness-commands').textContent()).not.toMatch(/--attention/);
    await page.selectOption('#attention', 'FUSED');
    await page.click('#recommend');
    await expect
      .poll(async () => (await planRows(page))[0]?.hours, { timeout: 90_000 })
      .not.toBe(script.hours);
    const [fused] = await planRows(page);
    expect(Number(fused.hours.replace(/,/g, ''))).toBeLessThan(Number(script.hours.replace(/,/g, '')));
    // The plan's own precision predicted again is the plan: the comparison asks with FUSED too.
    await expect
      .poll(() => page.locator('#precisions svg text', { hasText: 'this plan' }).count(), { timeout: 60_000 })
      .toBe(1);
    const label = await page.locator('#precisions svg text', { hasText: 'this plan' }).textContent();
    expect(/^([\d.,]+) h/.exec(label!)?.[1]).toBe(fused.hours);
    expect(await page.locator('#harness-commands').textContent()).toMatch(/ --attention fused /);
    await page.close();
  }, 180_000);

  it('plans a pasted Hugging Face config.json, in tokens', async () => {
    const page = await open('/');
    await page.waitForSelector('#plans tbody tr', { timeout: 90_000 });
    const gpt2 = HF_CONFIGS.find((c) => c.id === 'gpt2')!.config;
    await page.check('input[name=source][value=huggingface]');
    await page.fill('#hf-config', JSON.stringify(gpt2, null, 2));
    await page.fill('#seq-len', '1024');
    await page.fill('#samples', '9000000000'); // 9 B tokens
    await page.fill('#deadline', '');
    await page.click('#recommend');
    await expect.poll(() => page.locator('#summary').textContent(), { timeout: 60_000 }).toMatch(/feasible/);
    expect(await page.locator('#plans tbody tr').count()).toBeGreaterThan(10);
    expect(await page.locator('#form-error').textContent()).toBe('');
    // A config that is not JSON is refused beside the config field.
    await page.fill('#hf-config', '{ not json');
    await page.click('#recommend');
    await expect
      .poll(() => page.locator('[data-error-for="workload.customModel"]').textContent(), { timeout: 30_000 })
      .toMatch(/huggingFaceConfig/);
    await page.close();
  }, 120_000);
});

describe('GraphiQL at /graphql', () => {
  it('loads from this server, with the default query and variables, and runs it', async () => {
    const page = await open('/graphql');
    await page.waitForSelector('.graphiql-container', { timeout: 90_000 });
    await expect
      .poll(() => page.locator('.graphiql-query-editor').textContent(), { timeout: 60_000 })
      .toMatch(/recommend/);
    await page.click('.graphiql-execute-button');
    await expect
      .poll(() => page.locator('.graphiql-response').textContent(), { timeout: 60_000 })
      .toMatch(/"rank":\s+1,/); // Monaco renders spaces as U+00A0
    // The variables pane is checked against the schema: the default variables leave out workload's
    // fields that have defaults, which is no error (it underlined them: server/assets.ts), while
    // leaving out samples, which has none, is one.
    const variables = page.locator('.graphiql-editor-tool .graphiql-editor:not(.hidden)');
    expect(await variables.locator('.squiggly-error').count()).toBe(0);
    await variables.locator('.view-lines').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.type('{"workload": {"model": "resnet50_v1.5"}}'); // Monaco closes brackets as typed over
    await expect
      .poll(async () => (await variables.locator('.view-lines').textContent())!.replace(/\u00a0/g, ' '))
      .toBe('{"workload": {"model": "resnet50_v1.5"}}');
    await expect.poll(() => variables.locator('.squiggly-error').count(), { timeout: 20_000 }).toBe(1);
    await page.close();
  }, 240_000);
});

describe('your runs at /calibrate', () => {
  /** A GraphQL answer from this server, as the page gets it. */
  const api = async (query: string, variables: Record<string, unknown> = {}) => {
    const r = await fetch(running.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    return ((await r.json()) as { data: Record<string, any> }).data;
  };
  const config = (gpu: string, batchSizePerGpu: number) => ({
    workload: { model: 'resnet50_v1.5', samples: 1 },
    gpu,
    batchSizePerGpu,
    precision: 'AMP_BF16',
  });
  const PREDICT = `query($input: PredictInput!) { predict(input: $input) { stepTimeMs evidence calibrationRuns } }`;
  const predicted = async (gpu: string, batch: number) =>
    (await api(PREDICT, { input: config(gpu, batch) })).predict as { stepTimeMs: number; evidence: string };

  it('records pasted and opened runs, shows each beside its prediction without the runs, names refused rows, deletes', async () => {
    const page = await open('/calibrate');
    await expect.poll(() => page.locator('#runs-summary').textContent()).toBe('No run recorded yet.');
    // The pages' shared stylesheet (web/page.css, bundled with the page's code) lays it out.
    expect(
      await page.locator('main').evaluate((e) => e.ownerDocument.defaultView!.getComputedStyle(e).display),
    ).toBe('grid');
    // A plausible A100 run: 1.3x what trainplan predicts for it now.
    const ms = 1.3 * (await predicted('A100-SXM4-80GB', 128)).stepTimeMs;
    await page.fill(
      '#runs-text',
      [
        'model,gpu,gpu_memory_gb,batch_size_per_gpu,precision,step_time_ms,peak_memory_gb,source',
        `resnet50_v1.5,NVIDIA A100-SXM4-80GB,79.2,128,AMP_BF16,${ms},21.5,browser`,
        `resnet50_v1.5,A100-SXM4-80GB,,128,AMP_BF17,${ms},,browser`,
      ].join('\n'),
    );
    await page.click('#record');
    await expect.poll(() => page.locator('#import-result').textContent()).toBe('Stored 1 of 2 runs.');
    expect(await page.locator('#rejected li').allTextContents()).toEqual([
      expect.stringMatching(/^row 2: precision: "AMP_BF17" is not one of FP32, /),
    ]);
    await expect.poll(() => page.locator('#runs tbody tr').count()).toBe(1);
    const headers = await page.locator('#runs thead th').allTextContents();
    const cells = await page.locator('#runs tbody tr td').allTextContents();
    const shown = Object.fromEntries(headers.map((h, i) => [h, cells[i]]));
    // The device name is the catalog's GPU; the run sits beside the step predicted without it.
    const [stored] = (
      await api('{ measurements { id gpu stepTimeMs predictedStepTimeMs predictedPeakMemoryGb mfu } }')
    ).measurements;
    expect(stored.gpu).toBe('A100-SXM4-80GB');
    expect(shown).toMatchObject({
      model: 'resnet50_v1.5',
      GPU: 'A100-SXM4-80GB',
      GPUs: '1',
      precision: 'AMP_BF16',
      batch: '128',
      layout: 'DP1',
      source: 'browser',
      'measured / predicted': `x${(ms / stored.predictedStepTimeMs).toFixed(2)}`,
      // Its peak memory beside what trainplan counts at its configuration.
      'peak GB': '21.5',
      'predicted GB': stored.predictedPeakMemoryGb.toFixed(1),
      // What CUDA gave its process: plans on the A100 are fitted in it from now on.
      'GPU GiB': '79.20',
      // The share of the A100's peak it reached, as the plans' MFU counts it.
      MFU: `${(100 * stored.mfu).toFixed(0)}%`,
    });
    expect(Number(shown['measured ms'])).toBeCloseTo(ms, -1);
    // The table, wider than its column, scrolls inside it: the page itself does not (it did, to
    // 1,769 px in a 1,400 px window, before the grid's column could shrink below its content).
    expect(await page.locator('html').evaluate((e) => e.scrollWidth)).toBeLessThanOrEqual(1400);
    expect(await page.locator('#runs').evaluate((e) => e.scrollWidth > e.clientWidth)).toBe(true);
    expect(await page.locator('#runs-summary').textContent()).toMatch(
      /^1 run recorded; the median run took 1\.\d\dx the step predicted without the runs \(slower than predicted\)/,
    );
    // And predictions of that configuration are calibrated by it at once.
    expect((await predicted('A100-SXM4-80GB', 128)).evidence).toMatch(/calibrated by 1 of your runs/);

    // A JSON file, opened (another owner's): its text fills the box and records the same way.
    await page.fill('#owner', 'lab-b');
    const l4 = (await predicted('L4', 64)).stepTimeMs;
    await page.setInputFiles('#runs-file', {
      name: 'runs.json',
      mimeType: 'application/json',
      buffer: Buffer.from(
        JSON.stringify([
          {
            model: 'resnet50_v1.5',
            gpu: 'L4',
            batch_size_per_gpu: 64,
            precision: 'AMP_BF16',
            step_time_ms: 0.9 * l4,
          },
        ]),
      ),
    });
    await expect
      .poll(() => page.locator('#runs-text').inputValue())
      .toMatch(/^\[\{"model":"resnet50_v1.5","gpu":"L4"/);
    await page.click('#record');
    await expect.poll(() => page.locator('#import-result').textContent()).toBe('Stored 1 of 1 run.');
    await expect.poll(() => page.locator('#runs tbody tr').count()).toBe(2);
    // Two runs: each is shown as the other predicts it, and the summary says how far off that is.
    const column = (await page.locator('#runs thead th').allTextContents()).indexOf('from other runs ms');
    const fromOthers = await page.locator(`#runs tbody tr td:nth-child(${column + 1})`).allTextContents();
    expect(fromOthers).toHaveLength(2);
    expect(fromOthers.map(Number).every((x) => x > 0)).toBe(true);
    expect(await page.locator('#runs-summary').textContent()).toMatch(
      /Each run predicted from the other runs is off by a median \d+(\.\d)?% \(without the runs: \d+(\.\d)?%\)/,
    );

    // One owner's runs only, when asked: the owner named in the form.
    await page.check('#own-only');
    await expect.poll(() => page.locator('#runs tbody tr').count()).toBe(1);
    expect(await page.locator('#runs tbody tr td.text').first().textContent()).toBe('lab-b');
    await page.uncheck('#own-only');
    await expect.poll(() => page.locator('#runs tbody tr').count()).toBe(2);

    // Text that is no runs file is refused beside the box; nothing changes.
    await page.fill('#runs-text', '');
    await page.click('#record');
    await expect.poll(() => page.locator('[data-error-for="text"]').textContent()).toMatch(/no runs/);
    expect(await page.locator('#runs tbody tr').count()).toBe(2);

    // Delete, one run at a time.
    await page.locator(`#runs tbody tr[data-id="${stored.id}"] button.delete`).click();
    await expect.poll(() => page.locator('#runs tbody tr').count()).toBe(1);
    expect((await api('{ measurements { gpu } }')).measurements).toEqual([{ gpu: 'L4' }]);
    // Only the L4 run is left: it speaks for the model on the A100 no more than a run elsewhere does.
    expect((await predicted('A100-SXM4-80GB', 128)).evidence).toMatch(
      /calibrated by 1 of your runs \(0 on A100-SXM4-80GB, 0 of this model on it\)/,
    );
    await page.locator('#runs tbody tr button.delete').click();
    await expect.poll(() => page.locator('#runs-summary').textContent()).toBe('No run recorded yet.');
    await page.close();
  }, 120_000);

  it('shows how each run ran its attention, and holds an eager run against the eager estimate', async () => {
    // GPT-2 timed with its cores op by op (a Hugging Face model loaded with attn_implementation
    // "eager"): recorded at what trainplan predicts for that, it is no slower than predicted.
    const gpt = {
      workload: { model: 'gpt2_124m', samples: 1 },
      gpu: 'L4',
      batchSizePerGpu: 8,
      precision: 'AMP_BF16',
    };
    const eager = (await api(PREDICT, { input: { ...gpt, attention: 'EAGER' } })).predict
      .stepTimeMs as number;
    const page = await open('/calibrate');
    await expect.poll(() => page.locator('#runs-summary').textContent()).toBe('No run recorded yet.');
    await page.fill(
      '#runs-text',
      [
        'model,gpu,batch_size_per_gpu,precision,step_time_ms,source,attention',
        `gpt2_124m,L4,8,AMP_BF16,${eager},browser,EAGER`,
      ].join('\n'),
    );
    await page.click('#record');
    await expect.poll(() => page.locator('#import-result').textContent()).toBe('Stored 1 of 1 run.');
    await expect.poll(() => page.locator('#runs tbody tr').count()).toBe(1);
    const headers = await page.locator('#runs thead th').allTextContents();
    const cells = await page.locator('#runs tbody tr td').allTextContents();
    expect(Object.fromEntries(headers.map((h, i) => [h, cells[i]]))).toMatchObject({
      model: 'gpt2_124m',
      attention: 'EAGER',
      'measured / predicted': 'x1.00',
    });
    await page.locator('#runs tbody tr button.delete').click();
    await expect.poll(() => page.locator('#runs-summary').textContent()).toBe('No run recorded yet.');
    await page.close();
  }, 120_000);
});

describe('offline', () => {
  it('sent no request outside this machine and raised no page error', () => {
    expect(outside).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
