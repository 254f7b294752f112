// The measurement harness on CPU (Debian's python3-torch; .ci/run installs it): it runs a tiny
// layer list and a zoo model embedded by `trainplan harness`, writes runs in the import layout,
// and `trainplan calibrate import` reads them back. A CPU is not a catalog GPU, so those runs are
// rejected with that reason and nothing is stored; a run on a catalog GPU is stored.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { harnessScript, HARNESS_FILE } from '../service/harness-script.js';
import { readRunsFile } from '../cli/calibrate-runs.js';
import { runFromRow } from '../service/run-rows.js';
import { runtimeConfig, setRuntimeConfig } from '../service/config.js';
import { closeMeasurementStore, listRuns, predictRequestOf, recordRuns } from '../service/measurements.js';
import { allocatedGb } from '../predictor/memory-calibration.js';
import { costOf, predict } from '../predictor/predict.js';
import { parallelStructure } from '../predictor/parallel.js';
import { activationBytesPerSampleOn, stackMemory } from '../predictor/memory.js';
import { loadModelFile } from '../predictor/import/index.js';
import { loadEfficiency } from '../seeds/catalog.js';
import { getModel, loadZoo } from '../predictor/zoo/index.js';
import type { ModelDef } from '../predictor/types.js';
import { fromMeasurePython, ONE_STEP_ON_CPU, SAVED_BYTES } from './measure-python.js';
import { ROOT } from './spawn-server.js';
import { predictConfiguration } from '../service/planning.js';

/** A Python that has PyTorch: TRAINPLAN_PYTHON, python3 on PATH, or Debian's /usr/bin/python3. */
function pythonWithTorch(): string {
  const tried: string[] = [];
  for (const py of [process.env.TRAINPLAN_PYTHON, 'python3', '/usr/bin/python3'].filter(
    Boolean,
  ) as string[]) {
    const r = spawnSync(py, ['-c', 'import torch'], { stdio: 'pipe' });
    if (r.status === 0) return py;
    tried.push(py);
  }
  throw new Error(
    `no Python with PyTorch (tried ${tried.join(', ')}): apt-get install -y --no-install-recommends python3-torch (.ci/run does)`,
  );
}

const dir = mkdtempSync(join(tmpdir(), 'trainplan-harness-'));
const original = runtimeConfig();
setRuntimeConfig({ ...original, dataDir: join(dir, 'data'), databaseUrl: undefined });
afterAll(async () => {
  await closeMeasurementStore();
  setRuntimeConfig(original);
  rmSync(dir, { recursive: true, force: true });
});

const tsx = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });

