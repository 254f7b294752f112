// planFleet, planProcurement and planFederatedRound time their configurations as recommend does:
// the learned correction, with the recorded runs as its evidence (a federated client given by its
// device's figures keeps the analytical step). A plan's configuration takes what predict answers
// for it; a run recorded on a GPU moves the plans on it at once and says so; ANALYTICAL plans with
// the roofline alone. The run here is synthetic (a stated multiple of the current prediction), so the
// movement expected is known; no measurement is invented for the product.
import { describe, expect, it } from 'vitest';
import { apolloForTests } from './graphql-client.js';
import { throwawayStore } from './throwaway-store.js';

throwawayStore('trainplan-coupled-runs-');
const run = apolloForTests();

// MI300X: no shipped measurement at all, so what moves below moves because of the recorded run.
const GPU = 'MI300X';
const MODEL = 'resnet50_v1.5';
const SAMPLES = 1.28e8;
// One configuration only (8 GPUs of one node, batch 256, AMP_BF16), so the plans cannot move by
// choosing another one.
const SPACE = { precisions: ['AMP_BF16'], gpusPerNode: [8], maxNodes: 1 };
const FLEET = {
  ...SPACE,
  jobs: [
    {
      id: 'rn50',
      workload: { model: MODEL, samples: SAMPLES },
      deadlineHours: 1000,
      batchSizes: [256],
    },
  ],
  inventory: [{ gpu: GPU, count: 8, usdPerGpuHour: 2 }],
};
const PLAN_FLEET = `query($input: FleetInput!) { planFleet(input: $input) { status predictor notes
  assignments { gpu { id } nodes gpusPerNode batchSizePerGpu precision stepTimeMs totalHours totalHoursP90 costUsd
    evidenceLevel evidence calibrationRuns } } }`;
const PLAN_FLEET_SURE = `query($input: FleetInput!) { planFleet(input: $input) { status notes
  assignments { totalHours totalHoursP90 startHours endHours } unplaced { jobId reason message } } }`;
const PROCUREMENT = {
  ...SPACE,
  horizonMonths: 12,
  jobs: [
    {
      id: 'rn50',
      workload: { model: MODEL, samples: SAMPLES },
      runsPerMonth: 4,
      deadlineHours: 1000,
      batchSizes: [256],
    },
  ],
  options: [
    {
      gpu: GPU,
      rent: false,
      buy: {
        usdPerGpu: 15000,
        lifetimeMonths: 48,
        powerW: 750,
        electricityUsdPerKwh: 0.12,
        utilization: 0.8,
      },
    },
  ],
};
const PLAN_PROCUREMENT = `query($input: ProcurementInput!) { planProcurement(input: $input) { status predictor
  allocations { config { gpu { id } totalGpus precision hoursPerRun evidenceLevel evidence calibrationRuns } } } }`;
const FEDERATED = {
  workload: { model: MODEL, samples: SAMPLES },
  precisions: ['AMP_BF16'],
  batchSizes: [256],
  minSamplesPerRound: 256 * 10,
  clients: [
    { id: 'lab', gpu: GPU, samplesAvailable: 256 * 10, uplinkMbps: 1000, downlinkMbps: 1000 },
    {
      id: 'edge',
      device: {
        name: 'edge-box',
        peakTflops: { fp32: 20, fp16: 80, bf16: 80 },
        memoryBwGbps: 500,
        memoryGb: 64,
      },
      samplesAvailable: 256,
      uplinkMbps: 100,
      downlinkMbps: 100,
    },
  ],
};
const PLAN_FEDERATED = `query($input: FederatedInput!) { planFederatedRound(input: $input) { status predictor notes
  clients { id participates localSteps computeSeconds evidence calibrationRuns } } }`;
const PREDICT = `query($input: PredictInput!) { predict(input: $input) {
  stepTimeMs analyticalStepTimeMs totalHours totalHoursP90 predictor evidence calibrationRuns } }`;
