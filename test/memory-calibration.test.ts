// A user's measured peaks calibrate their model's memory (predictor/memory-calibration.ts): the
// activations the peak implies against the prediction at the run's configuration, applied to the
// model's other configurations in that precision, on predict and in recommend's fit. The peaks here
// are synthetic (a stated multiple of the predicted activations), so the expected change is known;
// no measurement is invented for the product.
import { describe, expect, it } from 'vitest';
import { activationScaleOf, allocatedGb, memoryCalibrations } from '../predictor/memory-calibration.js';
import type { MemoryBreakdown } from '../predictor/memory.js';
import { memoryPerGpu } from '../predictor/memory.js';
import { costOf } from '../predictor/predict.js';
import { getModel } from '../predictor/zoo/index.js';
import { getGpu, loadEfficiency } from '../seeds/catalog.js';
import { loadCalibrationSettings } from '../seeds/calibration.js';
import { apolloForTests } from './graphql-client.js';
import { oneGpuFleetInput, oneGpuSearchInput } from './one-configuration.js';
import { throwawayStore } from './throwaway-store.js';
import { predictCorrected } from '../predictor/corrected.js';
import { userEvidence } from '../service/measurements.js';

throwawayStore('trainplan-memory-runs-');
const run = apolloForTests();
const settings = loadCalibrationSettings().memory;

const breakdown = (activationsGb: number): MemoryBreakdown => ({
  weightsGb: 4,
  gradientsGb: 4,
  optimizerGb: 8,
  masterWeightsGb: 0,
  optimizerStateGb: 8,
  activationsGb,
  workspaceGb: 2,
  frameworkGb: 3,
  totalGb: 18 + activationsGb + 3,
});

describe('the activation scale a peak implies', () => {
  it('is what the peak leaves after the weights, states and workspace, over the activations counted', () => {
    expect(allocatedGb(breakdown(40))).toBe(58);
    expect(activationScaleOf(breakdown(40), 18 + 30, settings)).toBeCloseTo(0.75, 12);
    expect(activationScaleOf(breakdown(40), 18 + 60, settings)).toBeCloseTo(1.5, 12);
  });

  it("is 1 where the peak agrees with the prediction within the memory model's own noise", () => {
    expect(settings.agreement).toBeGreaterThan(0);
    const allocated = allocatedGb(breakdown(40));
    expect(activationScaleOf(breakdown(40), allocated * Math.exp(0.9 * settings.agreement), settings)).toBe(
      1,
    );
    expect(activationScaleOf(breakdown(40), allocated * Math.exp(-0.9 * settings.agreement), settings)).toBe(
      1,
    );
    expect(
      activationScaleOf(breakdown(40), allocated * Math.exp(1.5 * settings.agreement), settings),
    ).toBeGreaterThan(1);
  });

  it('is none where the run cannot tell: activations under a tenth of the memory, or a scale beyond 0.25-4', () => {
    expect(activationScaleOf(breakdown(1.5), 20, settings)).toBeNull(); // 1.5 of 19.5 GB
    expect(activationScaleOf(breakdown(10), 18 + 45, settings)).toBeNull(); // 4.5x
    expect(activationScaleOf(breakdown(10), 18 + 2, settings)).toBeNull(); // 0.2x
    expect(activationScaleOf(breakdown(10), 0, settings)).toBeNull();
  });

  it("is the median of a model's runs per precision", () => {
    const c = memoryCalibrations([
      { key: 'a|BF16', scale: 0.8 },
      { key: 'a|BF16', scale: 1.4 },
      { key: 'a|BF16', scale: 0.9 },
      { key: 'a|FP32', scale: 1.2 },
      { key: 'a|FP32', scale: 1.0 },
    ]);
    expect(c.get('a|BF16')).toEqual({ scale: 0.9, runs: 3 });
    expect(c.get('a|FP32')?.scale).toBeCloseTo(1.1, 12);
  });
});

