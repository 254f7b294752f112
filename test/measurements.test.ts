// Recorded runs end to end: recordMeasurements checks each run against the catalog and physics
// and stores only what passes; predict and recommend use the stored runs at once (evidence,
// evidence level, narrower interval); runs survive a server restart; an owner deletes only their
// own runs. The runs here are synthetic (a stated multiple of the current prediction), so the
// expected movement is known; no measurement is invented for the product.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { loadCalibrationSettings } from '../seeds/calibration.js';
import { apolloForTests } from './graphql-client.js';
import { spawnServer } from './spawn-server.js';
import { throwawayStore } from './throwaway-store.js';
import { layoutWords, type LayoutDegrees } from '../predictor/layout-words.js';

throwawayStore('trainplan-runs-');
const run = apolloForTests();

// MI300X: no shipped measurement at all, so every change below comes from the recorded runs.
const GPU = 'MI300X';
const config = {
  workload: { model: 'resnet50_v1.5', samples: 1_281_167 },
  gpu: GPU,
  batchSizePerGpu: 256,
  precision: 'AMP_BF16',
};
const PREDICT = `query($input: PredictInput!) { predict(input: $input) {
  stepTimeMs stepTimeMsP10 stepTimeMsP90 evidence evidenceLevel calibrationRuns modelTflopsPerGpu mfu } }`;
const RECORD = `mutation($runs: [MeasurementInput!]!, $owner: String) {
  recordMeasurements(runs: $runs, owner: $owner) { stored ids rejected { index reason } } }`;
const LIST = `query($model: String, $gpu: String) { measurements(model: $model, gpu: $gpu) {
  id owner model gpu precision batchSizePerGpu stepTimeMs peakMemoryGb source note predictedStepTimeMs
  modelTflopsPerGpu mfu } }`;

/** Llama 2 7B on a node of eight H100s, one sample per GPU, in BF16: the layout tests' configuration. */
const LLAMA_NODE = {
  workload: { model: 'llama2_7b', samples: 1e9 },
  gpu: 'H100-SXM5-80GB',
  gpusPerNode: 8,
  batchSizePerGpu: 1,
  precision: 'BF16',
};

const predictNow = async (input: Record<string, unknown> = config) => {
  const r = await run(PREDICT, { input });
  expect(r.errors).toBeUndefined();
  return r.data!.predict as Record<string, any>;
};

