// The harness CSV's optional columns (channels_last; attention; recompute, zero_stage and
// tensor_parallel; inter_node_gbps and inter_node_transport for a run across nodes): what
// `trainplan calibrate import` reads of them.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { capacityLine, reportedGpuMemoryGb, runFromRow } from '../service/run-rows.js';
import { closeMeasurementStore, listRuns, predictRequestOf, recordRuns } from '../service/measurements.js';
import { customModel } from '../service/models.js';
import { predict } from '../predictor/predict.js';
import { DATABASE_FILE } from '../store/store.js';
import { getGpu, loadEfficiency } from '../seeds/catalog.js';
import { withStoreConfig } from './throwaway-store.js';

const row = {
  model: 'resnet50_v1.5',
  gpu: 'A100-SXM4-80GB',
  batch_size_per_gpu: '64',
  precision: 'AMP_BF16',
  framework: 'PyTorch',
  step_time_ms: '120',
};

describe('calibrate import: the convolution layout column', () => {
  it('reads true and false, leaves an empty or missing cell to the framework, refuses anything else', () => {
    expect(runFromRow({ ...row, channels_last: 'true' }, '.').channelsLast).toBe(true);
    expect(runFromRow({ ...row, channels_last: 'FALSE' }, '.').channelsLast).toBe(false);
    expect(runFromRow({ ...row, channels_last: '' }, '.').channelsLast).toBeNull();
    expect(runFromRow(row, '.').channelsLast).toBeNull();
    expect(() => runFromRow({ ...row, channels_last: 'nhwc' }, '.')).toThrow(
      /^channels_last: "nhwc" is not true or false/,
    );
  });
});

describe("calibrate import: the memory a run's GPU gave its process", () => {
  it("reads the harness's gpu_memory_gb column, else the note an earlier harness wrote it in", () => {
    expect(runFromRow({ ...row, gpu_memory_gb: '79.2' }, '.').gpuMemoryGb).toBe(79.2);
    const noted =
      '4 timed steps after 2 warm-up; builder torchvision; gpu_name NVIDIA A100-SXM4-80GB; gpu_memory_gb 79.25; driver 550.54';
    expect(reportedGpuMemoryGb({ ...row, note: noted })).toBe(79.25);
    // The column wins over the note; a CPU run (neither) says nothing; a cell that is no number is
    // left for the store's check to name.
    expect(reportedGpuMemoryGb({ ...row, gpu_memory_gb: '79.1', note: noted })).toBe(79.1);
    expect(runFromRow(row, '.').gpuMemoryGb).toBeNull();
    expect(reportedGpuMemoryGb({ ...row, note: 'builder layers; gpu_name cpu' })).toBeUndefined();
    expect(reportedGpuMemoryGb({ ...row, gpu_memory_gb: 'lots' })).toBeNaN();
  });

  it('says what plans on the GPU are fitted in from now on, against the catalog', () => {
    expect(capacityLine(getGpu('A30')!, { gb: 22.5, runs: 2 })).toBe(
      "  A30: plans fitted in 22.50 GiB, the least CUDA gave a process of your 2 stored runs on it (the catalog's: 24.00, its label: no source gives CUDA's total)",
    );
    expect(capacityLine(getGpu('T4')!, { gb: 14.75, runs: 1 })).toBe(
      "  T4: plans fitted in 14.75 GiB, the least CUDA gave a process of your stored run on it (the catalog's: 14.76, CUDA's total from a public capture (Gpu.usableMemorySource))",
    );
  });
});

describe('calibrate import: the network of a run across nodes', () => {
  const twoNodes = { ...row, nodes: '2', gpus_per_node: '8', inter_node_gbps: '100' };
  it('reads the network and its transport, and the run is predicted over it', () => {
    const tcp = runFromRow({ ...twoNodes, inter_node_transport: 'TCP' }, '.');
    expect([tcp.interNodeGbps, tcp.interNodeTransport]).toEqual([100, 'TCP']);
    expect(predictRequestOf(tcp)).toMatchObject({ nodes: 2, interNodeGbps: 100, interNodeTransport: 'TCP' });
    // An empty cell is RDMA, as a GraphQL run without the field.
    const rdma = runFromRow({ ...twoNodes, inter_node_transport: '' }, '.');
    expect(rdma.interNodeTransport).toBeNull();
    expect(predictRequestOf(rdma).interNodeTransport).toBeUndefined();
  });
  it('refuses a transport that is neither RDMA nor TCP, naming the field, rather than read it as RDMA', () => {
    const run = runFromRow({ ...twoNodes, inter_node_transport: 'tcp' }, '.');
    expect(() => predictRequestOf(run)).toThrow(/must be one of RDMA, TCP \(got "tcp"\)/);
    try {
      predictRequestOf(run);
    } catch (e) {
      expect((e as { field?: string }).field).toBe('interNodeTransport');
    }
  });
});