const MEMORY = 'memory { activationsGb totalGb }';
const PREDICT = `query($input: PredictInput!) { predict(input: $input) { stepTimeMs fitsInMemory evidence ${MEMORY} } }`;
const RECORD = `mutation($runs: [MeasurementInput!]!) { recordMeasurements(runs: $runs) { stored rejected { reason } } }`;
const RECOMMEND = `query($input: RecommendInput!) { recommend(input: $input) {
  predictorNote plans { batchSizePerGpu memoryGbPerGpu } rejected { reason count } } }`;

describe("a run's peak sizes its model's other configurations", () => {
  // GPT-2 124M in BF16 on A10G (24 GB): its memory is mostly activations.
  const model = 'gpt2_124m';
  const gpu = 'A10G';
  const predictAt = async (over: Record<string, unknown>) => {
    const r = await run(PREDICT, {
      input: { workload: { model, samples: 1e6 }, gpu, precision: 'BF16', batchSizePerGpu: 8, ...over },
    });
    expect(r.errors).toBeUndefined();
    return r.data!.predict as {
      stepTimeMs: number;
      fitsInMemory: boolean;
      evidence: string;
      memory: { activationsGb: number; totalGb: number };
    };
  };
  // The batch one A10G cannot hold as trainplan counts the activations, but can at 0.6 of them.
  const cost = costOf(getModel(model)!);
  const memoryAt = (batch: number, scale: number) =>
    memoryPerGpu(getModel(model)!, cost, 'BF16', batch, false, loadEfficiency(), {
      activationScale: scale,
    }).totalGb;
  const capacity = getGpu(gpu)!.usableMemoryGb;
  const batch = [8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64].find(
    (b) => memoryAt(b, 1) > capacity && memoryAt(b, 0.6) < capacity,
  )!;

  /** One A10G at that batch, plain data parallelism: what recommend plans there. */
  const recommendAtBatch = async () => {
    const r = await run(RECOMMEND, { input: oneGpuSearchInput(model, gpu, 'BF16', batch) });
    expect(r.errors).toBeUndefined();
    return r;
  };

  /** One job on one A10G at that batch: what planFleet gives it (recomputation is the only layout a single GPU has). */
  const FLEET = `query($input: FleetInput!) { planFleet(input: $input) { status
    assignments { batchSizePerGpu memoryGbPerGpu evidence parallelism { recompute } } } }`;
  const fleetAtBatch = async (over: Record<string, unknown> = {}) => {
    const r = await run(FLEET, { input: { ...over, ...oneGpuFleetInput(model, gpu, 'BF16', batch) } });
    expect(r.errors).toBeUndefined();
    return r.data!.planFleet as {
      status: string;
      assignments: { memoryGbPerGpu: number; evidence: string; parallelism: { recompute: string } }[];
    };
  };

  it('before any run: the model at that batch does not fit, recommend has no plan there, a fleet recomputes to fit it', async () => {
    expect(batch).toBeDefined();
    const before = await predictAt({ batchSizePerGpu: batch });
    expect(before.fitsInMemory).toBe(false);
    expect(before.evidence).not.toMatch(/memory:/);
    const r = await recommendAtBatch();
    expect(r.data!.recommend.plans).toEqual([]);
    expect(r.data!.recommend.rejected).toContainEqual(expect.objectContaining({ reason: 'OUT_OF_MEMORY' }));
    // A fleet plans the job only by recomputing activations to make it fit.
    const fleet = await fleetAtBatch();
    expect(fleet.status).toBe('OPTIMAL');
    expect(fleet.assignments[0].parallelism.recompute).not.toBe('NONE');
  });

  it('a run at batch 8 measuring 0.6 of the activations: the other batch fits, on predict, in recommend and in a fleet', async () => {
    const at8 = await predictAt({});
    // The peak PyTorch allocated (the harness's): what trainplan counts, 0.6 of the activations.
    const p8 = memoryPerGpu(getModel(model)!, cost, 'BF16', 8, false, loadEfficiency());
    expect(p8.totalGb).toBeCloseTo(at8.memory.totalGb, 6);
    const measured = allocatedGb(p8) - 0.4 * p8.activationsGb;
    const recorded = await run(RECORD, {
      runs: [
        {
          workload: { model, samples: 1e6 },
          gpu,
          precision: 'BF16',
          batchSizePerGpu: 8,
          stepTimeMs: at8.stepTimeMs * 1.1,
          peakMemoryGb: measured,
          source: 'test',
        },
      ],
    });
    expect(recorded.data!.recordMeasurements).toEqual({ stored: 1, rejected: [] });
    // The listing puts the run's peak beside what trainplan counted at its configuration.
    const listed = await run(`{ measurements(model: "${model}") { peakMemoryGb predictedPeakMemoryGb } }`);
    expect(listed.data!.measurements).toEqual([
      { peakMemoryGb: measured, predictedPeakMemoryGb: expect.closeTo(allocatedGb(p8), 6) },
    ]);

    const after = await predictAt({ batchSizePerGpu: batch });
    expect(after.fitsInMemory).toBe(true);
    expect(after.memory.totalGb).toBeCloseTo(memoryAt(batch, 0.6), 6);
    expect(after.evidence).toMatch(
      /; memory: activations 0\.60x what trainplan counts, from the peak memory of 1 of your runs of this model in BF16$/,
    );
    // Another precision, or another stack's memory rules: not calibrated by these runs.
    expect((await predictAt({ batchSizePerGpu: batch, precision: 'FP32' })).evidence).not.toMatch(/memory:/);
    const megatron = await predictAt({ batchSizePerGpu: batch, softwareStack: 'MEGATRON' });
    expect(megatron.evidence).not.toMatch(/memory:/);

    const r = await recommendAtBatch();
    const { plans, predictorNote } = r.data!.recommend;
    expect(plans.length).toBeGreaterThan(0);
    expect(plans[0].memoryGbPerGpu).toBeCloseTo(after.memory.totalGb, 6);
    expect(predictorNote).toMatch(
      /; memory: this model's activations 0\.60x in BF16 what trainplan counts, from the peak memory of your runs$/,
    );
    // A fleet sizes it with the run's peak too: the job runs plainly, at the memory predict gives.
    const fleet = await fleetAtBatch();
    expect(fleet.status).toBe('OPTIMAL');
    expect(fleet.assignments[0].parallelism.recompute).toBe('NONE');
    expect(fleet.assignments[0].memoryGbPerGpu).toBeCloseTo(after.memory.totalGb, 6);
    // The peaks are not the learned correction's: a fleet timed by the roofline alone sizes with them too, as recommend does.
    const analytical = await fleetAtBatch({ predictor: 'ANALYTICAL' });
    expect(analytical.assignments[0].parallelism.recompute).toBe('NONE');
    expect(analytical.assignments[0].memoryGbPerGpu).toBeCloseTo(after.memory.totalGb, 6);
    // And so does predict when no learned model loads (onnxruntime failing): the runs are still
    // read, and the answer says what sized it.
    const fallback = { predictor: null, reason: 'learned model unavailable (test)' };
    const alone = await predictCorrected(
      {
        model: getModel(model)!,
        gpu: getGpu(gpu)!,
        precision: 'BF16',
        batchSizePerGpu: batch,
        gpusPerNode: 1,
        nodes: 1,
        interNodeGbps: 100,
      },
      fallback,
      loadEfficiency(),
      undefined,
      await userEvidence(fallback),
    );
    expect(alone.predictor).toBe('analytical');
    expect(alone.fitsInMemory).toBe(true);
    expect(alone.memory.totalGb).toBeCloseTo(after.memory.totalGb, 6);
    expect(alone.evidence).toMatch(
      /^learned model unavailable \(test\); memory: activations 0\.60x what trainplan counts, from the peak memory of 1 of your runs of this model in BF16$/,
    );
  });
});
