// What CUDA gave a user's runs on their GPU (the harness's gpu_memory_gb) is what plans there are
// fitted in: predict, recommend, a fleet and a federated round. The GPU here, an RTX A5000, has no
// sourced figure (seeds/gpu-memory.csv), so the catalog fits plans in its 24 GB label; with ECC on
// (a GDDR6 card keeps 1/16 of it for ECC) a process gets about 22.5 GiB. The run's figure is the
// test's stated input, not a measurement shipped with the product.
import { describe, expect, it } from 'vitest';
import { memoryPerGpu } from '../predictor/memory.js';
import {
  recordedCapacities,
  recordedCapacityWords,
  withRecordedCapacity,
} from '../predictor/memory-calibration.js';
import { costOf } from '../predictor/predict.js';
import { getModel } from '../predictor/zoo/index.js';
import { getGpu, loadEfficiency } from '../seeds/catalog.js';
import { apolloForTests } from './graphql-client.js';
import { oneGpuFleetInput, oneGpuSearchInput } from './one-configuration.js';
import { throwawayStore } from './throwaway-store.js';
import { measuredWithRuns, userEvidence } from '../service/measurements.js';

throwawayStore('trainplan-capacity-runs-');
const run = apolloForTests();

const model = 'gpt2_124m';
const gpu = 'RTX-A5000';
const recordedGb = 22.5;
const GPU_FIELDS = 'gpu { usableMemoryGb usableMemorySource }';
const PREDICT = `query($input: PredictInput!) { predict(input: $input) { fitsInMemory evidence memory { totalGb } ${GPU_FIELDS} } }`;
const RECORD = `mutation($runs: [MeasurementInput!]!) { recordMeasurements(runs: $runs) { stored rejected { reason } } }`;
const RECOMMEND = `query($input: RecommendInput!) { recommend(input: $input) {
  notes plans { batchSizePerGpu memoryGbPerGpu ${GPU_FIELDS} } rejected { reason count } } }`;
const FEDERATED = `query($input: FederatedInput!) { planFederatedRound(input: $input) {
  status notes clients { id participates recompute memoryGbPerGpu } } }`;

// The largest batch whose memory fits the label but not what the run's process had.
const cost = costOf(getModel(model)!);
const memoryAt = (batch: number) =>
  memoryPerGpu(getModel(model)!, cost, 'BF16', batch, false, loadEfficiency()).totalGb;
const batch = [...Array(64).keys()]
  .map((i) => i + 1)
  .filter((b) => memoryAt(b) > recordedGb && memoryAt(b) <= 24)
  .at(-1)!;

const predictAt = async (batchSizePerGpu: number) => {
  const r = await run(PREDICT, {
    input: { workload: { model, samples: 1e6 }, gpu, precision: 'BF16', batchSizePerGpu },
  });
  expect(r.errors).toBeUndefined();
  return r.data!.predict as {
    fitsInMemory: boolean;
    evidence: string;
    memory: { totalGb: number };
    gpu: { usableMemoryGb: number; usableMemorySource: string };
  };
};

const recommendAt = async () => {
  const r = await run(RECOMMEND, { input: oneGpuSearchInput(model, gpu, 'BF16', batch) });
  expect(r.errors).toBeUndefined();
  return r.data!.recommend as {
    notes: string[];
    plans: { memoryGbPerGpu: number; gpu: { usableMemoryGb: number } }[];
    rejected: { reason: string }[];
  };
};

const federatedAt = async () => {
  const r = await run(FEDERATED, {
    input: {
      workload: { model, samples: 1e5 },
      clients: [{ id: 'lab', gpu, samplesAvailable: 1e5, uplinkMbps: 100, downlinkMbps: 100 }],
      precisions: ['BF16'],
      batchSizes: [batch],
      minSamplesPerRound: 1e4,
    },
  });
  expect(r.errors).toBeUndefined();
  return r.data!.planFederatedRound as {
    status: string;
    notes: string[];
    clients: { participates: boolean; recompute: string | null; memoryGbPerGpu: number | null }[];
  };
};

const FLEET = `query($input: FleetInput!) { planFleet(input: $input) { status notes
  assignments { memoryGbPerGpu parallelism { recompute } } } }`;
const fleetAt = async () => {
  const r = await run(FLEET, { input: oneGpuFleetInput(model, gpu, 'BF16', batch) });
  expect(r.errors).toBeUndefined();
  return r.data!.planFleet as {
    status: string;
    notes: string[];
    assignments: { memoryGbPerGpu: number; parallelism: { recompute: string } }[];
  };
};