describe('calibrate import: the attention column', () => {
  const gpt = { ...row, model: 'gpt2_124m', batch_size_per_gpu: '8' };
  it('reads FUSED and EAGER in either case, a MeasurementInput object by either name; empty says nothing', () => {
    expect(runFromRow({ ...gpt, attention: 'EAGER' }, '.').attention).toBe('eager');
    expect(runFromRow({ ...gpt, attention: 'fused' }, '.').attention).toBe('fused');
    expect(runFromRow({ ...gpt, attention: '' }, '.').attention).toBeNull();
    expect(runFromRow(gpt, '.').attention).toBeNull();
    const input = { workload: { model: 'gpt2_124m' }, gpu: 'L4', batchSizePerGpu: 8, precision: 'AMP_BF16' };
    expect(runFromRow({ ...input, stepTimeMs: 100, attention: 'EAGER' }, '.').attention).toBe('eager');
  });
  it('predicts the run the way its cores ran: eager GPT-2 is slower than fused, not a slower GPU', () => {
    const eff = loadEfficiency();
    const step = (attention: string) =>
      predict(predictRequestOf(runFromRow({ ...gpt, attention }, '.')), eff).stepTimeMs;
    expect(predictRequestOf(runFromRow({ ...gpt, attention: 'EAGER' }, '.')).attention).toBe('eager');
    // Unstated, the run is predicted as predict's default for the model (GPT-2's code fuses).
    expect(step('')).toBe(step('FUSED'));
    expect(step('EAGER') / step('FUSED')).toBeGreaterThan(1.1);
  });
  it('refuses an implementation that is not one, naming the field, rather than read it as the default', () => {
    const run = runFromRow({ ...gpt, attention: 'flash' }, '.');
    expect(() => predictRequestOf(run)).toThrow(/must be one of FUSED, EAGER \(got "flash"\)/);
    try {
      predictRequestOf(run);
    } catch (e) {
      expect((e as { field?: string }).field).toBe('attention');
    }
  });
});

describe('calibrate import: the recomputation column', () => {
  const bert = { ...row, model: 'bert_large_squad', batch_size_per_gpu: '8' };
  it('reads full and selective as the run predicted with that recomputation; empty is none', () => {
    const full = runFromRow({ ...bert, recompute: 'full' }, '.');
    expect(full.parallelism).toEqual({
      tensorParallel: 1,
      pipelineParallel: 1,
      zeroStage: 0,
      recompute: 'full',
    });
    expect(predictRequestOf(full).parallelism).toMatchObject({ recompute: 'full' });
    expect(runFromRow({ ...bert, recompute: 'selective' }, '.').parallelism?.recompute).toBe('selective');
    expect(runFromRow({ ...bert, recompute: '' }, '.').parallelism).toBeUndefined();
    expect(runFromRow(bert, '.').parallelism).toBeUndefined();
  });
  it('refuses a mode that is not one, naming the column', () => {
    expect(() => runFromRow({ ...bert, recompute: 'FULL!' }, '.')).toThrow(
      /^recompute: "FULL!" is not one of none, selective, selective_op/,
    );
  });
});

/** Llama 2 7B on a node of eight GPUs, a micro-batch of one: a layout that shards and splits. */
const eight = {
  ...row,
  model: 'llama2_7b',
  batch_size_per_gpu: '1',
  gpus_per_node: '8',
  precision: 'BF16',
};

describe('calibrate import: the ZeRO stage column', () => {
  it('reads a stage as the run predicted at it, with its recomputation; empty is 0', () => {
    const run = runFromRow({ ...eight, zero_stage: '3', recompute: 'full' }, '.');
    expect(run.parallelism).toEqual({
      tensorParallel: 1,
      pipelineParallel: 1,
      zeroStage: 3,
      recompute: 'full',
    });
    expect(predictRequestOf(run).parallelism).toMatchObject({ zeroStage: 3, recompute: 'full' });
    expect(runFromRow({ ...eight, zero_stage: '' }, '.').parallelism).toBeUndefined();
  });
  it('refuses a stage that is not one, naming the column', () => {
    expect(() => runFromRow({ ...eight, zero_stage: '4' }, '.')).toThrow(
      /^zero_stage: "4" is not one of 0, 1, 2, 3/,
    );
  });
});