const RECORD = `mutation($runs: [MeasurementInput!]!) { recordMeasurements(runs: $runs) { stored rejected { reason } } }`;
const CONFIG = {
  workload: { model: MODEL, samples: SAMPLES },
  gpu: GPU,
  nodes: 1,
  gpusPerNode: 8,
  batchSizePerGpu: 256,
  precision: 'AMP_BF16',
};

const ask = async (query: string, variables: Record<string, unknown>) => {
  const r = await run(query, variables);
  expect(r.errors).toBeUndefined();
  return r.data!;
};
const fleet = async (extra: Record<string, unknown> = {}) =>
  (await ask(PLAN_FLEET, { input: { ...FLEET, ...extra } })).planFleet;
const procurement = async () => (await ask(PLAN_PROCUREMENT, { input: PROCUREMENT })).planProcurement;
const predicted = async (over: Record<string, unknown> = {}) =>
  (await ask(PREDICT, { input: { ...CONFIG, ...over } })).predict;
const federated = async () => (await ask(PLAN_FEDERATED, { input: FEDERATED })).planFederatedRound;
/** The lab client's plan, with the step time its compute implies. */
const labOf = async () => {
  const plan = await federated();
  expect(plan.status).toBe('OPTIMAL');
  const lab = plan.clients.find((c: { id: string }) => c.id === 'lab');
  expect(lab.participates).toBe(true);
  return { plan, lab, stepMs: (lab.computeSeconds / lab.localSteps) * 1e3 };
};
const ONE_GPU = { gpusPerNode: 1 };