describe('recordMeasurements', () => {
  it('a rejected run is stored in no part and says why; the valid runs of the batch are stored', async () => {
    const before = await predictNow();
    expect(before).toMatchObject({ evidenceLevel: 'UNMEASURED', calibrationRuns: 0 });
    const good = { ...config, stepTimeMs: before.stepTimeMs * 1.3, peakMemoryGb: 30, source: 'test' };
    const r = await run(RECORD, {
      runs: [
        { ...good, gpu: 'NOT-A-GPU' },
        { ...good, stepTimeMs: -5 },
        { ...good, stepTimeMs: 0.001 }, // faster than MI300X's fastest peak allows
        { ...good, stepTimeMs: before.stepTimeMs * 500 }, // 500x the roofline: not the GPU's speed
        { ...good, peakMemoryGb: 500 }, // MI300X has 192 GB
        { ...good, gpu: 'V100-SXM2-16GB', precision: 'AMP_BF16' }, // V100 has no bf16
        { ...good, workload: { ...config.workload, fineTuning: 'LORA' } }, // the store keeps full training only
      ],
    });
    expect(r.errors).toBeUndefined();
    const res = r.data!.recordMeasurements;
    expect(res.stored).toBe(0);
    expect(res.rejected.map((x: { index: number }) => x.index)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const reasons = res.rejected.map((x: { reason: string }) => x.reason);
    expect(reasons[0]).toMatch(/^gpu: unknown GPU "NOT-A-GPU"/);
    expect(reasons[1]).toMatch(/^stepTimeMs: must be a positive number/);
    expect(reasons[2]).toMatch(/faster than MI300X can run this step/);
    expect(reasons[3]).toMatch(/more than 50x the roofline estimate/);
    expect(reasons[4]).toMatch(/^peakMemoryGb: 500 GB is more than MI300X has/);
    expect(reasons[5]).toMatch(/bf16/);
    expect(reasons[6]).toMatch(/^workload\.fineTuning: LORA is not supported in recorded runs/);
    // Nothing was stored: the list is empty and predictions are unchanged.
    expect((await run(LIST, {})).data!.measurements).toEqual([]);
    expect(await predictNow()).toEqual(before);
  });

  it("holds a run against each GPU's share of the work: the FLOPs floor divides by TP, PP and CP", async () => {
    // Llama 2 7B on a node of eight H100s, one sample each, at an impossible 1 µs per step: the
    // reason names the GFLOP per GPU, which context parallelism divides as the other splits do (a
    // run at CP 8 and 70% of the peak was refused as faster than the GPU).
    const node = { ...LLAMA_NODE, stepTimeMs: 0.001, source: 'test' };
    const r = await run(RECORD, {
      runs: [
        node,
        { ...node, parallelism: { contextParallel: 8 } },
        { ...node, parallelism: { tensorParallel: 2, pipelineParallel: 2, contextParallel: 2 } },
      ],
    });
    expect(r.errors).toBeUndefined();
    const gflop = (r.data!.recordMeasurements.rejected as { reason: string }[]).map((x) =>
      Number(/([\d.e+]+) GFLOP per GPU/.exec(x.reason)![1]),
    );
    expect(gflop).toHaveLength(3);
    expect(gflop[0] / gflop[1]).toBeCloseTo(8, 2);
    expect(gflop[0] / gflop[2]).toBeCloseTo(8, 2);
  });

  it('stored runs calibrate predict at once: evidence, evidence level, estimate and a narrower interval', async () => {
    const before = await predictNow();
    const measured = before.stepTimeMs * 1.3;
    const r = await run(RECORD, {
      owner: 'alice',
      runs: [
        {
          ...config,
          stepTimeMs: measured,
          peakMemoryGb: 30,
          source: 'test',
          note: 'synthetic: 1.3x the prediction',
        },
        { ...config, gpu: 'NOT-A-GPU', stepTimeMs: measured },
      ],
    });
    expect(r.data!.recordMeasurements).toMatchObject({ stored: 1, rejected: [{ index: 1 }] });
    const list = (await run(LIST, { gpu: GPU })).data!.measurements;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      owner: 'alice',
      model: 'resnet50_v1.5',
      gpu: GPU,
      stepTimeMs: measured,
      peakMemoryGb: 30,
    });
    expect(list[0].predictedStepTimeMs).toBeCloseTo(before.stepTimeMs, 6);
    // The run's MFU: the same model FLOPs over a step 1.3x as long as the one predicted.
    expect(list[0].modelTflopsPerGpu).toBeCloseTo(before.modelTflopsPerGpu / 1.3, 9);
    expect(list[0].mfu).toBeCloseTo(before.mfu / 1.3, 9);

    const after = await predictNow();
    expect(after.evidenceLevel).toBe('MODEL_MEASURED_ON_GPU');
    expect(after.calibrationRuns).toBe(1);
    expect(after.evidence).toMatch(
      /calibrated by 1 of your runs \(1 on MI300X, 1 of this model on it, 1 of this exact configuration\)/,
    );
    // The estimate moves most of the way to the run (weight 20 against a prior of 1).
    expect(after.stepTimeMs / before.stepTimeMs).toBeCloseTo(Math.exp((20 / 21) * Math.log(1.3)), 6);
    const width = (p: Record<string, number>) => Math.log(p.stepTimeMsP90 / p.stepTimeMsP10);
    expect(width(after)).toBeLessThan(width(before));
    expect(after.stepTimeMsP10).toBeLessThan(measured);
    expect(after.stepTimeMsP90).toBeGreaterThan(measured);
    // This very configuration has a run: its interval is how far a repeat of one strays
    // (seeds/calibration.json sameConfiguration), not the wider one of a configuration not run.
    const repeat = loadCalibrationSettings().sameConfiguration;
    expect(after.stepTimeMsP10 / after.stepTimeMs).toBeCloseTo(Math.exp(repeat.q10), 6);
    expect(after.stepTimeMsP90 / after.stepTimeMs).toBeCloseTo(Math.exp(repeat.q90), 6);

    // Another batch size of the same model on that GPU moves too; another model there only a little.
    const otherBatch = { ...config, batchSizePerGpu: 128 };
    const otherModel = {
      ...config,
      workload: { model: 'bert_large_squad', samples: 1e5 },
      batchSizePerGpu: 32,
    };
    const ob = await predictNow(otherBatch);
    expect(ob.evidenceLevel).toBe('MODEL_MEASURED_ON_GPU');
    expect(ob.calibrationRuns).toBe(1);
    const modelOnGpu = loadCalibrationSettings().modelOnGpu;
    expect(ob.stepTimeMsP10 / ob.stepTimeMs).toBeCloseTo(Math.exp(modelOnGpu.q10), 6);
    expect(width(ob)).toBeGreaterThan(width(after));
    const om = await predictNow(otherModel);
    expect(om.evidenceLevel).toBe('GPU_MEASURED');
    expect(om.evidence).toMatch(/calibrated by 1 of your runs \(1 on MI300X, 0 of this model on it\)/);
  });

  it('recommend changes at once (its cache knows the store changed)', async () => {
    const Q = `query($input: RecommendInput!) { recommend(input: $input) { plans { gpu { id } batchSizePerGpu precision stepTimeMs evidence evidenceLevel calibrationRuns } } }`;
    const input = {
      workload: { model: 'resnet50_v1.5', samples: 1_281_167 },
      gpus: [GPU],
      precisions: ['AMP_BF16'],
      batchSizes: [256],
      gpusPerNode: [1],
      maxNodes: 1,
      prices: [{ gpu: GPU, usdPerGpuHour: 2 }],
    };
    const first = (await run(Q, { input })).data!.recommend.plans[0];
    expect(first.evidence).toMatch(/calibrated by 1 of your runs/);
    expect(first.calibrationRuns).toBe(1);
    // The plan's evidence level counts the recorded run as a measurement of this model on MI300X.
    expect(first.evidenceLevel).toBe('MODEL_MEASURED_ON_GPU');
    const p = await predictNow();
    expect(first.stepTimeMs).toBeCloseTo(p.stepTimeMs, 6);
    // A second run of the same configuration, slower: the same request answers differently.
    const r = await run(RECORD, { owner: 'bob', runs: [{ ...config, stepTimeMs: p.stepTimeMs * 1.5 }] });
    expect(r.data!.recordMeasurements.stored).toBe(1);
    const second = (await run(Q, { input })).data!.recommend.plans[0];
    expect(second.evidence).toMatch(/calibrated by 2 of your runs/);
    expect(second.calibrationRuns).toBe(2);
    expect(second.stepTimeMs).toBeGreaterThan(first.stepTimeMs);
  });

  it("deleteMeasurements removes only that owner's runs", async () => {
    const del = `mutation($owner: String!) { deleteMeasurements(owner: $owner) }`;
    expect((await run(del, { owner: 'nobody' })).data!.deleteMeasurements).toBe(0);
    expect((await run(del, { owner: 'bob' })).data!.deleteMeasurements).toBe(1);
    const left = (await run(LIST, {})).data!.measurements;
    expect(left.map((m: { owner: string }) => m.owner)).toEqual(['alice']);
    expect((await predictNow()).evidence).toMatch(/calibrated by 1 of your runs/);
  });

  it('bad arguments are BAD_USER_INPUT naming the field', async () => {
    const r = await run(RECORD, { owner: '', runs: [] });
    expect(r.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'owner' });
  });

  // A recorded run is predicted in the layout it ran in, as a predict request is: a channels-last
  // 16-bit CNN run is held against the channels-last estimate, not the NCHW one it would beat.
  it('records the convolution layout a run used and predicts it in that layout', async () => {
    const l4 = { ...config, gpu: 'L4', batchSizePerGpu: 64 };
    const nchw = await predictNow(l4);
    const channelsLast = await predictNow({ ...l4, channelsLast: true });
    expect(nchw.stepTimeMs / channelsLast.stepTimeMs).toBeGreaterThan(1.02);
    const r = await run(RECORD, {
      owner: 'carol',
      runs: [
        { ...l4, channelsLast: true, stepTimeMs: channelsLast.stepTimeMs, source: 'test' },
        { ...l4, stepTimeMs: nchw.stepTimeMs, source: 'test' },
      ],
    });
    expect(r.data!.recordMeasurements).toMatchObject({ stored: 2, rejected: [] });
    const list = (await run(LIST, { gpu: 'L4' })).data!.measurements;
    // Both runs are the same configuration but for the layout: the NCHW one is predicted slower.
    const [cl, plain] = list.map((m: { predictedStepTimeMs: number }) => m.predictedStepTimeMs);
    expect(plain / cl).toBeGreaterThan(1.02);
    const del = `mutation($owner: String!) { deleteMeasurements(owner: $owner) }`;
    expect((await run(del, { owner: 'carol' })).data!.deleteMeasurements).toBe(2);
  });

  /** GPT-2 small on an L4: a model whose code fuses its attention, timed either way below. */
  const GPT2_ON_L4 = {
    workload: { model: 'gpt2_124m', samples: 1e6 },
    gpu: 'L4',
    batchSizePerGpu: 8,
    precision: 'AMP_BF16',
  };

  // A run is predicted the way its attention cores ran: GPT-2 run with eager attention (a Hugging
  // Face model loaded with attn_implementation="eager", or PyTorch before 2.0) is held against the
  // eager estimate, so it does not read as a GPU slower than trainplan thinks.
  it('records how a run ran its attention and predicts it so: an eager run does not slow the fused estimate', async () => {
    const gpt = GPT2_ON_L4;
    const fused = await predictNow(gpt);
    const eager = await predictNow({ ...gpt, attention: 'EAGER' });
    expect(eager.stepTimeMs / fused.stepTimeMs).toBeGreaterThan(1.1);
    const recorded = await run(RECORD, {
      owner: 'erin',
      runs: [{ ...gpt, attention: 'EAGER', stepTimeMs: eager.stepTimeMs, source: 'test' }],
    });
    expect(recorded.data!.recordMeasurements).toMatchObject({ stored: 1, rejected: [] });
    const [listed] = (await run(`{ measurements(owner: "erin") { attention predictedStepTimeMs } }`)).data!
      .measurements;
    expect(listed.attention).toBe('EAGER');
    expect(listed.predictedStepTimeMs / eager.stepTimeMs).toBeCloseTo(1, 2);
    // The run ran as its eager estimate said: the GPU is as fast as predicted, and the fused
    // estimate, now calibrated by it, stays where it was.
    const after = await predictNow(gpt);
    expect(after.calibrationRuns).toBe(1);
    expect(Math.abs(after.stepTimeMs / fused.stepTimeMs - 1)).toBeLessThan(0.03);
    // The same step recorded without saying how it ran is held against the fused estimate: slow.
    await run(RECORD, { owner: 'frank', runs: [{ ...gpt, stepTimeMs: eager.stepTimeMs, source: 'test' }] });
    const unstated = (await run(`{ measurements(owner: "frank") { attention } }`)).data!.measurements;
    expect(unstated).toEqual([{ attention: null }]);
    expect((await predictNow(gpt)).stepTimeMs / fused.stepTimeMs).toBeGreaterThan(1.05);
    const del = `mutation($owner: String!) { deleteMeasurements(owner: $owner) }`;
    for (const owner of ['erin', 'frank'])
      expect((await run(del, { owner })).data!.deleteMeasurements).toBe(1);
  });

  // FP8 under ZeRO-3 is timed by the harness as the same layout in AMP_BF16 (service/harness-commands.ts):
  // recorded, that run calibrates the FP8 estimate, as its note says.
  it("an AMP_BF16 run of FP8's layout calibrates the FP8 estimate of that model on that GPU", async () => {
    const fsdp = {
      workload: { model: 'gpt2_124m', samples: 1e6 },
      gpu: 'H100-SXM5-80GB',
      gpusPerNode: 2,
      batchSizePerGpu: 8,
      parallelism: { zeroStage: 3 },
    };
    const fp8 = await predictNow({ ...fsdp, precision: 'FP8' });
    const bf16 = await predictNow({ ...fsdp, precision: 'AMP_BF16' });
    const recorded = await run(RECORD, {
      owner: 'heidi',
      runs: [{ ...fsdp, precision: 'AMP_BF16', stepTimeMs: 1.4 * bf16.stepTimeMs, source: 'harness' }],
    });
    expect(recorded.data!.recordMeasurements).toMatchObject({ stored: 1, rejected: [] });
    const after = await predictNow({ ...fsdp, precision: 'FP8' });
    expect(after.calibrationRuns).toBe(1);
    expect(after.stepTimeMs / fp8.stepTimeMs).toBeGreaterThan(1.15);
    const del = `mutation($owner: String!) { deleteMeasurements(owner: $owner) }`;
    expect((await run(del, { owner: 'heidi' })).data!.deleteMeasurements).toBe(1);
  });

  // A run the harness wrote before it had an `attention` column still says, in its note, what built
  // the model and on which PyTorch: before 2.0 there is no fused kernel, so its cores ran op by op.
  it("reads an unstated run's attention from its harness note: on PyTorch 1.x the cores ran op by op", async () => {
    const gpt = GPT2_ON_L4;
    const harnessNote = (torch: string) =>
      `median of 20 steps after 5 warm-up (min 1 ms, max 2 ms); builder zoo layer-replay; parameters 124439808; torch ${torch}; cuda 11.7; python 3.11.2; gpu_name NVIDIA L4`;
    const fused = await predictNow(gpt);
    const eager = await predictNow({ ...gpt, attention: 'EAGER' });
    const resnet = { ...gpt, workload: { model: 'resnet50_v1.5', samples: 1e6 }, batchSizePerGpu: 64 };
    const runs = [
      { ...gpt, stepTimeMs: eager.stepTimeMs, source: 'harness', note: harnessNote('1.13.1') },
      // Not the harness's note: a user's own code on PyTorch 1.x may have called flash-attn.
      { ...gpt, stepTimeMs: fused.stepTimeMs, source: 'test', note: 'our trainer, torch 1.13.1' },
      { ...gpt, stepTimeMs: fused.stepTimeMs, source: 'harness', note: harnessNote('2.4.0+cu121') },
      // A CNN has no attention cores to have run either way.
      {
        ...resnet,
        stepTimeMs: (await predictNow(resnet)).stepTimeMs,
        source: 'harness',
        note: harnessNote('1.13.1'),
      },
    ];
    const recorded = await run(RECORD, { owner: 'grace', runs });
    expect(recorded.data!.recordMeasurements).toMatchObject({ stored: 4, rejected: [] });
    const listed = (await run(`{ measurements(owner: "grace") { attention predictedStepTimeMs } }`)).data!
      .measurements;
    expect(listed.map((m: { attention: string | null }) => m.attention)).toEqual(['EAGER', null, null, null]);
    // The PyTorch 1.x run is held against the eager estimate: it ran as predicted, and the fused
    // estimate its calibration moves stays where it was (read as fused it would move 1.7x).
    expect(listed[0].predictedStepTimeMs / eager.stepTimeMs).toBeCloseTo(1, 2);
    expect(listed[1].predictedStepTimeMs / fused.stepTimeMs).toBeCloseTo(1, 2);
    const after = await predictNow(gpt);
    expect(after.calibrationRuns).toBeGreaterThanOrEqual(3);
    expect(Math.abs(after.stepTimeMs / fused.stepTimeMs - 1)).toBeLessThan(0.03);
    const del = `mutation($owner: String!) { deleteMeasurements(owner: $owner) }`;
    expect((await run(del, { owner: 'grace' })).data!.deleteMeasurements).toBe(4);
  });

  it('lists each run at the layout it was recorded at, as plans report theirs', async () => {
    // Llama 2 7B on a node of eight H100s: tensor and context parallel 2 with ZeRO-1 and full
    // recomputation, beside a plain data-parallel run of the same GPUs and batch.
    const node = LLAMA_NODE;
    const split = {
      ...node,
      parallelism: { tensorParallel: 2, contextParallel: 2, zeroStage: 1, recompute: 'FULL' },
    };
    const steps = [await predictNow(split), await predictNow(node)].map((p) => p.stepTimeMs);
    const r = await run(RECORD, {
      owner: 'dave',
      runs: [
        { ...split, stepTimeMs: steps[0], source: 'test' },
        { ...node, stepTimeMs: steps[1], source: 'test' },
      ],
    });
    expect(r.data!.recordMeasurements).toMatchObject({ stored: 2, rejected: [] });
    const listed = await run(
      `{ measurements(owner: "dave") { gpusPerNode parallelism { dataParallel tensorParallel
        pipelineParallel virtualPipelineStages contextParallel expertParallel zeroStage recompute microBatches } } }`,
    );
    const plain = { pipelineParallel: 1, virtualPipelineStages: 1, expertParallel: 1, microBatches: 1 };
    expect(listed.data!.measurements).toEqual([
      {
        gpusPerNode: 8,
        parallelism: {
          ...plain,
          dataParallel: 2,
          tensorParallel: 2,
          contextParallel: 2,
          zeroStage: 1,
          recompute: 'FULL',
        },
      },
      {
        gpusPerNode: 8,
        parallelism: {
          ...plain,
          dataParallel: 8,
          tensorParallel: 1,
          contextParallel: 1,
          zeroStage: 0,
          recompute: 'NONE',
        },
      },
    ]);
    // As the /calibrate page and the CLI write it: context parallelism named, as a plan's would be.
    const layouts = (listed.data!.measurements as { parallelism: LayoutDegrees }[]).map((m) =>
      layoutWords(m.parallelism),
    );
    expect(layouts).toEqual(['DP2 TP2 CP2 ZeRO-1 recompute full', 'DP8']);
    const del = `mutation($owner: String!) { deleteMeasurements(owner: $owner) }`;
    expect((await run(del, { owner: 'dave' })).data!.deleteMeasurements).toBe(2);
  });

  // A run across nodes joined by Ethernet only is held against the estimate over TCP, not against
  // the faster one over RDMA that the same line rate would give.
  it('records how NCCL crossed the network between nodes and predicts the run over it', async () => {
    const twoNodes = {
      ...config,
      gpu: 'L4',
      batchSizePerGpu: 64,
      nodes: 2,
      gpusPerNode: 4,
      interNodeGbps: 25,
    };
    const rdma = await predictNow(twoNodes);
    const tcp = await predictNow({ ...twoNodes, interNodeTransport: 'TCP' });
    expect(tcp.stepTimeMs / rdma.stepTimeMs).toBeGreaterThan(1.02);
    const r = await run(RECORD, {
      owner: 'erin',
      runs: [
        { ...twoNodes, interNodeTransport: 'TCP', stepTimeMs: tcp.stepTimeMs, source: 'test' },
        { ...twoNodes, stepTimeMs: rdma.stepTimeMs, source: 'test' },
      ],
    });
    expect(r.data!.recordMeasurements).toMatchObject({ stored: 2, rejected: [] });
    const list = (await run(LIST, { gpu: 'L4' })).data!.measurements;
    const [overTcp, overRdma] = list.map((m: { predictedStepTimeMs: number }) => m.predictedStepTimeMs);
    // (Not exactly predict's ratio: each run is the other's evidence, as the same model on the GPU.)
    expect(overTcp / overRdma).toBeGreaterThan(1.02);
    // A run over TCP did not measure the layout over RDMA, nor over another network: each network's
    // prediction is calibrated by its own run as "this exact configuration", and by no run as such
    // over a network none ran on.
    const exact = async (over: object) =>
      /(\d+) of this exact configuration/.exec((await predictNow({ ...twoNodes, ...over })).evidence)?.[1];
    expect(await exact({ interNodeTransport: 'TCP' })).toBe('1');
    expect(await exact({})).toBe('1');
    expect(await exact({ interNodeGbps: 100 })).toBeUndefined();
    // One node never crosses the network: a one-node run is the configuration whatever network is named.
    const oneNode = { ...twoNodes, nodes: 1 };
    const single = await run(RECORD, {
      owner: 'erin',
      runs: [{ ...oneNode, stepTimeMs: (await predictNow(oneNode)).stepTimeMs, source: 'test' }],
    });
    expect(single.data!.recordMeasurements).toMatchObject({ stored: 1 });
    expect(
      /(\d+) of this exact configuration/.exec(
        (await predictNow({ ...oneNode, interNodeGbps: 400, interNodeTransport: 'TCP' })).evidence,
      )?.[1],
    ).toBe('1');
    const del = `mutation($owner: String!) { deleteMeasurements(owner: $owner) }`;
    expect((await run(del, { owner: 'erin' })).data!.deleteMeasurements).toBe(3);
  });

  // No shipped row of ResNet-50 ran BF16 (test/unmeasured-precision.test.ts): one recorded run of it
  // in BF16, on another GPU, makes the precision measured for the model.
  it('a run in a precision the model was never measured in clears precisionUnmeasured', async () => {
    const Q = `query($input: PredictInput!) { predict(input: $input) { stepTimeMs evidence precisionUnmeasured } }`;
    const onH100 = { ...config, gpu: 'H100-SXM5-80GB', precision: 'BF16' };
    const onA100 = { ...onH100, gpu: 'A100-SXM4-80GB' };
    const before = (await run(Q, { input: onH100 })).data!.predict;
    expect(before.precisionUnmeasured).toBe(true);
    expect(before.evidence).toMatch(/no run of this model at BF16 is measured on any GPU/);
    const a100 = (await run(Q, { input: onA100 })).data!.predict;
    const r = await run(RECORD, {
      owner: 'dave',
      runs: [{ ...onA100, stepTimeMs: a100.stepTimeMs, source: 'test', note: 'synthetic: the prediction' }],
    });
    expect(r.data!.recordMeasurements).toMatchObject({ stored: 1, rejected: [] });
    const after = (await run(Q, { input: onH100 })).data!.predict;
    expect(after.precisionUnmeasured).toBe(false);
    expect(after.evidence).not.toMatch(/no run of this model at BF16/);
    const del = `mutation($owner: String!) { deleteMeasurements(owner: $owner) }`;
    expect((await run(del, { owner: 'dave' })).data!.deleteMeasurements).toBe(1);
    expect((await run(Q, { input: onH100 })).data!.predict.precisionUnmeasured).toBe(true);
  });
});