const runAt = (over: Record<string, unknown>) => ({
  workload: { model, samples: 1e6 },
  gpu,
  precision: 'BF16',
  batchSizePerGpu: 8,
  stepTimeMs: 100,
  source: 'test',
  ...over,
});

describe('what the runs had, per GPU', () => {
  it('is the least any run on it reports; a run that does not say counts for nothing', () => {
    const c = recordedCapacities([
      { gpu: 'RTX-A5000', gpuMemoryGb: 22.5 },
      { gpu: 'RTX-A5000', gpuMemoryGb: 23.9 },
      { gpu: 'RTX-A5000', gpuMemoryGb: null },
      { gpu: 'A10', gpuMemoryGb: null },
    ]);
    expect([...c]).toEqual([['RTX-A5000', { gb: 22.5, runs: 2 }]]);
    const a5000 = getGpu('RTX-A5000')!;
    expect(withRecordedCapacity(a5000, c)).toMatchObject({
      id: 'RTX-A5000',
      memoryGb: 24,
      usableMemoryGb: 22.5,
    });
    // Another GPU, or no runs: the catalog's own object.
    expect(withRecordedCapacity(getGpu('A10')!, c)).toBe(getGpu('A10'));
    expect(withRecordedCapacity(a5000, undefined)).toBe(a5000);
    // Said once per GPU, however many clients or inventory lines name it; nothing where no run says.
    expect(recordedCapacityWords([a5000, getGpu('A10')!, a5000], c)).toBe(
      "memory: fitted in what CUDA gave your runs' processes: 22.50 GiB on RTX-A5000 (the smallest of 2 runs)",
    );
    expect(recordedCapacityWords([getGpu('A10')!], c)).toBe('');
  });
});