describe('calibrate import: the tensor-parallel column', () => {
  it('reads the degree as the run predicted at it, with its ZeRO stage; empty is 1', () => {
    const run = runFromRow({ ...eight, tensor_parallel: '4', zero_stage: '1' }, '.');
    expect(run.parallelism).toEqual({
      tensorParallel: 4,
      pipelineParallel: 1,
      zeroStage: 1,
      recompute: 'none',
    });
    expect(predictRequestOf(run).parallelism).toMatchObject({ tensorParallel: 4, zeroStage: 1 });
    expect(runFromRow({ ...eight, tensor_parallel: '' }, '.').parallelism).toBeUndefined();
  });
  it('refuses a degree that is not a whole number of GPUs, naming the column', () => {
    for (const bad of ['0', '2.5', 'two'])
      expect(() => runFromRow({ ...eight, tensor_parallel: bad }, '.')).toThrow(
        new RegExp(`^tensor_parallel: "${bad}" is not a whole number of GPUs, 1 or more`),
      );
  });
  it("checks a tensor-parallel run's weights per GPU: each rank trained its share", () => {
    // Llama 2 7B at TP 4: about a quarter of its 6.74 billion weights on each GPU.
    const note = (n: number) => ({
      ...eight,
      tensor_parallel: '4',
      note: `builder layer-replay; parameters ${n}`,
    });
    expect(runFromRow(note(1_685_000_000), '.').parallelism?.tensorParallel).toBe(4);
    expect(() => runFromRow(note(6_738_415_616), '.')).toThrow(
      /^note: the run trained 6,738,415,616 weights, but llama2_7b has 1,68\d,\d{3},\d{3} per GPU at tensor parallelism 4/,
    );
  });
});

describe('calibrate import: a layer-list model', () => {
  it('is the same model as that list given over GraphQL, whatever order its keys come in', () => {
    // The harness's CSV names the file beside it; a frontend gives the list in GraphQL's field
    // order. One model, so a run recorded from the file calibrates predictions of the list ("1 of
    // this model on it"); before, the id hashed the keys in the order written and they were two.
    const dir = new URL('./fixtures-harness/', import.meta.url).pathname;
    const run = runFromRow(
      { ...row, model: 'tiny-moe.json', gpu: 'H100-SXM5-80GB', precision: 'FP32', batch_size_per_gpu: '2' },
      dir,
    );
    const { layers } = JSON.parse(readFileSync(`${dir}tiny-moe.json`, 'utf8')) as {
      layers: Record<string, unknown>[];
    };
    const overGraphql = customModel(
      { layers: layers.map((l) => Object.fromEntries(Object.entries(l).reverse())) },
      'workload.customModel',
      undefined,
      'workload.seqLen',
    ).model;
    expect(predictRequestOf(run).model.id).toBe(overGraphql.id);
  });

  it('a run stored under an id its model no longer has is listed under the current one once the store reopens', async () => {
    // Runs recorded before the id hashed sorted keys carry the old id in their model column, which
    // measurements(model:) filters on: reopening the store files them under the id they build today.
    const dir = new URL('./fixtures-harness/', import.meta.url).pathname;
    const run = runFromRow(
      { ...row, model: 'tiny-moe.json', gpu: 'H100-SXM5-80GB', precision: 'FP32', batch_size_per_gpu: '2' },
      dir,
    );
    const id = predictRequestOf(run).model.id;
    const stepTimeMs = 1.2 * predict(predictRequestOf(run), loadEfficiency()).stepTimeMs;
    const dataDir = mkdtempSync(join(tmpdir(), 'trainplan-rekey-'));
    try {
      await withStoreConfig({ dataDir, databaseUrl: undefined }, async () => {
        expect(await recordRuns([{ ...run, stepTimeMs }], 'ci')).toMatchObject({ stored: 1 });
        await closeMeasurementStore();
        const db = new Database(join(dataDir, DATABASE_FILE));
        db.prepare("UPDATE measurement_run SET model = 'layers:0123456789'").run();
        db.close();
        expect(await listRuns({ model: id })).toHaveLength(1);
        expect(await listRuns({ model: 'layers:0123456789' })).toEqual([]);
      });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