describe('measurement harness on CPU', () => {
  const python = pythonWithTorch();

  copyFileSync(
    new URL('./fixtures-harness/tiny-layers.json', import.meta.url),
    join(dir, 'tiny-layers.json'),
  );
  /** measure.py on the tiny layer list on CPU, with `args`; its processes share `env`. */
  const tinyRun = (args: string[], env: Record<string, string> = {}) =>
    spawn(
      python,
      [
        HARNESS_FILE.pathname,
        '--layers',
        'tiny-layers.json',
        '--batch-size',
        '2',
        '--steps',
        '3',
        '--warmup',
        '1',
        '--device',
        'cpu',
        ...args,
      ],
      { cwd: dir, env: { ...process.env, ...env }, stdio: 'pipe' },
    );
  const exited = (p: ReturnType<typeof spawn>) =>
    new Promise<{ status: number | null; stderr: string }>((done) => {
      let stderr = '';
      p.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      p.on('close', (status) => done({ status, stderr }));
    });
  const freePort = () =>
    new Promise<number>((done) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => done(port));
      });
    });

  /**
   * A configuration's harness commands run as given, here: `trainplan` is this checkout's CLI; no
   * GPU, so on CPU, one timed step. The row measure.py wrote, and the folder it wrote it in.
   */
  const runAsGiven = (commands: string[], folder: string) => {
    const [write, run] = commands;
    const at = mkdtempSync(join(dir, folder));
    const words = (line: string) => line.split(' ');
    const written = tsx(
      words(write)
        .slice(2)
        .map((w) => (w === 'measure.py' ? join(at, w) : w)),
    );
    expect(written.stderr).toMatch(/^wrote .*measure\.py/);
    expect(written.status).toBe(0);
    expect(words(run)[0]).toBe('python3');
    const measured = spawnSync(
      python,
      [...words(run).slice(1), '--device', 'cpu', '--steps', '1', '--warmup', '0'],
      { cwd: at, encoding: 'utf8' },
    );
    expect(measured.stderr).toBe('');
    expect(measured.status).toBe(0);
    return { at, row: readRunsFile(join(at, 'runs.csv'))[0] };
  };

  /** measure.py `script` refuses each case's arguments, before any process starts, with its message. */
  const refuses = (script: string, cases: [string[], RegExp][]) => {
    for (const [args, message] of cases) {
      const refused = spawnSync(python, [script, '--batch-size', '1', '--device', 'cpu', ...args], {
        cwd: dirname(script),
        encoding: 'utf8',
      });
      expect(refused.status, args.join(' ')).toBe(2);
      expect(refused.stderr).toMatch(message);
    }
  };

  /**
   * A one-node FP32 configuration of a zoo model at a small size (`seqLen`: tokens, or pixels), and
   * the harness commands predict gives for it (on an A100, which only names the run).
   */
  const configured = async (
    model: string,
    seqLen: number,
    layout: {
      gpusPerNode: number;
      batchSizePerGpu: number;
      gradAccumSteps?: number;
      parallelism?: Parameters<typeof predictConfiguration>[0]['parallelism'];
    },
  ) => {
    const { parallelism, ...sizes } = layout;
    const configuration = {
      workload: { model, samples: 1, seqLen },
      nodes: 1,
      gradAccumSteps: 1,
      ...sizes,
      precision: 'FP32' as const,
      framework: 'PyTorch' as const,
    };
    const { harness } = await predictConfiguration({
      ...configuration,
      gpu: 'A100-SXM4-80GB',
      xla: false,
      fp32UsesTf32: true,
      ...(parallelism ? { parallelism } : {}),
    });
    return { configuration, harness };
  };

  it('times a layer list and writes a run that imports, rejected only because a CPU is not a catalog GPU', async () => {
    expect(await exited(tinyRun(['--precision', 'FP32', '--out', 'runs.csv']))).toEqual({
      status: 0,
      stderr: '',
    });
    const rows = readRunsFile(join(dir, 'runs.csv'));
    expect(rows).toHaveLength(1);
    const row = rows[0];
    expect(row).toMatchObject({
      model: 'tiny-layers.json',
      gpu: 'cpu',
      batch_size_per_gpu: '2',
      precision: 'FP32',
      framework: 'PyTorch',
      source: 'harness',
    });
    expect(Number(row.step_time_ms)).toBeGreaterThan(0);
    expect(row.note).toMatch(/median of 3 steps after 1 warm-up/);
    expect(row.note).toMatch(/builder layer-replay; parameters \d+; torch \S+; cuda none/);
    // The replay trains the weights the predictor costs, the mixture-of-experts layer's four expert
    // copies included (one nn.Linear over its routed tokens would hold one).
    const trained = Number(/parameters (\d+)/.exec(String(row.note))![1]);
    expect(trained).toBe(costOf(loadModelFile(join(dir, 'tiny-layers.json')).model).parameters);

    // Its products without weights (attention-like) replay op by op: the run says so.
    expect(row.attention).toBe('EAGER');

    const runInput = runFromRow(row, dir);
    expect(runInput.workload.customModel).toMatchObject({ name: 'tiny-layers' });
    expect(runInput.attention).toBe('eager');
    expect(runInput.stepTimeMs).toBe(Number(row.step_time_ms));
    const result = await recordRuns([runInput], 'ci');
    expect(result.stored).toBe(0);
    expect(result.rejected).toEqual([{ index: 0, reason: expect.stringMatching(/^gpu: unknown GPU "cpu"/) }]);
    expect(await listRuns({})).toEqual([]);

    // The CLI says the same, row by row, and exits non-zero.
    const cli = tsx(['calibrate', 'import', join(dir, 'runs.csv'), '--data-dir', join(dir, 'data')]);
    expect(cli.status).toBe(1);
    expect(cli.stdout).toMatch(/stored 0 of 1 runs/);
    expect(cli.stdout).toMatch(/row 1: rejected: gpu: unknown GPU "cpu"/);
  }, 120_000);

  it('appends to a runs file an earlier harness wrote: the columns it lacks are added, its rows empty there', async () => {
    // The file as the harness before `attention` wrote it: that column missing, one run in it.
    const lines = readFileSync(join(dir, 'runs.csv'), 'utf8').trim().split(/\r?\n/);
    const header = lines[0].split(',');
    const at = header.indexOf('attention');
    expect(at).toBeGreaterThan(0);
    const older = readRunsFile(join(dir, 'runs.csv'))[0];
    const cells = header.map((k) => String(older[k] ?? ''));
    const withoutAttention = (row: string[]) => row.filter((_, i) => i !== at);
    const quote = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
    writeFileSync(
      join(dir, 'older-runs.csv'),
      [withoutAttention(header), withoutAttention(cells).map(quote)]
        .map((r) => r.join(',') + '\r\n')
        .join(''),
    );

    const appended = await exited(tinyRun(['--precision', 'FP32', '--out', 'older-runs.csv']));
    expect(appended.status).toBe(0);
    expect(appended.stderr).toMatch(/older-runs\.csv: added the column attention/);
    const rows = readRunsFile(join(dir, 'older-runs.csv'));
    expect(rows).toHaveLength(2);
    // The earlier run keeps every cell it had and states no attention, as its harness left it;
    // the new one says how it ran.
    expect(rows[0]).toEqual({ ...older, attention: '' });
    expect(rows[1].attention).toBe('EAGER');
    expect(runFromRow(rows[0], dir).attention ?? null).toBeNull();
    expect(runFromRow(rows[1], dir).attention).toBe('eager');
    // A third run finds the column there: appended without rewriting.
    const third = await exited(tinyRun(['--precision', 'FP32', '--out', 'older-runs.csv']));
    expect(third).toEqual({ status: 0, stderr: '' });
    expect(readRunsFile(join(dir, 'older-runs.csv')).map((r) => r.attention)).toEqual(['', 'EAGER', 'EAGER']);
  }, 120_000);

  it('times data parallelism over the GPUs of a machine (--gpus) and across nodes (torchrun), each step the slowest process', async () => {
    // Two processes on one machine: gloo on CPU, NCCL on GPUs.
    const local = await exited(tinyRun(['--gpus', '2', '--out', 'dp.csv']));
    expect(local.stderr).toBe('');
    expect(local.status).toBe(0);
    const [row] = readRunsFile(join(dir, 'dp.csv'));
    expect(row).toMatchObject({
      nodes: '1',
      gpus_per_node: '2',
      inter_node_gbps: '',
      inter_node_transport: '',
    });
    expect(row.note).toMatch(
      /data parallel over 2 processes \(2 per node x 1 node\), DistributedDataParallel on gloo, each step the slowest process's; builder layer-replay; parameters \d+/,
    );
    expect(Number(row.step_time_ms)).toBeGreaterThan(0);
    // The importer reads the layout (and the trained weights, checked against the layer list).
    expect(runFromRow(row, dir)).toMatchObject({
      nodes: 1,
      gpusPerNode: 2,
      batchSizePerGpu: 2,
      interNodeGbps: null,
      interNodeTransport: null,
    });

    // Two nodes of one process each, as torchrun starts its workers (the environment it gives them;
    // Debian's torchrun 1.13 itself does not start on Python 3.11): the network is the run's.
    const port = String(await freePort());
    const workers = [0, 1].map((rank) =>
      exited(
        tinyRun(['--inter-node-gbps', '25', '--inter-node-transport', 'TCP', '--out', 'nodes.csv'], {
          MASTER_ADDR: '127.0.0.1',
          MASTER_PORT: port,
          WORLD_SIZE: '2',
          LOCAL_WORLD_SIZE: '1',
          RANK: String(rank),
          LOCAL_RANK: '0',
        }),
      ),
    );
    for (const w of await Promise.all(workers)) expect(w).toEqual({ status: 0, stderr: '' });
    const rows = readRunsFile(join(dir, 'nodes.csv'));
    expect(rows).toHaveLength(1); // the first process writes the run
    expect(rows[0]).toMatchObject({ nodes: '2', gpus_per_node: '1', inter_node_transport: 'TCP' });
    expect(rows[0].note).toMatch(/data parallel over 2 processes \(1 per node x 2 nodes\)/);
    const run = runFromRow(rows[0], dir);
    expect(run).toMatchObject({ nodes: 2, gpusPerNode: 1, interNodeGbps: 25, interNodeTransport: 'TCP' });
    // Stored like any run: here refused only because a CPU is not a catalog GPU.
    expect((await recordRuns([run], 'ci')).rejected).toEqual([
      { index: 0, reason: expect.stringMatching(/^gpu: unknown GPU "cpu"/) },
    ]);
  }, 120_000);

  it("runs a configuration's harness commands as predict gives them: the run recorded is of that configuration", async () => {
    // Two GPUs of one node, two micro-batches accumulated, EfficientNet-B0 at 64 px (not its 224).
    const { configuration, harness } = await configured('efficientnet_b0', 64, {
      gpusPerNode: 2,
      batchSizePerGpu: 2,
      gradAccumSteps: 2,
    });
    const [write, , record] = harness.commands;
    expect(write).toBe('npx trainplan harness --model efficientnet_b0 --seq-len 64 --out measure.py');
    expect(record).toBe('npx trainplan calibrate import runs.csv');
    const { at, row } = runAsGiven(harness.commands, 'commands-');
    expect(row.note).toMatch(/each step 2 micro-batches of 2 accumulated; data parallel over 2 processes/);
    // What calibrate import reads back is the configuration predicted: model, size, layout, batch.
    expect(runFromRow(row, at)).toMatchObject({
      ...configuration,
      workload: { model: 'efficientnet_b0', seqLen: 64 },
    });
  }, 180_000);

  it('recomputes what the configuration names: the layers the predictor reruns run forward again, the gradients unchanged', () => {
    // The tiny layer list with its linears, experts, norm, convolution and LSTM marked: each runs its
    // forward again in backward. (PyTorch's non-reentrant checkpoint reruns a forward to recover
    // what backward reads: an add, which keeps nothing, would have nothing to rerun.)
    const measured = fromMeasure('[same, forwards]', [
      `layers = json.load(open(${JSON.stringify(join(dir, 'tiny-layers.json'))}))["layers"]`,
      'rerun = [i in (1, 3, 5, 9, 11) for i in range(len(layers))]',
      'def step(marks):',
      '    torch.manual_seed(0)',
      '    model, make_batch, loss = measure.layer_replay(torch, torch.nn, layers, marks)',
      '    torch.manual_seed(1)',
      '    batch = make_batch(2, torch.device("cpu"), torch.float32)',
      '    calls = [0]',
      '    for op in model.ops: op.register_forward_pre_hook(lambda *_: calls.__setitem__(0, calls[0] + 1))',
      '    loss(model, batch).backward()',
      '    return [p.grad for p in model.parameters()], calls[0]',
      'plain, plain_calls = step(None)',
      'again, again_calls = step(rerun)',
      'same = len(plain) == len(again) and all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(plain, again))',
      'instances = [layer.get("count", 1) for layer in layers]',
      'forwards = [plain_calls, again_calls, sum(instances), sum(n for n, r in zip(instances, rerun) if r)]',
    ]) as [boolean, number[]];
    const [same, [plainCalls, againCalls, ops, marked]] = measured;
    expect(same).toBe(true);
    expect(plainCalls).toBe(ops);
    expect(marked).toBeGreaterThan(0);
    expect(againCalls).toBe(ops + marked);
  }, 60_000);

  it("runs a recomputing configuration's harness commands: the run recorded is of that recomputation", async () => {
    // ViT-B/16 at 32 px (5 tokens): with recomputation the layer list replays it, blocks marked.
    const { configuration, harness } = await configured('vit_b16', 32, {
      gpusPerNode: 1,
      batchSizePerGpu: 1,
      parallelism: { tensorParallel: 1, pipelineParallel: 1, zeroStage: 0, recompute: 'full' },
    });
    expect(harness.commands[1]).toBe(
      'python3 measure.py --batch-size 1 --precision FP32 --recompute full --out runs.csv',
    );
    const { at, row } = runAsGiven(harness.commands, 'recompute-');
    expect(row.recompute).toBe('full');
    expect(row.note).toMatch(/full recomputation; builder layer-replay/);
    expect(runFromRow(row, at)).toMatchObject({
      ...configuration,
      workload: { model: 'vit_b16', seqLen: 32 },
      parallelism: { tensorParallel: 1, pipelineParallel: 1, zeroStage: 0, recompute: 'full' },
    });
    // A model without transformer blocks has nothing to rerun: measure.py says so.
    const cnn = join(at, 'cnn.py');
    writeFileSync(cnn, harnessScript('resnet50_v1.5'));
    const refused = spawnSync(python, [cnn, '--batch-size', '1', '--recompute', 'full', '--device', 'cpu'], {
      encoding: 'utf8',
    });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/--recompute full: resnet50_v1.5 has no layers it reruns/);
  }, 180_000);

  it('times ZeRO over the processes of a machine and imports the run at that stage', async () => {
    expect(await exited(tinyRun(['--gpus', '2', '--zero-stage', '1', '--out', 'zero1.csv']))).toEqual({
      status: 0,
      stderr: '',
    });
    const [row] = readRunsFile(join(dir, 'zero1.csv'));
    expect(row.zero_stage).toBe('1');
    expect(row.note).toMatch(
      /data parallel over 2 processes .*DistributedDataParallel on gloo, each step the slowest process's; ZeRO stage 1: ZeroRedundancyOptimizer;/,
    );
    expect(runFromRow(row, dir).parallelism).toEqual({
      tensorParallel: 1,
      pipelineParallel: 1,
      zeroStage: 1,
      recompute: 'none',
    });
    // One process has nothing to shard over.
    const alone = await exited(tinyRun(['--zero-stage', '1']));
    expect(alone.status).toBe(2);
    expect(alone.stderr).toMatch(/--zero-stage 1 shards over data-parallel processes/);
    // Stages 2 and 3 run under FullyShardedDataParallel, which Debian's PyTorch 1.13 cannot import on
    // Python 3.11: said once, before any process starts (test/harness-transformers.test.ts runs them).
    if (spawnSync(python, ['-c', 'import torch.distributed.fsdp'], { stdio: 'pipe' }).status !== 0) {
      const three = await exited(tinyRun(['--gpus', '2', '--zero-stage', '3']));
      expect(three.status).toBe(2);
      expect(three.stderr).toMatch(
        /^measure\.py: --zero-stage 3 needs FullyShardedDataParallel, which this PyTorch cannot import \(PyTorch 2 can\)/,
      );
      expect(three.stderr.trim().split('\n')).toHaveLength(1);
    }
  }, 120_000);

  it("runs a tensor-parallel configuration's harness commands: each GPU its share, the all-reduces the predictor costs", async () => {
    // ViT-B/16 at 32 px on two GPUs of a node, tensor parallel 2: the layer replay split as the
    // predictor splits it, one group, no data parallelism.
    const parallelism = { tensorParallel: 2, pipelineParallel: 1, zeroStage: 0, recompute: 'none' as const };
    const { configuration, harness } = await configured('vit_b16', 32, {
      gpusPerNode: 2,
      batchSizePerGpu: 1,
      parallelism,
    });
    expect(harness.commands[1]).toBe(
      'python3 measure.py --batch-size 1 --precision FP32 --tensor-parallel 2 --gpus 2 --out runs.csv',
    );
    expect(harness.note).toMatch(/tensor parallelism 2 is replayed layer by layer/);
    const { at, row } = runAsGiven(harness.commands, 'tensor-');
    expect(row.tensor_parallel).toBe('2');
    // The all-reduces the predictor costs (predictor/step.ts): one per row-parallel linear instance
    // and pass, moving the sum of their outputs.
    const model = getModel('vit_b16', { seqLenOrImageSize: 32 })!;
    const s = parallelStructure(costOf(model), model.layers);
    expect(s.tpCollectives).toBe(24); // 12 blocks: attention output and MLP down projection
    expect(row.note).toContain(
      `tensor parallel 2 x data parallel 1 over 2 processes (2 per node x 1 node): ${s.tpCollectives} row-parallel all-reduces per pass, ${s.tpReduceElements} elements per sample in all, on gloo`,
    );
    // Each rank trained its share of the weights (calibrate import checks them against the
    // predictor's per-GPU count, within 0.5%), and the run is recorded at that layout.
    expect(runFromRow(row, at)).toMatchObject({
      ...configuration,
      workload: { model: 'vit_b16', seqLen: 32 },
      parallelism,
    });
    const trained = Number(/\bparameters (\d+)/.exec(String(row.note))![1]);
    expect(trained / costOf(model).parameters).toBeCloseTo(0.5, 2);

    // Groups are GPUs of one machine; a Hugging Face build is not split; ZeRO needs replicas.
    refuses(join(at, 'measure.py'), [
      [['--gpus', '3', '--tensor-parallel', '2'], /3 processes per machine do not split into groups of 2/],
      [
        ['--gpus', '2', '--tensor-parallel', '2', '--zero-stage', '1'],
        /--zero-stage 1 shards over data-parallel processes/,
      ],
      [
        ['--gpus', '2', '--tensor-parallel', '2', '--hf-config', 'config.json'],
        /--tensor-parallel: the harness splits the layer replay of a zoo model/,
      ],
    ]);
  }, 180_000);

  it("runs a pipeline-parallel configuration's harness commands: Megatron's split, 1F1B, the residual stream across the boundary", async () => {
    // ViT-B/16 at 32 px on two GPUs of a node, two pipeline stages, two micro-batches per step.
    const parallelism = { tensorParallel: 1, pipelineParallel: 2, zeroStage: 0, recompute: 'none' as const };
    const { configuration, harness } = await configured('vit_b16', 32, {
      gpusPerNode: 2,
      batchSizePerGpu: 2,
      gradAccumSteps: 2,
      parallelism,
    });
    expect(harness.commands[1]).toBe(
      'python3 measure.py --batch-size 2 --grad-accum-steps 2 --precision FP32 --pipeline-parallel 2 --gpus 2 --out runs.csv',
    );
    expect(harness.note).toMatch(/pipeline parallelism 2 is replayed as Megatron splits and schedules it/);
    const { at, row } = runAsGiven(harness.commands, 'pipeline-');
    expect(row.pipeline_parallel).toBe('2');
    // Each stage holds half the blocks, the first also the patch embedding, the last the head: the
    // weights per stage as Megatron splits them, the whole model over the pipeline.
    const model = getModel('vit_b16', { seqLenOrImageSize: 32 })!;
    const cost = costOf(model);
    const s = parallelStructure(cost, model.layers);
    const firstBlock = s.inBlocks.indexOf(true);
    const stageWeights = [0, 1].map((k) =>
      cost.layers.reduce((sum, l, i) => {
        const n = s.inBlocks[i]
          ? Math.floor((l.count * (k + 1)) / 2) - Math.floor((l.count * k) / 2)
          : (i < firstBlock ? k === 0 : k === 1)
            ? l.count
            : 0;
        return sum + l.parameters * n;
      }, 0),
    );
    expect(stageWeights[0]).not.toBe(stageWeights[1]);
    // What crosses the boundary per micro-batch: the residual stream the predictor sends
    // (predictor/step.ts stageBoundaryBytes), 5 tokens of 768 per sample.
    expect(s.residualElements).toBe(5 * 768);
    expect(row.note).toContain(
      `pipeline parallel 2 x tensor parallel 1 x data parallel 1 over 2 processes (2 per node x 1 node): 1F1B over 2 micro-batches, ${2 * s.residualElements} elements each way per micro-batch at its stage boundary, weights per stage ${stageWeights.join(' / ')}, on gloo`,
    );
    expect(row.note).toContain(`parameters ${cost.parameters}`);
    expect(runFromRow(row, at)).toMatchObject({
      ...configuration,
      workload: { model: 'vit_b16', seqLen: 32 },
      parallelism,
    });
    // Interleaved, two chunks per stage: the model's four chunks of three blocks, stage 0 holding
    // the first and third (with the embedding), stage 1 the second and fourth (with the head): the
    // same weights per stage here, three boundaries crossed.
    const interleavedLayout = { ...parallelism, virtualPipelineStages: 2 };
    const interleaved = await configured('vit_b16', 32, {
      gpusPerNode: 2,
      batchSizePerGpu: 2,
      gradAccumSteps: 2,
      parallelism: interleavedLayout,
    });
    expect(interleaved.harness.commands[1]).toBe(
      'python3 measure.py --batch-size 2 --grad-accum-steps 2 --precision FP32 --pipeline-parallel 2 --virtual-pipeline-stages 2 --gpus 2 --out runs.csv',
    );
    const chunked = runAsGiven(interleaved.harness.commands, 'interleaved-');
    expect(chunked.row.virtual_pipeline_stages).toBe('2');
    expect(chunked.row.note).toContain(
      `interleaved 1F1B, 2 model chunks per stage, over 2 micro-batches, ${2 * s.residualElements} elements each way per micro-batch at each of its 3 chunk boundaries, weights per stage ${stageWeights.join(' / ')}, on gloo`,
    );
    expect(runFromRow(chunked.row, chunked.at)).toMatchObject({
      ...interleaved.configuration,
      workload: { model: 'vit_b16', seqLen: 32 },
      parallelism: interleavedLayout,
    });

    // The processes must form whole pipelines; no framework runs ZeRO stage 2 under a pipeline (3
    // runs under FSDP2: test/harness-transformers.test.ts); a Hugging Face build is not split.
    refuses(join(at, 'measure.py'), [
      [['--gpus', '3', '--pipeline-parallel', '2'], /3 processes do not split into whole pipelines of 2/],
      [
        [
          '--gpus',
          '2',
          '--pipeline-parallel',
          '2',
          '--virtual-pipeline-stages',
          '2',
          '--grad-accum-steps',
          '3',
        ],
        /interleaved schedule runs micro-batches in groups of the 2 stages; give --grad-accum-steps a multiple of 2/,
      ],
      [
        [
          '--gpus',
          '2',
          '--pipeline-parallel',
          '2',
          '--virtual-pipeline-stages',
          '7',
          '--grad-accum-steps',
          '2',
        ],
        /vit_b16 has 12 transformer block\(s\), and every model chunk needs at least one/,
      ],
      [
        ['--gpus', '4', '--pipeline-parallel', '2', '--zero-stage', '2'],
        /--zero-stage 2 with --pipeline-parallel: no framework shards a pipeline's gradients per micro-batch \(DeepSpeed refuses ZeRO-2 under a pipeline\); FSDP under one, as torchtitan runs it, is --zero-stage 3/,
      ],
      [
        ['--gpus', '2', '--pipeline-parallel', '2', '--hf-config', 'config.json'],
        /--pipeline-parallel: the harness splits the layer replay of a zoo model/,
      ],
    ]);
  }, 180_000);

  it("runs a context-parallel configuration's harness commands: each GPU half the sequence, K and V round the ring", async () => {
    // ViT-B/16 at 32 px on two GPUs of a node, one ring of two over its five tokens.
    const parallelism = {
      tensorParallel: 1,
      pipelineParallel: 1,
      contextParallel: 2,
      zeroStage: 0,
      recompute: 'none' as const,
    };
    const { configuration, harness } = await configured('vit_b16', 32, {
      gpusPerNode: 2,
      batchSizePerGpu: 2,
      parallelism,
    });
    expect(harness.commands[1]).toBe(
      'python3 measure.py --batch-size 2 --precision FP32 --context-parallel 2 --gpus 2 --out runs.csv',
    );
    const { at, row } = runAsGiven(harness.commands, 'context-');
    expect(row.context_parallel).toBe('2');
    // At every attention core (predictor/step.ts: blocks x 2 x the residual stream x (CP - 1) / CP
    // per pass), one step of the rank's K and V: 2 x 5 x 768 / 2 elements per sample.
    const model = getModel('vit_b16', { seqLenOrImageSize: 32 })!;
    const s = parallelStructure(costOf(model), model.layers);
    expect(s.blocks).toBe(12);
    expect(row.note).toContain(
      `context parallel 2 x data parallel 1 over 2 processes (2 per node x 1 node), K and V round the ring at ${s.blocks} attention cores per pass, 1 step of ${s.residualElements} elements per sample each, in flight while the scores compute, DistributedDataParallel across the groups, on gloo`,
    );
    // The sequence splits, the weights do not.
    expect(row.note).toContain(`parameters ${costOf(model).parameters}`);
    expect(runFromRow(row, at)).toMatchObject({
      ...configuration,
      workload: { model: 'vit_b16', seqLen: 32 },
      parallelism,
    });
    refuses(join(at, 'measure.py'), [
      [
        ['--gpus', '3', '--context-parallel', '2'],
        /--context-parallel 2: 3 processes do not split into whole replicas of 2/,
      ],
    ]);
  }, 180_000);

  it('times expert parallelism: each rank its experts, the all-to-alls the predictor costs, imported at that layout', async () => {
    // A tiny mixture of experts (2 blocks, 4 experts, top-2) as a layer list, on four processes:
    // two expert-parallel groups of two, each rank holding two of every layer's four experts.
    copyFileSync(new URL('./fixtures-harness/tiny-moe.json', import.meta.url), join(dir, 'tiny-moe.json'));
    const moe = (args: string[]) =>
      spawn(
        python,
        [
          HARNESS_FILE.pathname,
          '--layers',
          'tiny-moe.json',
          '--batch-size',
          '2',
          '--steps',
          '2',
          '--warmup',
          '1',
          '--device',
          'cpu',
          ...args,
        ],
        { cwd: dir, stdio: 'pipe' },
      );
    expect(
      await exited(
        moe(['--gpus', '4', '--expert-parallel', '2', '--grad-accum-steps', '2', '--out', 'moe.csv']),
      ),
    ).toEqual({ status: 0, stderr: '' });
    const [row] = readRunsFile(join(dir, 'moe.csv'));
    expect(row.expert_parallel).toBe('2');
    const { model } = loadModelFile(join(dir, 'tiny-moe.json'));
    const cost = costOf(model);
    const s = parallelStructure(cost, model.layers);
    // Per pass, each MoE layer's dispatch and combine (predictor/step.ts: 2 x the dispatched
    // elements, (EP - 1) / EP of them leaving the rank).
    expect(s.moeLayers).toBe(2);
    expect(row.note).toContain(
      `data parallel 4 over 4 processes (4 per node x 1 node), expert parallel 2: ${2 * s.moeLayers} all-to-alls per pass, ${2 * s.expertDispatchElements} elements per sample in all, the experts' gradients averaged over the 2 ranks holding them, gradients all-reduced across the replicas after the last micro-batch, on gloo`,
    );
    // Each rank trained the dense weights and half the experts: the predictor's share per GPU.
    const trained = Number(/\bparameters (\d+)/.exec(String(row.note))![1]);
    expect(trained).toBe(s.splitParameters + s.replicatedParameters + s.expertParameters / 2);
    expect(runFromRow(row, dir).parallelism).toEqual({
      tensorParallel: 1,
      pipelineParallel: 1,
      expertParallel: 2,
      zeroStage: 0,
      recompute: 'none',
    });

    // ZeRO stage 1 shards the experts' optimizer states over the ranks holding them, the rest over
    // the data-parallel ranks (Megatron's distributed optimizer).
    expect(
      await exited(
        moe(['--gpus', '4', '--expert-parallel', '2', '--zero-stage', '1', '--out', 'moe-zero.csv']),
      ),
    ).toEqual({ status: 0, stderr: '' });
    const [sharded] = readRunsFile(join(dir, 'moe-zero.csv'));
    expect(sharded.note).toMatch(/expert parallel 2: .*; ZeRO stage 1: ZeroRedundancyOptimizer;/);
    expect(runFromRow(sharded, dir).parallelism).toMatchObject({ expertParallel: 2, zeroStage: 1 });

    for (const [args, message] of [
      [['--gpus', '3', '--expert-parallel', '2'], /the 3 of a stage do not split into groups of 2/],
      [
        ['--gpus', '3', '--expert-parallel', '3'],
        /--expert-parallel 3: must divide the experts of every expert layer \(4\)/,
      ],
    ] as [string[], RegExp][]) {
      const refused = await exited(moe(args));
      expect(refused.status, args.join(' ')).toBe(2);
      expect(refused.stderr).toMatch(message);
    }
    // Without its router and experts the model has nothing to spread.
    const { layers } = JSON.parse(readFileSync(join(dir, 'tiny-moe.json'), 'utf8')) as {
      layers: { router?: boolean; experts?: number }[];
    };
    writeFileSync(
      join(dir, 'tiny-dense.json'),
      JSON.stringify(layers.filter((l) => !l.router && !l.experts)),
    );
    const dense = spawnSync(
      python,
      [
        HARNESS_FILE.pathname,
        '--layers',
        'tiny-dense.json',
        '--batch-size',
        '2',
        '--gpus',
        '2',
        '--expert-parallel',
        '2',
      ],
      { cwd: dir, encoding: 'utf8' },
    );
    expect(dense.status).toBe(2);
    expect(dense.stderr).toMatch(/--expert-parallel: tiny-dense\.json has no routed expert layers/);
  }, 120_000);

  it('schedules a pipeline as Megatron does, 1F1B and interleaved, deadlock-free', () => {
    // Trainer.pipeline of every stage, each in a thread, with the sends and receives through
    // queues (a receive waits, a send does not, as on gloo and NCCL): every stage's order of
    // forwards (F) and backwards (B) of chunk.micro-batch, receives from (r) and sends to (s) its
    // neighbours, for P stages, M micro-batches and V model chunks per stage.
    const schedule = (P: number, M: number, V: number) =>
      fromMeasurePython(
        python,
        [
          'import queue, threading',
          'P, M, V = (int(x) for x in sys.argv[1:])',
          'events = {k: [] for k in range(P)}',
          'boxes = {(a, b): queue.Queue() for a in range(P) for b in range(P)}',
          'class Loss:',
          '    def __init__(self, i): self.i = i',
          '    def __truediv__(self, n): return self',
          'class Sent:',
          '    def wait(self): pass',
          'class Dist:',
          '    def __init__(self, k): self.k = k',
          '    def recv(self, t, src, group): events[self.k].append(f"r{src}"); boxes[(src, self.k)].get(timeout=20)',
          '    def isend(self, t, dst, group): events[self.k].append(f"s{dst}"); boxes[(self.k, dst)].put(1); return Sent()',
          'class Stage:',
          '    def __init__(self, k):',
          '        self.k, self.n, self.params = k, [0] * V, []',
          '        self.pipe = {"stage": k, "stages": P, "chunks": V, "group": None, "dist": Dist(k), "prev": (k - 1) % P,',
          '                     "next": (k + 1) % P, "inbox": None, "outbox": None}',
          '    def forward(self, chunk_batch):',
          '        c = chunk_batch[0]',
          '        events[self.k].append(f"F{c}.{self.n[c]}"); self.n[c] += 1; return Loss(f"{c}.{self.n[c] - 1}")',
          '    def backward(self, loss): events[self.k].append(f"B{loss.i}")',
          'threads = [threading.Thread(target=measure.Trainer.pipeline, args=(Stage(k), [None] * V, M)) for k in range(P)]',
          'for t in threads: t.start()',
          'for t in threads: t.join(timeout=30)',
          'print(json.dumps({"stuck": [t.is_alive() for t in threads], "orders": [" ".join(events[k]) for k in range(P)]}))',
        ],
        [P, M, V].map(String),
      ) as { stuck: boolean[]; orders: string[] };
    expect(schedule(3, 4, 1)).toEqual({
      stuck: [false, false, false],
      orders: [
        // Stage 0: two forwards ahead, then one forward and one backward in turn, then the last two backwards.
        'F0.0 s1 F0.1 s1 F0.2 s1 r1 B0.0 F0.3 s1 r1 B0.1 r1 B0.2 r1 B0.3',
        'r0 F0.0 s2 r0 F0.1 s2 r2 B0.0 s0 r0 F0.2 s2 r2 B0.1 s0 r0 F0.3 s2 r2 B0.2 s0 r2 B0.3 s0',
        // The last stage: each micro-batch's backward right after its forward.
        'r1 F0.0 B0.0 s1 r1 F0.1 B0.1 s1 r1 F0.2 B0.2 s1 r1 F0.3 B0.3 s1',
      ],
    });
    // Interleaved, two stages of two chunks each (the model's chunks in order: stage 0 chunk 0,
    // stage 1 chunk 0, stage 0 chunk 1, stage 1 chunk 1): micro-batches in groups of two through
    // chunk 0, then chunk 1; stage 0 runs 2 (P - 1) + (V - 1) P = 4 forwards ahead, stage 1 two;
    // backwards from the last chunk; stage 0's chunk 1 receives from stage 1's chunk 0.
    expect(schedule(2, 4, 2)).toEqual({
      stuck: [false, false],
      orders: [
        'F0.0 s1 F0.1 s1 r1 F1.0 s1 r1 F1.1 s1 F0.2 s1 r1 B1.0 s1 F0.3 s1 r1 B1.1 s1 r1 F1.2 s1 r1 B0.0 r1 F1.3 s1 r1 B0.1 r1 B1.2 s1 r1 B1.3 s1 r1 B0.2 r1 B0.3',
        'r0 F0.0 s0 r0 F0.1 s0 r0 F1.0 B1.0 s0 r0 F1.1 B1.1 s0 r0 F0.2 s0 r0 B0.0 s0 r0 F0.3 s0 r0 B0.1 s0 r0 F1.2 B1.2 s0 r0 F1.3 B1.3 s0 r0 B0.2 s0 r0 B0.3 s0',
      ],
    });
    // Deadlock-free on larger ones too, and every micro-batch through every chunk of every stage once each way.
    for (const [P, M, V] of [
      [4, 8, 3],
      [4, 4, 2],
      [3, 2, 1],
    ]) {
      const { stuck, orders } = schedule(P, M, V);
      expect(stuck.some(Boolean), `${P} ${M} ${V}`).toBe(false);
      for (const order of orders)
        for (const kind of ['F', 'B'])
          expect(order.split(' ').filter((e) => e.startsWith(kind))).toHaveLength(M * V);
    }
  });

  it('refuses a data-parallel run it cannot describe: no network across nodes, a network on one machine, --gpus under torchrun', async () => {
    const across = { WORLD_SIZE: '2', LOCAL_WORLD_SIZE: '1', RANK: '0', LOCAL_RANK: '0' };
    const cases: [string[], Record<string, string>, RegExp][] = [
      [[], across, /--inter-node-gbps: this run spans 2 nodes; give the network between them/],
      [['--inter-node-gbps', '100'], {}, /describe a run across nodes .* this one runs on one machine/],
      [['--gpus', '2'], { ...across, LOCAL_WORLD_SIZE: '2' }, /--gpus: under torchrun the launcher starts/],
      [['--gpus', '0'], {}, /--gpus must be at least 1/],
      [['--grad-accum-steps', '0'], {}, /--batch-size, --grad-accum-steps and --steps must be at least 1/],
      [['--gpus', '2', '--device', 'cuda:1'], {}, /--device cuda:1: with several processes/],
      [['--inter-node-gbps', '-5'], across, /--inter-node-gbps must be a positive number/],
    ];
    for (const [args, env, message] of cases) {
      const r = await exited(tinyRun(args, env));
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  }, 60_000);

  it('`trainplan harness --model` embeds the zoo model: the script alone runs it', () => {
    const script = join(dir, 'measure.py');
    writeFileSync(script, harnessScript('ncf_neumf'));
    const out = execFileSync(
      python,
      [
        script,
        '--batch-size',
        '8',
        '--steps',
        '1',
        '--warmup',
        '0',
        '--precision',
        'AMP_BF16',
        '--format',
        'json',
      ],
      {
        cwd: dir,
        stdio: 'pipe',
      },
    ).toString();
    const [run] = JSON.parse(out) as Record<string, unknown>[];
    expect(run).toMatchObject({
      model: 'ncf_neumf',
      precision: 'AMP_BF16',
      batch_size_per_gpu: 8,
      gpu: 'cpu',
    });
    expect(run.step_time_ms).toBeGreaterThan(0);
    expect(run.attention).toBe(''); // no attention cores to run either way
    expect(runFromRow(run, dir).workload).toMatchObject({ model: 'ncf_neumf' });
    // FP16 training needs a GPU: the harness says so instead of failing inside PyTorch.
    const fp16 = spawnSync(
      python,
      [script, '--batch-size', '8', '--precision', 'AMP_FP16', '--device', 'cpu'],
      { encoding: 'utf8' },
    );
    expect(fp16.status).toBe(2);
    expect(fp16.stderr).toMatch(/AMP_FP16 needs a GPU/);
  }, 120_000);

  /** A Python expression's value (as JSON) with measure.py imported as `measure`, after `prelude`. */
  const fromMeasure = (expression: string, prelude: string[] = []): unknown =>
    fromMeasurePython(python, [...prelude, `print(json.dumps(${expression}))`]);

  /**
   * A torchvision network as measure.py builds it: its weights, and its convolution and linear FLOPs
   * per image (2 x MACs; not for ViT, whose attention projections are no Linear modules there and
   * whose CPU forward takes half a minute).
   */
  const SHAPE = [
    'def shape(name, image):',
    '    model = measure.torchvision_model(torch, name, image)[0]',
    '    macs = [0]',
    '    def conv(m, i, o): macs[0] += o.numel() * (m.in_channels // m.groups) * m.kernel_size[0] * m.kernel_size[1]',
    '    def linear(m, i, o): macs[0] += o.numel() * m.in_features',
    '    for mod in model.modules():',
    '        if isinstance(mod, torch.nn.Conv2d): mod.register_forward_hook(conv)',
    '        elif type(mod) is torch.nn.Linear: mod.register_forward_hook(linear)',
    '    if name.startswith("vit_"): return {"parameters": sum(p.numel() for p in model.parameters()), "flops": None}',
    '    model.eval()',
    '    with torch.no_grad(): model(torch.randn(1, 3, image, image))',
    '    return {"parameters": sum(p.numel() for p in model.parameters()), "flops": 2 * macs[0]}',
  ];

  it("says how a run's attention cores ran: fused as trainplan costs the model, op by op on a PyTorch without the kernel", () => {
    // GPT-2's code calls scaled_dot_product_attention, so the embedded model marks its cores fused.
    // Debian's PyTorch 1.13 has no such kernel: they run op by op, and the run says EAGER (and is
    // predicted so once imported) rather than pass for the fused kernel trainplan costs.
    const script = join(dir, 'measure-gpt2.py');
    writeFileSync(script, harnessScript('gpt2_124m', 16));
    const embedded = JSON.parse(
      JSON.parse(/^EMBEDDED_MODEL = json\.loads\((.*)\)$/m.exec(readFileSync(script, 'utf8'))![1]),
    );
    expect(embedded.attention.fused.some(Boolean)).toBe(true);
    const sdpa = fromMeasure('hasattr(torch.nn.functional, "scaled_dot_product_attention")') as boolean;
    const measure = (args: string[] = []) => {
      const out = execFileSync(python, [script, '--batch-size', '1', ...ONE_STEP_ON_CPU, ...args], {
        cwd: dir,
        stdio: 'pipe',
      }).toString();
      return (JSON.parse(out) as Record<string, unknown>[])[0];
    };
    const run = measure();
    expect(run.attention).toBe(sdpa ? 'FUSED' : 'EAGER');
    expect(runFromRow(run, dir).attention).toBe(sdpa ? 'fused' : 'eager');
    if (sdpa) {
      // Asked for, the replay runs them op by op, and says so.
      expect(measure(['--attention', 'eager']).attention).toBe('EAGER');
    } else {
      expect(run.note).toMatch(
        /attention cores run op by op: PyTorch \S+ has no scaled_dot_product_attention/,
      );
      // Asked to run them fused, this PyTorch cannot: refused before anything runs.
      refuses(script, [
        [
          ['--attention', 'fused'],
          /--attention fused runs scaled_dot_product_attention: PyTorch 2\.0 or later/,
        ],
      ]);
    }
  }, 120_000);

  it('builds with torchvision only the zoo models it builds as the zoo defines them', () => {
    const mapped = fromMeasure('measure.TORCHVISION') as Record<string, string>;
    expect(Object.keys(mapped).sort()).toEqual([
      'efficientnet_b0',
      'efficientnet_b4',
      'inception_v3',
      'resnet50_v1.5',
      'vgg16',
      'vit_b16',
    ]);
    // Each at its zoo entry's image size; ViT also at 384 (its position embeddings follow --seq-len).
    const builds: Record<string, [string, number, ModelDef]> = Object.fromEntries(
      Object.entries(mapped).map(([id, name]) => {
        const zoo = getModel(id)!;
        return [id, [name, zoo.imageSize!, zoo]];
      }),
    );
    builds['vit_b16@384'] = ['vit_b_16', 384, getModel('vit_b16', { seqLenOrImageSize: 384 })!];
    const shapes = fromMeasure(
      `{k: shape(n, i) for k, (n, i) in json.loads(${JSON.stringify(
        JSON.stringify(Object.fromEntries(Object.entries(builds).map(([k, [n, i]]) => [k, [n, i]]))),
      )}).items()}`,
      SHAPE,
    ) as Record<string, { parameters: number; flops: number | null }>;
    for (const [id, [, , zoo]] of Object.entries(builds)) {
      const cost = costOf(zoo);
      // The same weights, but for the one extra class of tf_cnn_benchmarks' 1001-way heads (vgg16,
      // inception_v3: 4,097 or 2,049 weights).
      expect(Math.abs(shapes[id].parameters - cost.parameters), id).toBeLessThanOrEqual(4097);
      // The same convolution and linear work (a stride in another place changes it; the zoo costs
      // both as matmul-class layers). ViT's attention projections are not nn.Linear modules there.
      if (!id.startsWith('vit')) {
        const zooFlops = cost.layers
          .filter((l) => l.opClass === 'matmul')
          .reduce((sum, l) => sum + l.forwardFlops * l.count, 0);
        expect(Math.abs(shapes[id].flops! / zooFlops - 1), id).toBeLessThan(1e-4);
      }
    }
    expect(shapes['vit_b16@384'].parameters).toBe(costOf(builds['vit_b16@384'][2]).parameters);
    // Asked for a model torchvision builds otherwise (its ResNeXt-101 is 32x8d: twice the zoo's
    // 32x4d), the harness refuses instead of timing another network under this model's name.
    const script = join(dir, 'resnext.py');
    writeFileSync(script, harnessScript('resnext101_32x4d'));
    const refused = spawnSync(python, [script, '--builder', 'torchvision', '--batch-size', '2'], {
      encoding: 'utf8',
    });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/torchvision does not build resnext101_32x4d as the zoo defines it/);
  }, 120_000);

  it('keeps for backward what PyTorch saves of ResNet-50, Inception-v3, VGG-16 and EfficientNet-B0: a tensor several paths read, once', () => {
    // One image through torchvision's networks as measure.py builds them (SAVED_BYTES: what autograd
    // keeps, weights and their autocast copies left out), against the activations the default stack
    // counts. A projection shortcut reads the block's input and an Inception module's
    // branches the module's input, which the first path's convolution already keeps.
    const saved = fromMeasure('out', [
      ...SAVED_BYTES,
      'out = {}',
      'for key, name, image in [("resnet50_v1.5", "resnet50", 224), ("inception_v3", "inception_v3", 299), ("vgg16", "vgg16", 224), ("efficientnet_b0", "efficientnet_b0", 224)]:',
      '    for precision in ["FP32", "AMP_BF16"]:',
      '        model, make_batch, loss = measure.torchvision_model(torch, name, image)',
      '        step = lambda: loss(model, make_batch(1, torch.device("cpu"), torch.float32))',
      '        out[f"{key} {precision}"] = saved_bytes(model, step, precision)',
    ]) as Record<string, number>;
    const eff = loadEfficiency();
    // VGG-16 has one path throughout: the same count either way. EfficientNet-B0's squeeze-and-
    // excitation gate multiplies the map by one value per channel: it keeps the map and the gate,
    // not two maps (counted as two, it was 9.7% over).
    for (const id of ['resnet50_v1.5', 'inception_v3', 'vgg16', 'efficientnet_b0']) {
      const model = getModel(id)!;
      // The same network read as one path after another: every reader keeps its own copy.
      const oneReaderEach = { ...model, layers: model.layers.map(({ sameInputAs: _, ...l }) => l) };
      for (const precision of ['FP32', 'AMP_BF16'] as const) {
        const ratio = (m: ModelDef) =>
          activationBytesPerSampleOn(
            costOf(m),
            precision,
            1,
            'none',
            stackMemory(undefined, precision, eff).eff.memory,
          ) / saved[`${id} ${precision}`];
        expect(Math.abs(ratio(model) - 1), `${id} ${precision}`).toBeLessThan(0.04);
        if (id === 'vgg16' || id === 'efficientnet_b0') expect(ratio(oneReaderEach)).toBe(ratio(model));
        else
          expect(
            ratio(oneReaderEach),
            `${id} ${precision}, shared inputs counted per reader`,
          ).toBeGreaterThan(1.05);
        if (id === 'efficientnet_b0') {
          // The gate as a second map-sized factor (mul's default of two full operands).
          const twoMaps = {
            ...model,
            layers: model.layers.map((l) => (l.type === 'elementwise' ? { ...l, inputs: undefined } : l)),
          };
          expect(ratio(twoMaps), `${id} ${precision}, gate counted as a map`).toBeGreaterThan(1.05);
        }
      }
    }
  }, 120_000);

  it("times a zoo CNN built by torchvision, training the zoo entry's weights", () => {
    const script = join(dir, 'resnet.py');
    writeFileSync(script, harnessScript('resnet50_v1.5'));
    const out = execFileSync(
      python,
      [
        script,
        '--builder',
        'torchvision',
        '--seq-len',
        '64',
        '--batch-size',
        '2',
        '--steps',
        '1',
        '--warmup',
        '0',
        '--format',
        'json',
      ],
      { cwd: dir, stdio: 'pipe' },
    ).toString();
    const [run] = JSON.parse(out) as Record<string, unknown>[];
    expect(run).toMatchObject({ model: 'resnet50_v1.5', seq_len: 64, batch_size_per_gpu: 2, gpu: 'cpu' });
    expect(run.step_time_ms).toBeGreaterThan(0);
    expect(run.note).toMatch(/builder torchvision; parameters \d+/);
    const trained = Number(/parameters (\d+)/.exec(String(run.note))![1]);
    expect(trained).toBe(costOf(getModel('resnet50_v1.5')!).parameters);
  }, 120_000);

  it('replays every layer kind the zoo uses, and trains a tied head as one weight with its embedding', () => {
    // A layer of each type and kind in the zoo's models, its sizes capped at 64 (a 405B model's
    // layers do not fit a test), each built by measure.py and run forward and backward (GPT-2's
    // gelu_new was missing: its harness stopped with a KeyError).
    const smallest = new Map<string, Record<string, unknown>>();
    const capped = (l: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(l).map(([k, v]) => [k, k === 'count' ? 1 : typeof v === 'number' && v > 64 ? 64 : v]),
      );
    for (const m of loadZoo())
      for (const l of m.layers as unknown as Record<string, unknown>[]) {
        const key = `${String(l.type)}:${String(l.kind ?? '')}:${((l.experts as number | undefined) ?? 1) > 1}`;
        if (!smallest.has(key)) smallest.set(key, capped(l));
      }
    const kinds = [...smallest.keys()];
    expect(kinds).toContain('activation:gelu_new:false');
    const replayed = fromMeasure('forwards', [
      `layers = json.loads(${JSON.stringify(JSON.stringify([...smallest.values()]))})`,
      'model, make_batch, loss = measure.layer_replay(torch, torch.nn, layers)',
      // Two samples: a batch norm over one value per channel (capped sizes) trains only on more.
      'loss(model, make_batch(2, torch.device("cpu"), torch.float32)).backward()',
      'forwards = len(model.ops)',
    ]);
    expect(replayed).toBe(kinds.length);
    // GPT-2's output head is its token embedding's table: the replay trains the zoo's weights.
    const gpt2 = getModel('gpt2_124m', { seqLenOrImageSize: 64 })!;
    const trained = fromMeasure('sum(p.numel() for p in model.parameters())', [
      `layers = json.loads(${JSON.stringify(JSON.stringify(gpt2.layers))})`,
      'model = measure.layer_replay(torch, torch.nn, layers)[0]',
    ]);
    expect(trained).toBe(costOf(gpt2).parameters);
    // Transformer-XL's adaptive-softmax clusters are slices of its one table: the weights its run
    // trains pass calibrate import's check (they were 1.7x the model's, refused).
    const txl = getModel('transformerxl_base')!;
    const txlTrained = fromMeasure('sum(p.numel() for p in model.parameters())', [
      `layers = json.loads(${JSON.stringify(JSON.stringify(txl.layers))})`,
      'model = measure.layer_replay(torch, torch.nn, layers)[0]',
    ]) as number;
    expect(Math.abs(txlTrained / costOf(txl).parameters - 1)).toBeLessThan(0.005);
  }, 120_000);

  it('calibrate import refuses a run whose note says it trained another network than its model', () => {
    // What measure.py recorded for resnext101_32x4d before its torchvision builders were checked:
    // torchvision's 32x8d, twice the zoo model's weights. Beside it, a run of the zoo's own count.
    const csv = join(dir, 'wrong-network.csv');
    writeFileSync(
      csv,
      [
        'model,gpu,batch_size_per_gpu,precision,step_time_ms,source,note',
        'resnext101_32x4d,A100-SXM4-80GB,64,AMP_FP16,180,harness,median of 20 steps; builder torchvision; parameters 88791336; torch 2.1.0',
        `resnext101_32x4d,A100-SXM4-80GB,64,AMP_FP16,120,harness,median of 20 steps; builder layer-replay; parameters ${costOf(getModel('resnext101_32x4d')!).parameters}; torch 2.1.0`,
      ].join('\n') + '\n',
    );
    const cli = tsx(['calibrate', 'import', csv, '--data-dir', join(dir, 'wrong-data'), '--owner', 'ci']);
    expect(cli.status).toBe(1);
    expect(cli.stdout).toMatch(/stored 1 of 2 runs/);
    expect(cli.stdout).toMatch(
      /row 1: rejected: note: the run trained 88,791,336 weights, but resnext101_32x4d has 44,177,704: it timed another network/,
    );
    expect(cli.stdout).not.toMatch(/row 2: rejected/);
  }, 120_000);

  it("refuses ZeRO 2 and 3 for Transformer-XL's adaptive softmax once, before any process starts", () => {
    // Its tied clusters read slices of the word embedding's table, which FullyShardedDataParallel's
    // units do not share here: said by parse_args, not by every spawned process with a traceback.
    const script = join(dir, 'txl.py');
    writeFileSync(script, harnessScript('transformerxl_base'));
    const refused = spawnSync(
      python,
      [script, '--batch-size', '1', '--device', 'cpu', '--gpus', '2', '--zero-stage', '2'],
      { cwd: dir, encoding: 'utf8' },
    );
    expect(refused.status).toBe(2);
    expect(refused.stderr).toBe(
      "measure.py: --zero-stage 2: transformerxl_base's output head reads a slice of its embedding table (an adaptive softmax), which FullyShardedDataParallel's units do not share here\n",
    );
  });

  it("replays layers whose per-sample counts are expected values (Transformer-XL's adaptive softmax)", () => {
    // Its tail clusters see 4.8, 6.72 and 0.576 of a sequence's tokens on average: the replay gave
    // torch.randn a fractional size and every Transformer-XL run crashed. Over a batch of 2 they are
    // 10, 13 and 1 rows.
    const layers = (
      getModel('transformerxl_base')!.layers as { tokens?: number; elements?: number }[]
    ).filter((l) => !Number.isInteger(l.tokens ?? 1) || !Number.isInteger(l.elements ?? 1));
    expect(layers.length).toBeGreaterThanOrEqual(3);
    // Its tied clusters read their rows of the word embedding's table: the table comes first.
    const table = getModel('transformerxl_base')!.layers.find((l) => l.type === 'embedding')!;
    writeFileSync(join(dir, 'fractional.json'), JSON.stringify([table, ...layers]));
    const shapes = fromMeasure('[list(x.shape) for x in xs]', [
      'import torch.nn as nn',
      `model, make_batch, loss = measure.layer_replay(torch, nn, json.load(open(${JSON.stringify(join(dir, 'fractional.json'))})))`,
      'xs = make_batch(2, torch.device("cpu"), torch.float32)',
      'loss(model, xs).backward()',
    ]) as number[][];
    expect(shapes.slice(1).map((s) => s.slice(0, 2))).toEqual(
      layers.map((l) => [1, Math.round(2 * (l.tokens !== undefined ? l.tokens : l.elements!))]),
    );
  });

  it("checks a Hugging Face config's run against the importer's weight count, as transformers builds it", () => {
    copyFileSync(new URL('./fixtures-harness/hf/llama.json', import.meta.url), join(dir, 'hf-llama.json'));
    // A Python without transformers (Debian's has none) says what --hf-config needs, not a traceback.
    if (spawnSync(python, ['-c', 'import transformers'], { stdio: 'pipe' }).status !== 0) {
      const missing = spawnSync(
        python,
        [HARNESS_FILE.pathname, '--hf-config', 'hf-llama.json', '--batch-size', '1'],
        { cwd: dir, encoding: 'utf8' },
      );
      expect(missing.status).toBe(2);
      expect(missing.stderr).toBe(
        'measure.py: --hf-config needs Hugging Face transformers (pip install transformers)\n',
      );
    }
    // 218,944: what transformers 5 trains for this config (test/harness-transformers.test.ts builds
    // it); the importer counts the same. A run that trained one layer more timed another config.
    const row = (parameters: number) => ({
      model: 'hf-llama.json',
      seq_len: '32',
      gpu: 'A100-SXM4-80GB',
      batch_size_per_gpu: '2',
      precision: 'BF16',
      step_time_ms: '5',
      note: `median of 20 steps; builder transformers; parameters ${parameters}; torch 2.13.0`,
    });
    expect(runFromRow(row(218_944), dir).workload.seqLen).toBe(32);
    expect(() => runFromRow(row(218_944 + 26_800), dir)).toThrow(
      /the run trained 245,744 weights, but hf-llama\.json has 218,944: it timed another network/,
    );
  });

  it('calibrate import stores a run on a catalog GPU, named as the device reports it', () => {
    const req = predictRequestOf({
      workload: { model: 'resnet50_v1.5', samples: 1 },
      gpu: 'A100-SXM4-80GB',
      nodes: 1,
      gpusPerNode: 1,
      batchSizePerGpu: 256,
      gradAccumSteps: 1,
      precision: 'AMP_FP16',
      framework: 'PyTorch',
      xla: false,
      fp32UsesTf32: true,
    });
    // Synthetic: 1.2x the roofline estimate (a plausible speed; the test checks the import path).
    const stepTimeMs = predict(req, loadEfficiency()).stepTimeMs * 1.2;
    const csv = join(dir, 'gpu-runs.csv');
    writeFileSync(
      csv,
      `model,gpu,gpu_memory_gb,batch_size_per_gpu,precision,step_time_ms,peak_memory_gb,source\nresnet50_v1.5,NVIDIA A100-SXM4-80GB,79.2,256,AMP_FP16,${stepTimeMs},41.5,test\n`,
    );
    const cli = tsx(['calibrate', 'import', csv, '--data-dir', join(dir, 'cli-data'), '--owner', 'ci']);
    expect(cli.stderr).toBe('');
    expect(cli.status).toBe(0);
    expect(cli.stdout).toMatch(/stored 1 of 1 runs in .*cli-data \(ids 1\)/);
    // What its peak now says of the model's memory: 41.5 GB where trainplan counts 10.4 GB of
    // activations and 0.55 GB besides, so the activations are taken as 3.92x.
    const p = predict(req, loadEfficiency()).memory;
    const scale = (41.5 - (allocatedGb(p) - p.activationsGb)) / p.activationsGb;
    expect(cli.stdout).toContain(
      `\n  memory: resnet50_v1.5 in AMP_FP16: activations ${scale.toFixed(2)}x what trainplan counts, from the peak memory of 1 run (predict and recommend size it so)\n`,
    );
    // And what plans on that GPU are fitted in from now on: the 79.2 GiB its process had.
    expect(cli.stdout).toContain(
      "\n  A100-SXM4-80GB: plans fitted in 79.20 GiB, the least CUDA gave a process of your stored run on it (the catalog's: 79.26, CUDA's total from a public capture (Gpu.usableMemorySource))\n",
    );
    // Another process reading the same data dir (as a server would) sees the run, mapped to the catalog id.
    const again = tsx(
      ['query', '{ measurements { owner gpu model stepTimeMs peakMemoryGb gpuMemoryGb source } }'],
      {
        TRAINPLAN_DATA_DIR: join(dir, 'cli-data'),
      },
    );
    expect(again.status).toBe(0);
    expect(JSON.parse(again.stdout).data.measurements).toEqual([
      {
        owner: 'ci',
        gpu: 'A100-SXM4-80GB',
        model: 'resnet50_v1.5',
        stepTimeMs,
        peakMemoryGb: 41.5,
        gpuMemoryGb: 79.2,
        source: 'test',
      },
    ]);
  }, 120_000);
});
