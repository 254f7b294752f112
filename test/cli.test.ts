import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { progressBar } from '../cli/progress.js';
import { HF_CONFIGS } from './import-fixtures.js';
import { getModel, loadZoo } from '../predictor/zoo/index.js';
import { getGpu } from '../seeds/catalog.js';
import { costOf } from '../predictor/predict.js';
import { modelFlopsPerSample } from '../predictor/utilization.js';
import { predictCsv, TRAINPLAN_BIN } from './predict-csv.js';

const bin = TRAINPLAN_BIN;
const run = (...args: string[]) =>
  execFileSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: tmpdir(), timeout: 120_000 });
/** Exit code, stdout and stderr, whatever the exit code. */
const attempt = (...args: string[]) => {
  const r = spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    cwd: tmpdir(),
    timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};
const COMMANDS = [
  'serve',
  'predict-csv',
  'evaluate',
  'memory-check',
  'calibrate',
  'calibrate import',
  'harness',
  'query',
  'recommend',
  'plan-fleet',
  'plan-procurement',
  'plan-federated',
];

describe('trainplan CLI', () => {
  it('predict-csv keeps every input column, adds predictions in the row unit, and writes rows it cannot predict with the reason', () => {
    // train.csv's layout without the throughput column, plus a column of the user's own.
    const { stdout, rows } = predictCsv([
      'id,model,gpu,num_gpus,num_nodes,batch_size_per_gpu,precision,throughput_unit,my_note',
      'a,resnet50_v1.5,V100-SXM2-16GB,8,1,256,AMP_FP16,images/s,"keep, me"',
      'b,ncf_neumf,A100-SXM4-80GB,1,1,1048576,AMP_FP16,million samples/s,',
      'c,no_such_model,V100-SXM2-16GB,1,1,32,FP32,images/s,',
      'd,resnet50_v1.5,V100-SXM2-16GB,1,1,64,BF16,images/s,',
    ]);
    expect(stdout).toMatch(/wrote 4 rows \(2 predicted, 2 with an error\)/);
    expect(rows).toHaveLength(4);
    expect(Object.keys(rows[0])).toEqual(
      expect.arrayContaining([
        'id',
        'my_note',
        'predicted_throughput',
        'predicted_step_time_s',
        'predicted_forward_s',
        'predicted_backward_s',
        'predicted_optimizer_s',
        'predicted_communication_s',
        'predicted_memory_gb_per_gpu',
        'fits_in_memory',
        'error',
      ]),
    );
    // ResNet-50 AMP at 256 per 16 GB V100 is DeepLearningExamples' default: it ran, so it fits.
    expect(rows[0].fits_in_memory).toBe('true');
    expect(Number(rows[0].predicted_memory_gb_per_gpu)).toBeGreaterThan(8);
    expect(Number(rows[0].predicted_memory_gb_per_gpu)).toBeLessThanOrEqual(16);
    expect(rows[2].fits_in_memory).toBe('');
    expect(rows[0].my_note).toBe('keep, me');
    // 8 V100s at AMP train ResNet-50 at thousands of images/s (the seeds hold 6,174 to 10,723 measured).
    const images = Number(rows[0].predicted_throughput);
    expect(images).toBeGreaterThan(4000);
    expect(images).toBeLessThan(25000);
    expect(Number(rows[0].predicted_step_time_s)).toBeCloseTo((256 * 8) / images, 6);
    // Its MFU against the V100's fp16 peak: ResNet-50's model FLOPs (forward and backward, 3 x its
    // 4.1 G multiply-adds an image at 224 x 224) at that throughput.
    const v100 = getGpu('V100-SXM2-16GB')!;
    const flopsPerImage = modelFlopsPerSample(costOf(getModel('resnet50_v1.5')!));
    expect(flopsPerImage / 3 / 2 / 1e9).toBeGreaterThan(4.0);
    expect(flopsPerImage / 3 / 2 / 1e9).toBeLessThan(4.2);
    expect(Number(rows[0].predicted_mfu)).toBeCloseTo(
      (flopsPerImage * images) / 8 / (v100.peakTflops.fp16! * 1e12),
      9,
    );
    expect(rows[2].predicted_mfu).toBe('');
    // NCF in the row's unit: millions of samples per second, not samples.
    expect(Number(rows[1].predicted_throughput)).toBeGreaterThan(1);
    expect(Number(rows[1].predicted_throughput)).toBeLessThan(1000);
    expect(rows[2].error).toMatch(/not in the zoo/);
    expect(rows[3].error).toMatch(/bf16/);
    expect(rows[3].predicted_throughput).toBe('');
  });

  it('calibrate fits the constants on a CSV and prints efficiency.json as it would write it (without --write, nothing written)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trainplan-'));
    const input = join(dir, 'rows.csv');
    const shipped = readFileSync(new URL('../seeds/efficiency.json', import.meta.url), 'utf8');
    writeFileSync(
      input,
      [
        'id,model,gpu,num_gpus,num_nodes,batch_size_per_gpu,precision,throughput,throughput_unit',
        'a,resnet50_v1.5,V100-SXM2-16GB,1,1,256,AMP_FP16,1300,images/s',
        'b,resnet50_v1.5,V100-SXM2-16GB,8,1,256,AMP_FP16,10000,images/s',
        'c,bert_base_squad,A100-SXM4-80GB,1,1,32,AMP_FP16,400,sequences/s',
      ].join('\n'),
    );
    const out = run('calibrate', '--data', input);
    const printed = JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1)) as Record<
      string,
      unknown
    >;
    // The same keys as the file (no memory constants or kernel tables leak in), every figure a number.
    expect(Object.keys(printed).sort()).toEqual(Object.keys(JSON.parse(shipped)).sort());
    expect(typeof printed.kernelOverheadUs).toBe('number');
    expect(Object.values(printed.matmulEfficiency as object).every((x) => typeof x === 'number')).toBe(true);
    expect(out).toMatch(/mean \|log error\| \d\.\d{4}/);
    expect(readFileSync(new URL('../seeds/efficiency.json', import.meta.url), 'utf8')).toBe(shipped);
  });

  it('evaluate prints MAPE overall and per group on the seed measurements', () => {
    const out = run('evaluate', '--group-by', 'precision');
    expect(out).toMatch(/rows 4001, predicted \d+, MAPE \d+\.\d%/);
    expect(out).toMatch(/\| AMP_FP16 \| \d+ \| \d+\.\d% \|/);
    expect(out).toMatch(/32 train\.csv rows left out: they contradict the configuration they state/);
    expect(() => run('evaluate', '--group-by', 'colour')).toThrow(/unknown key "colour"/);
  });

  // A 16-bit CNN's convolutions run slower on NCHW activations (predictor/step.ts slowNchwConv):
  // the column says which layout the run used; without it, TensorFlow's own layout, else NCHW.
  it("predict-csv reads the convolutions' memory format from channels_last, else the framework", () => {
    const { rows } = predictCsv([
      'model,gpu,num_gpus,batch_size_per_gpu,precision,framework,channels_last',
      'resnet50_v1.5,V100-SXM2-16GB,1,128,AMP_FP16,PyTorch,',
      'resnet50_v1.5,V100-SXM2-16GB,1,128,AMP_FP16,PyTorch,true',
      'resnet50_v1.5,V100-SXM2-16GB,1,128,AMP_FP16,TensorFlow,',
      'resnet50_v1.5,V100-SXM2-16GB,1,128,AMP_FP16,TensorFlow,false',
      'resnet50_v1.5,V100-SXM2-16GB,1,128,AMP_FP16,PyTorch,nhwc',
    ]);
    const analytical = rows.map((r) => Number(r.analytical_throughput));
    expect(analytical[1] / analytical[0]).toBeGreaterThan(1.1);
    expect(analytical[2]).toBeCloseTo(analytical[1], 6);
    expect(analytical[3]).toBeCloseTo(analytical[0], 6);
    expect(rows[4].error).toMatch(/channels_last: "nhwc" is not true or false/);
  });

  it('predict-csv predicts a mixture-of-experts config.json at its expert_parallel column, and says why a degree cannot be', () => {
    const qwen = HF_CONFIGS.find((c) => c.id === 'Qwen/Qwen3-30B-A3B')!.config;
    const row = (ep: string) => `qwen3-30b-a3b.json,H100-SXM5-80GB,16,2,1,8,4096,BF16,1,${ep}`;
    const { stdout, rows } = predictCsv(
      [
        'model,gpu,num_gpus,num_nodes,batch_size_per_gpu,grad_accum_steps,seq_len_or_image_size,precision,zero_stage,expert_parallel',
        row('8'),
        row('1'),
        row('3'),
      ],
      { 'qwen3-30b-a3b.json': qwen },
    );
    expect(stdout).toMatch(/wrote 3 rows \(2 predicted, 1 with an error\)/);
    for (const r of rows.slice(0, 2)) expect(Number(r.predicted_throughput)).toBeGreaterThan(0);
    // EP 8 sends every token's hidden state to its experts and back: a different step than EP 1.
    expect(rows[0].predicted_step_time_s).not.toBe(rows[1].predicted_step_time_s);
    expect(rows[2].error).toMatch(/3 does not divide the 128 experts of a layer/);
  });

  it("predict-csv takes the optimizer's moments and master weights as columns, and says why a value cannot be", () => {
    const row = (precision: string, moments: string, master: string) =>
      `llama2_7b,H100-SXM5-80GB,8,1,1,${precision},1,${moments},${master}`;
    const { stdout, rows } = predictCsv([
      'model,gpu,num_gpus,num_nodes,batch_size_per_gpu,precision,zero_stage,optimizer_state,master_weights',
      row('BF16', '', ''),
      row('BF16', 'bf16', 'none'),
      row('BF16', '', 'half'),
      row('FP32', '', 'none'),
    ]);
    expect(stdout).toMatch(/wrote 4 rows \(2 predicted, 2 with an error\)/);
    // bf16 moments and no master copy: 2 + 8 fewer bytes per parameter, sharded over 8 GPUs (ZeRO-1).
    const saved = Number(rows[0].predicted_memory_gb_per_gpu) - Number(rows[1].predicted_memory_gb_per_gpu);
    expect(saved).toBeGreaterThan((6.7e9 * (4 + 4)) / 8 / 2 ** 30);
    expect(rows[2].error).toMatch(
      /master_weights must be one of fp32, remainders, bf16, none \(got "half"\)/,
    );
    expect(rows[3].error).toMatch(/FP32 keeps no master copy/);
  });

  it("predict-csv takes the minimal columns, in the model's own unit, and refuses an unknown precision", () => {
    const { stdout, rows, input, output } = predictCsv([
      'model,gpu,num_gpus,batch_size_per_gpu,precision',
      'resnet50_v1.5,V100-SXM2-16GB,8,256,AMP_FP16',
      'gpt2_124m,A100-SXM4-80GB,1,8,AMP_BF16',
      'resnet50_v1.5,V100-SXM2-16GB,1,64,amp',
    ]);
    expect(stdout).toMatch(/wrote 3 rows \(2 predicted, 1 with an error\)/);
    // images/s, as the model counts: the same figure as with throughput_unit images/s given.
    const images = Number(rows[0].predicted_throughput);
    expect(images).toBeGreaterThan(4000);
    expect(images).toBeLessThan(25000);
    expect(Number(rows[0].predicted_step_time_s)).toBeCloseTo((256 * 8) / images, 6);
    // tokens/s for GPT-2: a step of 8 sequences of 1024 tokens.
    expect(Number(rows[1].predicted_step_time_s)).toBeCloseTo(
      (8 * 1024) / Number(rows[1].predicted_throughput),
      6,
    );
    expect(rows[2].error).toMatch(/unknown precision "amp"; allowed: FP32/);
    // Without a required column the whole file is refused, naming the column.
    writeFileSync(input, 'model,gpu,precision\nresnet50_v1.5,V100-SXM2-16GB,FP32\n');
    const missing = attempt('predict-csv', '--in', input, '--out', output);
    expect(missing.status).toBe(2);
    expect(missing.stderr.trim()).toMatch(/missing columns num_gpus, batch_size_per_gpu/);
  });

  it('gives --help with examples for every command', () => {
    const top = attempt('--help');
    expect(top.status).toBe(0);
    for (const command of COMMANDS) expect(top.stdout).toContain(command.split(' ')[0]);
    for (const command of COMMANDS) {
      const help = attempt(...command.split(' '), '--help');
      expect(help.status, command).toBe(0);
      expect(help.stdout, command).toMatch(new RegExp(`Usage: trainplan ${command}`));
      expect(help.stdout.split('Examples:\n')[1], command).toMatch(
        new RegExp(`^ {2}\\$ .*trainplan ${command}`, 'm'),
      );
      expect(help.stderr, command).toBe('');
    }
    expect(attempt('serve', '--help').stdout).toMatch(/--max-body-bytes <n> .*TRAINPLAN_MAX_BODY_BYTES/s);
  });

  it('answers a mistyped flag, command or value with one line naming it and exit code 2, no stack trace', () => {
    const cases: [string[], RegExp][] = [
      [
        ['recommend', '--model', 'resnet50_v1.5', '--samples', '1e6', '--dedline', '3'],
        /unknown option '--dedline'.*--deadline/,
      ],
      [['serve', '--prot', '4001'], /unknown option '--prot'/],
      [['predict-csv', '--in', 'a.csv', '--out', 'b.csv', '--input', 'x.csv'], /unknown option '--input'/],
      [['evaluate', '--groupby', 'gpu'], /unknown option '--groupby'/],
      [['frobnicate'], /unknown command 'frobnicate'/],
      [
        ['recommend', '--model', 'resnet50_v1.5', '--samples', 'many'],
        /'--samples <n>' argument 'many' is invalid/,
      ],
      [['recommend', '--model', 'resnet50_v1.5'], /required option '--samples <n>'/],
      [
        ['recommend', '--model', 'resnet50_v1.5', '--samples', '1e6', '--objective', 'FAST'],
        /'FAST' is invalid.*COST, TIME/,
      ],
      [['plan-fleet', '--in', '/no/such/file.json'], /--in \/no\/such\/file.json: ENOENT/],
      [
        ['recommend', '--model', 'resnet50_v1.5', '--samples', '1e6', '--software-stack', 'MEGATRONN'],
        /'MEGATRONN' is invalid.*PYTORCH_EAGER, TORCH_COMPILE, MEGATRON, TUNED/,
      ],
      [
        ['recommend', '--model', 'resnet50_v1.5', '--samples', '1e6', '--inter-node-transport', 'tcp'],
        /'tcp' is invalid.*RDMA, TCP/,
      ],
      [
        ['recommend', '--model', 'resnet50_v1.5', '--samples', '1e6', '--time-budget-ms', '0'],
        /'--time-budget-ms <ms>' argument '0' is invalid\. must be from 1 to 600000/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = attempt(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
    }
  });
});