describe('coupled plans are timed by the predictor recommend answers with', () => {
  it('by default the learned correction: an assignment takes what predict answers for its configuration', async () => {
    const [plan, p] = await Promise.all([fleet(), predicted()]);
    expect(plan.status).toBe('OPTIMAL');
    expect(plan.predictor).toBe(p.predictor);
    expect(plan.predictor).not.toBe('analytical');
    expect(plan.notes).toContain(
      'configurations timed by the learned correction of the analytical estimate (seeds/PREDICTOR_CARD.md)',
    );
    const [a] = plan.assignments;
    expect(a).toMatchObject({ gpu: { id: GPU }, nodes: 1, gpusPerNode: 8, batchSizePerGpu: 256 });
    expect(a.evidenceLevel).toBe('UNMEASURED');
    expect(a.calibrationRuns).toBe(0);
    expect(a.stepTimeMs).toBeCloseTo(p.stepTimeMs, 6);
    expect(a.totalHours).toBeCloseTo(p.totalHours, 6);
    expect(a.totalHoursP90).toBeCloseTo(p.totalHoursP90, 6);
    expect(a.totalHoursP90).toBeGreaterThan(a.totalHours);
    // The correction moves this configuration: the test would not tell the two predictors apart otherwise.
    expect(Math.abs(p.stepTimeMs / p.analyticalStepTimeMs - 1)).toBeGreaterThan(0.01);
  });

  it("a federated client on a catalog GPU takes predict's corrected step; one given by its figures the analytical one", async () => {
    const [{ plan, lab, stepMs }, p] = await Promise.all([labOf(), predicted(ONE_GPU)]);
    expect(plan.predictor).toBe(p.predictor);
    expect(stepMs).toBeCloseTo(p.stepTimeMs, 6);
    // The case predict's evidence opens with (predict goes on with the stack and the layout).
    expect(p.evidence.startsWith(`${lab.evidence}; `)).toBe(true);
    expect(lab.calibrationRuns).toBe(0);
    const edge = plan.clients.find((c: { id: string }) => c.id === 'edge');
    if (edge.participates) expect(edge.evidence).toBeNull();
    expect(plan.notes.join(' ')).toMatch(/steps on catalog GPUs timed by the learned correction/);
  });

  it('a deadline met at the estimate but not at its P90: planned and named in the notes, or with deadlineConfidence held at P90', async () => {
    const p = await predicted();
    const deadlineHours = (p.totalHours + p.totalHoursP90) / 2;
    const plan = await fleet({ jobs: [{ ...FLEET.jobs[0], deadlineHours }] });
    expect(plan.status).toBe('OPTIMAL');
    expect(plan.notes.join(' ')).toMatch(
      new RegExp(
        `at the P90 step time these jobs would end after their deadline, even starting as planned: rn50 \\(${p.totalHoursP90.toPrecision(4)} h, deadline ${deadlineHours} h\\)`,
      ),
    );
    const roomy = await fleet();
    expect(roomy.notes.join(' ')).not.toMatch(/at the P90 step time/);

    // Held at P90 the deadline rules the configuration out, saying so; with room it is scheduled
    // for its P90 hours (its GPUs held that long), and no note is needed.
    const sure = await ask(PLAN_FLEET_SURE, {
      input: { ...FLEET, deadlineConfidence: true, jobs: [{ ...FLEET.jobs[0], deadlineHours }] },
    });
    expect(sure.planFleet.status).toBe('INFEASIBLE');
    expect(sure.planFleet.unplaced[0]).toMatchObject({ jobId: 'rn50', reason: 'DEADLINE' });
    expect(sure.planFleet.unplaced[0].message).toMatch(/takes [\d.]+ h at the P90 step time/);
    const held = (
      await ask(PLAN_FLEET_SURE, {
        input: {
          ...FLEET,
          deadlineConfidence: true,
          jobs: [{ ...FLEET.jobs[0], deadlineHours: p.totalHoursP90 * 1.01 }],
        },
      })
    ).planFleet;
    expect(held.status).toBe('OPTIMAL');
    const [a] = held.assignments;
    expect(a.endHours - a.startHours).toBeCloseTo(p.totalHoursP90, 6);
    expect(a.totalHours).toBeCloseTo(p.totalHours, 6);
    expect(held.notes.join(' ')).not.toMatch(/at the P90 step time/);

    // A procurement's runs are held to the deadline at P90 the same way.
    const buy = async (deadlineConfidence: boolean) =>
      (
        await ask(
          `query($input: ProcurementInput!) { planProcurement(input: $input) { status unplaced { reason message } } }`,
          {
            input: { ...PROCUREMENT, deadlineConfidence, jobs: [{ ...PROCUREMENT.jobs[0], deadlineHours }] },
          },
        )
      ).planProcurement;
    expect((await buy(false)).status).toBe('OPTIMAL');
    const refused = await buy(true);
    expect(refused.status).toBe('INFEASIBLE');
    expect(refused.unplaced[0].reason).toBe('DEADLINE');
    expect(refused.unplaced[0].message).toMatch(
      new RegExp(`takes ${p.totalHoursP90.toPrecision(4)} h per run at the P90 step time`),
    );
  });

  it("a job's own deadlineConfidence holds its deadline at P90, or at the estimate, whatever the request says", async () => {
    const p = await predicted();
    const jobs = [
      { ...FLEET.jobs[0], id: 'must', deadlineConfidence: true },
      { ...FLEET.jobs[0], id: 'may' },
      { ...FLEET.jobs[0], id: 'never', deadlineConfidence: false },
    ];
    const held = async (deadlineConfidence: boolean) => {
      const plan = (
        await ask(PLAN_FLEET_SURE, {
          input: {
            ...FLEET,
            deadlineConfidence,
            jobs,
            inventory: [{ gpu: GPU, count: 24, usdPerGpuHour: 2 }],
          },
        })
      ).planFleet;
      expect(plan.status).toBe('OPTIMAL');
      return plan.assignments.map((a: { startHours: number; endHours: number }) => a.endHours - a.startHours);
    };
    // The request's default for the job that states none; each stated one as it says.
    const [must, may, never] = await held(false);
    expect(must).toBeCloseTo(p.totalHoursP90, 6);
    expect(may).toBeCloseTo(p.totalHours, 6);
    expect(never).toBeCloseTo(p.totalHours, 6);
    expect(await held(true)).toEqual([
      expect.closeTo(p.totalHoursP90, 6),
      expect.closeTo(p.totalHoursP90, 6),
      expect.closeTo(p.totalHours, 6),
    ]);
    // A procurement job held at P90 on its own: its deadline between the estimate and P90 refuses it.
    const deadlineHours = (p.totalHours + p.totalHoursP90) / 2;
    const refused = (
      await ask(
        `query($input: ProcurementInput!) { planProcurement(input: $input) { status unplaced { reason message } } }`,
        {
          input: {
            ...PROCUREMENT,
            jobs: [{ ...PROCUREMENT.jobs[0], deadlineHours, deadlineConfidence: true }],
          },
        },
      )
    ).planProcurement;
    expect(refused.status).toBe('INFEASIBLE');
    expect(refused.unplaced[0].message).toMatch(/per run at the P90 step time/);
  });

  it('with predictor ANALYTICAL the roofline alone, and the notes say so', async () => {
    const [plan, p] = await Promise.all([fleet({ predictor: 'ANALYTICAL' }), predicted()]);
    expect(plan.predictor).toBe('analytical');
    expect(plan.notes).toContain(
      'configurations timed by the analytical estimate alone: as asked (predictor: ANALYTICAL)',
    );
    expect(plan.assignments[0].stepTimeMs).toBeCloseTo(p.analyticalStepTimeMs, 6);
    expect(plan.assignments[0].evidence).toBe('analytical estimate only');
  });

  it('a recorded run moves the fleet and the procurement plans on its GPU at once, and they say so', async () => {
    const before = await predicted();
    const [fleetBefore, buyBefore] = [
      (await fleet()).assignments[0],
      (await procurement()).allocations[0].config,
    ];
    expect(buyBefore.hoursPerRun).toBeCloseTo(before.totalHours, 6);
    const stored = await ask(RECORD, {
      runs: [{ ...CONFIG, stepTimeMs: before.stepTimeMs * 1.5, source: 'test' }],
    });
    expect(stored.recordMeasurements).toEqual({ stored: 1, rejected: [] });
    const after = await predicted();
    expect(after.calibrationRuns).toBe(1);
    expect(after.stepTimeMs).toBeGreaterThan(before.stepTimeMs * 1.2);

    const plan = await fleet();
    expect(plan.notes.join(' ')).toMatch(/with 1 of your recorded runs as evidence/);
    const [a] = plan.assignments;
    expect(a.calibrationRuns).toBe(1);
    expect(a.evidenceLevel).toBe('MODEL_MEASURED_ON_GPU');
    expect(a.evidence).toMatch(/calibrated by 1 of your runs/);
    expect(a.stepTimeMs).toBeCloseTo(after.stepTimeMs, 6);
    expect(a.totalHours).toBeGreaterThan(fleetBefore.totalHours * 1.2);
    expect(a.costUsd).toBeGreaterThan(fleetBefore.costUsd * 1.2);

    const buy = (await procurement()).allocations[0].config;
    expect(buy.calibrationRuns).toBe(1);
    expect(buy.evidence).toMatch(/calibrated by 1 of your runs/);
    expect(buy.hoursPerRun).toBeCloseTo(after.totalHours, 6);
    expect(buy.hoursPerRun).toBeGreaterThan(buyBefore.hoursPerRun * 1.2);

    // The model's step on one MI300X is calibrated by the same run: the lab client's too.
    const [{ plan: round, lab, stepMs }, one] = await Promise.all([labOf(), predicted(ONE_GPU)]);
    expect(one.calibrationRuns).toBe(1);
    expect(stepMs).toBeCloseTo(one.stepTimeMs, 6);
    expect(lab.calibrationRuns).toBe(1);
    expect(lab.evidence).toMatch(/calibrated by 1 of your runs/);
    expect(round.notes.join(' ')).toMatch(/with 1 of your recorded runs as evidence/);
  });
});