describe("a GPU's memory as the user's runs had it", () => {
  it('before any run: plans on the GPU fill its label', async () => {
    expect(getGpu(gpu)!.usableMemoryGb).toBe(24);
    expect(batch).toBeGreaterThan(1);
    const before = await predictAt(batch);
    expect(before.fitsInMemory).toBe(true);
    expect(before.gpu.usableMemoryGb).toBe(24);
    expect(before.evidence).not.toMatch(/what CUDA gave your runs/);
    const r = await recommendAt();
    expect(r.plans).toHaveLength(1);
    expect(r.plans[0].memoryGbPerGpu).toBeCloseTo(memoryAt(batch), 6);
    const fleet = await fleetAt();
    expect(fleet.assignments[0].parallelism.recompute).toBe('NONE');
    // A federated client trains it as it is, without recomputing.
    expect((await federatedAt()).clients[0]).toMatchObject({
      participates: true,
      recompute: 'NONE',
      memoryGbPerGpu: expect.closeTo(memoryAt(batch), 6),
    });
  });

  it('refuses a figure no whole GPU gives, or a peak over it, and stores nothing of that run', async () => {
    const r = await run(RECORD, {
      runs: [
        runAt({ stepTimeMs: await stepAt8(), gpuMemoryGb: 11.5 }), // a MIG slice or a shared GPU
        runAt({ stepTimeMs: await stepAt8(), gpuMemoryGb: 25 }),
        runAt({ stepTimeMs: await stepAt8(), gpuMemoryGb: 22.5, peakMemoryGb: 23 }),
      ],
    });
    expect(r.data!.recordMeasurements.stored).toBe(0);
    expect(r.data!.recordMeasurements.rejected.map((x: { reason: string }) => x.reason)).toEqual([
      expect.stringMatching(
        /^gpuMemoryGb: must be 20\.4 to 24 GiB on RTX-A5000 \(its label is 24 GB; under 85% of it is a MIG slice or a shared GPU, not the whole one\) \(got 11\.5\)$/,
      ),
      expect.stringMatching(/^gpuMemoryGb: must be 20\.4 to 24 GiB on RTX-A5000 .*\(got 25\)$/),
      "peakMemoryGb: 23 GB is more than the run's process had (gpuMemoryGb 22.5)",
    ]);
    const listed = await run(`{ measurements(model: "${model}") { id } }`);
    expect(listed.data!.measurements).toEqual([]);
  });

  it('a run whose process had 22.5 GiB: that batch no longer fits, on predict and in recommend; a federated client recomputes to fit it', async () => {
    const recorded = await run(RECORD, {
      runs: [runAt({ stepTimeMs: await stepAt8(), gpuMemoryGb: recordedGb })],
    });
    expect(recorded.data!.recordMeasurements).toEqual({ stored: 1, rejected: [] });
    const listed = await run(`{ measurements(model: "${model}") { gpuMemoryGb } }`);
    expect(listed.data!.measurements).toEqual([{ gpuMemoryGb: recordedGb }]);

    const after = await predictAt(batch);
    expect(after.fitsInMemory).toBe(false);
    expect(after.gpu.usableMemoryGb).toBe(recordedGb);
    expect(after.gpu.usableMemorySource).toMatch(
      /^your recorded run on it: what CUDA gave its process \(catalog: 24\.00, the vendor label/,
    );
    expect(after.evidence).toMatch(
      /; memory: fitted in what CUDA gave your runs' processes: 22\.50 GiB on RTX-A5000 \(1 run\)$/,
    );
    // Another GPU keeps the catalog's figure.
    const a10 = await run(PREDICT, {
      input: { workload: { model, samples: 1e6 }, gpu: 'A10', precision: 'BF16', batchSizePerGpu: batch },
    });
    expect(a10.data!.predict.gpu.usableMemoryGb).toBe(getGpu('A10')!.usableMemoryGb);

    const r = await recommendAt();
    expect(r.plans).toEqual([]);
    expect(r.rejected).toContainEqual(expect.objectContaining({ reason: 'OUT_OF_MEMORY' }));
    expect(r.notes).toContain(
      "memory: fitted in what CUDA gave your runs' processes: 22.50 GiB on RTX-A5000 (1 run)",
    );
    const federated = await federatedAt();
    // A fleet's job and a federated client still train that batch, recomputing activations to fit.
    const fleet = await fleetAt();
    expect(fleet.status).toBe('OPTIMAL');
    expect(fleet.assignments[0].parallelism.recompute).not.toBe('NONE');
    expect(fleet.assignments[0].memoryGbPerGpu).toBeLessThanOrEqual(recordedGb);
    expect(fleet.notes).toContain(
      "memory: fitted in what CUDA gave your runs' processes: 22.50 GiB on RTX-A5000 (1 run)",
    );
    // The client still trains that batch, recomputing activations to fit in what its GPU gives.
    expect(federated.clients[0]).toMatchObject({
      participates: true,
      recompute: expect.not.stringMatching(/^NONE$/),
    });
    expect(federated.clients[0].memoryGbPerGpu).toBeLessThanOrEqual(recordedGb);
    expect(federated.notes).toContain(
      "memory: fitted in what CUDA gave your runs' processes: 22.50 GiB on RTX-A5000 (1 run)",
    );
  });

  it('without the learned model (onnxruntime did not load) the run still sets what plans fit in', async () => {
    // The analytical fallback has no correction for the run to calibrate, but what CUDA gave the
    // run's process is a fact about the GPU either way: a fleet or a procurement planned then (and
    // predict and recommend, which ask userEvidence the same) still fit plans in it.
    const fallback = { predictor: null, reason: 'learned model unavailable (test)' };
    const user = await userEvidence(fallback);
    expect(user?.capacities?.get(gpu)).toEqual({ gb: recordedGb, runs: 1 });
    expect(user?.learned).toBe(fallback);
    // Not the learned answers' snapshot: the version says which predictor the evidence is for.
    expect(user?.version).toMatch(/\|analytical$/);
    expect((await userEvidence())?.version).not.toMatch(/analytical/);
    // The run counts as a measurement of its configuration either way.
    expect(measuredWithRuns(user)?.pairs.has(`${model}|${gpu}`)).toBe(true);
  });

  it('a batch that fits in what the run had is still planned, fitted there', async () => {
    const smaller = [...Array(batch).keys()].filter((b) => b > 0 && memoryAt(b) <= recordedGb).at(-1)!;
    const p = await predictAt(smaller);
    expect(p.fitsInMemory).toBe(true);
    expect(p.memory.totalGb).toBeLessThanOrEqual(recordedGb);
  });
});

/** A step time the roofline accepts for the run at batch 8 (physicsProblem): the prediction's own. */
async function stepAt8(): Promise<number> {
  const r = await run(`query($input: PredictInput!) { predict(input: $input) { analyticalStepTimeMs } }`, {
    input: { workload: { model, samples: 1e6 }, gpu, precision: 'BF16', batchSizePerGpu: 8 },
  });
  return r.data!.predict.analyticalStepTimeMs as number;
}