/** recommend's table as printed, each plan's cells by column heading. */
const planRows = (stdout: string): Record<string, string>[] => {
  const [head, ...rows] = stdout
    .split('\n')
    .filter((l) => l.startsWith('│'))
    .map((row) => row.split('│').map((c) => c.trim().replace(/^'|'$/g, '')));
  return rows.map((cells) => Object.fromEntries(head.map((h, i) => [h, cells[i]])));
};

/** The first plan's cell under a column of recommend's table. */
const firstPlan = (stdout: string, column: string) => planRows(stdout)[0][column];

describe('trainplan recommend on a published mixture-of-experts model', () => {
  // Without TRAINPLAN_TIME_BUDGET_MS, as a user first runs it: a cold process's first search over the
  // catalog for Qwen3-30B-A3B takes several seconds, past a shared server's 2 s per request.
  const env = { ...process.env };
  delete env.TRAINPLAN_TIME_BUDGET_MS;
  const recommend = (...extra: string[]) =>
    spawnSync(
      process.execPath,
      [bin, 'recommend', '--model', 'qwen3_30b_a3b', '--samples', '1e11', '--limit', '2', ...extra],
      { encoding: 'utf8', cwd: tmpdir(), timeout: 120_000, env },
    );

  it("answers by id within the command's budget, and refuses (never answers in part) within one too short", () => {
    const r = recommend();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^48552 candidates evaluated \(COMPLETE\), [1-9]\d* feasible/);
    // 30.5B weights with Adam's states (about 16 bytes each) fit no GPU whole: the table says how
    // the plan splits them, or it could not be reproduced.
    expect(r.stdout).toMatch(/│ accum │ precision │ layout +│/);
    const layout = firstPlan(r.stdout, 'layout');
    expect(layout).toMatch(/^DP\d+( TP\d+)?( PP\d+)?( EP\d+)?( ZeRO-[123])?( recompute (selective|full))?$/);
    expect(layout).toMatch(/ (TP|PP|EP|ZeRO-)/);
    const short = recommend('--time-budget-ms', '1');
    expect(short.status).toBe(2);
    expect(short.stderr).toMatch(/did not finish within its time budget of 1 ms; no partial answer is given/);
    expect(short.stdout).toBe('');
  });
});