/** One POST on a fresh connection (so the cluster may hand it to any worker). */
function postFresh(base: string, body: unknown): Promise<{ data: Record<string, any> }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(
      `${base}/graphql`,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve(JSON.parse(text)));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('recorded runs across processes', () => {
  it('--workers 2 share the SQLite file: a run recorded through one worker calibrates the answers of all', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trainplan-workers-'));
    try {
      const server = await spawnServer({ workers: 2, env: { TRAINPLAN_DATA_DIR: dir } });
      const before = (await postFresh(server.base, { query: PREDICT, variables: { input: config } })).data
        .predict;
      const recorded = await postFresh(server.base, {
        query: RECORD,
        variables: { runs: [{ ...config, stepTimeMs: before.stepTimeMs * 1.2, source: 'test' }] },
      });
      expect(recorded.data.recordMeasurements.stored).toBe(1);
      // Fresh connections, round-robin over the workers: every answer knows the run.
      for (let i = 0; i < 6; i++) {
        const p = (await postFresh(server.base, { query: PREDICT, variables: { input: config } })).data
          .predict;
        expect(p.calibrationRuns).toBe(1);
      }
      // ... and both workers answered some of them.
      const served = server.logs.filter((l) => l.msg === 'request' && l.operationName === '{predict}');
      expect(new Set(served.map((l) => l.pid)).size).toBe(2);
      expect(await server.stop('SIGTERM')).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('a run recorded through one server process is there, and used, after it restarts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trainplan-restart-'));
    const post = async (base: string, query: string, variables: Record<string, unknown>) => {
      const res = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      return (await res.json()) as { data: Record<string, any> };
    };
    try {
      let server = await spawnServer({ env: { TRAINPLAN_DATA_DIR: dir } });
      const before = (await post(server.base, PREDICT, { input: config })).data.predict;
      const recorded = await post(server.base, RECORD, {
        runs: [{ ...config, stepTimeMs: before.stepTimeMs * 0.8, source: 'test' }],
      });
      expect(recorded.data.recordMeasurements.stored).toBe(1);
      expect(await server.stop('SIGTERM')).toBe(0);
      server = await spawnServer({ env: { TRAINPLAN_DATA_DIR: dir } });
      const list = (await post(server.base, LIST, {})).data.measurements;
      expect(list).toHaveLength(1);
      expect(list[0].stepTimeMs).toBeCloseTo(before.stepTimeMs * 0.8, 6);
      const after = (await post(server.base, PREDICT, { input: config })).data.predict;
      expect(after.calibrationRuns).toBe(1);
      expect(after.stepTimeMs).toBeLessThan(before.stepTimeMs);
      await server.stop('SIGTERM');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