describe('trainplan recommend with no plan', () => {
  it('prints no empty table, and the note that says why and what to change', () => {
    const r = attempt(
      'recommend',
      '--model',
      'llama3_1_405b',
      '--samples',
      '1e10',
      '--max-nodes',
      '2',
      '--gpus',
      'B200',
    );
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[1]).toBe('no plan');
    expect(r.stdout).not.toMatch(/\(index\)/);
    expect(r.stdout).toMatch(
      /^- no plan: every candidate was turned away; out of GPU memory on up to 2 nodes, .* \(\d+ candidates\): allow more nodes \(maxNodes\)/m,
    );
  });
});

describe('trainplan harness', () => {
  it('names the flag at fault, as the server names its parameter', () => {
    const cases: [string[], RegExp][] = [
      [
        ['--model', 'nope'],
        new RegExp(
          `^trainplan: --model: unknown model "nope"; allowed: resnet50_v1\\.5, .* \\(${loadZoo().length} in all; see the query models\\)$`,
          'm',
        ),
      ],
      [['--model', 'resnet50_v1.5', '--seq-len', '0'], /^trainplan: --seq-len: must be an integer from 1/m],
      [['--seq-len', '64'], /^trainplan: --seq-len: needs --model$/m],
    ];
    for (const [args, message] of cases) {
      const r = attempt('harness', ...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
  });
});

describe('trainplan recommend says what to rent and what to be wary of', () => {
  // Llama-2-7B full fine-tuning in BF16 on up to 4 nodes (docs/custom-models-and-parallelism.md).
  const llama2 = (...extra: string[]) =>
    run(
      'recommend',
      '--model',
      'llama2_7b',
      '--samples',
      '2e9',
      '--precisions',
      'BF16',
      '--max-nodes',
      '4',
      ...extra,
    );

  it("names plan 1's offer and prints the answer's notes under the table", () => {
    const out = llama2('--gpus', 'A100-SXM4-80GB,H100-SXM5-80GB', '--limit', '1');
    // The offer rented, as the catalog names it: nodes are instances of it.
    expect(firstPlan(out, 'offer')).toMatch(/^(AWS|Azure|GCP|Lambda|RunPod|Paperspace) \S+/);
    expect(out).toMatch(/^rejected: .*NETWORK_UNSTATED \d+/m);
    // The answer's notes, one per line under the table: here, that plan 1's price is undated. (Four
    // single-GPU RunPod H100s joined on a guessed network were cheaper, and noted, until FSDP on one
    // 8-GPU instance came out cheaper than them: test/offers.test.ts checks that note.)
    expect(out).toMatch(/^- warning: plan 1's price \(.*\) is undated/m);
    // And how to time plan 1 before renting it for the job: the harness, or why it cannot.
    const layout = firstPlan(out, 'layout');
    if (/ PP\d/.test(layout) && / ZeRO-[23]/.test(layout))
      expect(out).toMatch(
        /^time plan 1 on your own GPUs: the harness runs pipeline parallelism with ZeRO stage 1 at most/m,
      );
    else if (firstPlan(out, 'precision') === 'FP8' && / ZeRO-[23]/.test(layout))
      expect(out).toMatch(
        /^time plan 1 on your own GPUs \(the harness runs ZeRO stage \d under FullyShardedDataParallel, where it does not run FP8 \(Transformer Engine\): these commands time 20 steps after 5 warm-up of the same layout in AMP_BF16/m,
      );
    else {
      const lines = out.split('\n');
      const at = lines.findIndex((l) => l.startsWith('time plan 1 on your own GPUs (times 20 steps'));
      expect(at, out).toBeGreaterThan(-1);
      expect(lines[at + 1]).toBe('  npx trainplan harness --model llama2_7b --out measure.py');
      const [nodes, gpus, batch, accum] = ['nodes', 'gpusPerNode', 'batch', 'accum'].map((c) =>
        Number(firstPlan(out, c)),
      );
      const line = lines[at + 2];
      expect(line).toMatch(nodes > 1 ? /^ {2}torchrun / : /^ {2}python3 measure\.py /);
      expect(line).toContain(`--batch-size ${batch} `);
      if (accum > 1) expect(line).toContain(`--grad-accum-steps ${accum} `);
      if (nodes === 1 && gpus > 1) expect(line).toContain(`--gpus ${gpus} `);
      // ZeRO and recomputation as the plan names them.
      const zero = /ZeRO-(\d)/.exec(layout)?.[1];
      if (zero) expect(line).toContain(`--zero-stage ${zero} `);
      const recompute = /recompute (\w+)/.exec(layout)?.[1];
      if (recompute) expect(line).toContain(`--recompute ${recompute} `);
      // Every split of the layout too (a layer replay of each GPU's share).
      for (const [words, flag] of [
        ['TP', '--tensor-parallel'],
        ['PP', '--pipeline-parallel'],
        ['VP', '--virtual-pipeline-stages'],
        ['CP', '--context-parallel'],
        ['EP', '--expert-parallel'],
      ]) {
        const degree = new RegExp(`${words}(\\d+)`).exec(layout)?.[1];
        if (degree) expect(line).toContain(`${flag} ${degree} `);
      }
      expect(lines[at + 3]).toBe('  npx trainplan calibrate import runs.csv');
    }
  });

  it("--inter-node-gbps states the network, so plans joining any offer's instances are ranked on it; --providers keeps to named providers", () => {
    const onRunPod = (...extra: string[]) =>
      llama2(
        '--gpus',
        'H100-SXM5-80GB',
        '--limit',
        '3',
        '--inter-node-gbps',
        '100',
        '--providers',
        'RunPod',
        ...extra,
      );
    const out = onRunPod();
    expect(out).not.toMatch(/NETWORK_UNSTATED|network bound the answer/);
    const plans = planRows(out);
    expect(plans.length).toBeGreaterThan(0);
    for (const p of plans) expect(p.offer).toMatch(/^RunPod /);
    // The four single-GPU rentals, now on a stated network, rank among the first.
    expect(plans.some((p) => p.offer === 'RunPod H100 SXM (Community)' && p.nodes === '4')).toBe(true);
    // The network column says the rate and how NCCL crosses it, between nodes only.
    for (const p of plans) expect(p.network).toBe(p.nodes === '1' ? '-' : '100 RDMA');
    const tcp = planRows(onRunPod('--inter-node-transport', 'TCP'));
    expect(tcp.some((p) => p.network === '100 TCP')).toBe(true);
    for (const p of tcp) expect(p.network).toMatch(/^(-|100 TCP)$/);
  });

  it('--global-batch trains every plan at that batch, and the notes stop asking for one', () => {
    const out = llama2('--gpus', 'H100-SXM5-80GB', '--limit', '1', '--global-batch', '64');
    const dp = Number(/^DP(\d+)/.exec(firstPlan(out, 'layout'))![1]);
    expect(Number(firstPlan(out, 'batch')) * Number(firstPlan(out, 'accum')) * dp).toBe(64);
    expect(out).not.toMatch(/^- global batch: without globalBatch/m);
    expect(llama2('--gpus', 'H100-SXM5-80GB', '--limit', '1')).toMatch(
      /^- global batch: without globalBatch/m,
    );
  });
});

describe('trainplan recommend --software-stack', () => {
  it('asks under the stack given: Llama 3 8B on H100 plans faster under Megatron than as eager PyTorch', () => {
    const ask = (...extra: string[]) =>
      run(
        'recommend',
        '--model',
        'llama3_8b',
        '--samples',
        '2e10',
        '--gpus',
        'H100-SXM5-80GB',
        '--limit',
        '1',
        ...extra,
      );
    const eager = Number(firstPlan(ask(), 'hours'));
    const megatron = Number(firstPlan(ask('--software-stack', 'MEGATRON'), 'hours'));
    expect(megatron).toBeGreaterThan(0);
    // (torchtitan's compiled FSDP ran 1.16x its eager; Megatron-Core's fused kernels and tuned GEMMs
    // add to that.)
    expect(megatron).toBeLessThan(eager / 1.3);
  });

  it("prints an interleaved plan's chunks in its layout and says how to set them", () => {
    // Llama 3 70B without a global batch under Megatron: a pipeline with chunks per stage is cheapest.
    const out = run(
      'recommend',
      '--model',
      'llama3_70b',
      '--samples',
      '1e11',
      '--software-stack',
      'MEGATRON',
      '--gpus',
      'H100-SXM5-80GB',
      '--max-nodes',
      '16',
      '--limit',
      '1',
    );
    const [, pp, vp] = /\bPP(\d+) VP(\d+)\b/.exec(firstPlan(out, 'layout'))!;
    expect(out).toContain(
      `plan 1 interleaves its pipeline: each of its ${pp} stages runs ${vp} chunks of ${80 / (Number(pp) * Number(vp))} transformer block(s) (Megatron-Core: virtual_pipeline_model_parallel_size ${vp})`,
    );
  });
});

describe('progress bar', () => {
  it('draws on a terminal and stays silent when piped', () => {
    const written: string[] = [];
    const bar = progressBar('predicting', 2000, { isTTY: true, columns: 100, write: (t) => written.push(t) });
    bar.update(1000);
    bar.finish();
    expect(written[0]).toMatch(/^\rpredicting \[#{15}\.{15}\] {2}50% 1000\/2000/);
    expect(written.at(-2)).toMatch(/\[#{30}\] 100% 2000\/2000/);
    expect(written.at(-1)).toBe('\n');
    const piped: string[] = [];
    const quiet = progressBar('predicting', 2000, { isTTY: false, write: (t) => piped.push(t) });
    quiet.update(1000);
    quiet.finish();
    expect(piped).toEqual([]);
  });
});
