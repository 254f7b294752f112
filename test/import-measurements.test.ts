// importMeasurements: a runs file's text (the harness's CSV, or JSON) recorded through the API, read
// as `trainplan calibrate import` reads the file (service/run-rows.ts), for the calibration page.
import { describe, expect, it } from 'vitest';
import { apolloForTests } from './graphql-client.js';
import { throwawayStore } from './throwaway-store.js';
import { predict } from '../predictor/predict.js';
import { predictRequestOf } from '../service/measurements.js';
import { loadEfficiency } from '../seeds/catalog.js';

throwawayStore('trainplan-import-');
const run = apolloForTests();

const IMPORT = `mutation($text: String!, $owner: String) {
  importMeasurements(text: $text, owner: $owner) { stored ids rejected { index reason } } }`;
const LIST = `query { measurements { id owner gpu model nodes gpusPerNode precision stepTimeMs source } }`;

/** A plausible step for the configuration: 1.2x its roofline estimate. */
const plausibleMs = (gpu: string, batch: number, gpusPerNode = 1) =>
  1.2 *
  predict(
    predictRequestOf({
      workload: { model: 'resnet50_v1.5', samples: 1 },
      gpu,
      nodes: 1,
      gpusPerNode,
      batchSizePerGpu: batch,
      gradAccumSteps: 1,
      precision: 'AMP_BF16',
      framework: 'PyTorch',
      xla: false,
      fp32UsesTf32: true,
    }),
    loadEfficiency(),
  ).stepTimeMs;

describe('importMeasurements', () => {
  it('reads CSV rows as the CLI does: a device name mapped to its GPU, a bad row refused with its reason, the rest stored', async () => {
    const ms = plausibleMs('A100-SXM4-80GB', 128, 8);
    const text = [
      'model,gpu,gpu_memory_gb,nodes,gpus_per_node,batch_size_per_gpu,precision,step_time_ms,source',
      `resnet50_v1.5,NVIDIA A100-SXM4-80GB,79.2,1,8,128,AMP_BF16,${ms},page`,
      `resnet50_v1.5,A100-SXM4-80GB,,1,1,128,AMP_BF17,${ms},page`,
      `tiny-layers.json,A100-SXM4-80GB,,1,1,2,FP32,5,page`,
      `resnet50_v1.5,A100-SXM4-80GB,,1,1,128,AMP_BF16,-3,page`,
    ].join('\n');
    const r = await run(IMPORT, { text, owner: 'pat' });
    expect(r.errors).toBeUndefined();
    const res = r.data!.importMeasurements;
    expect(res.stored).toBe(1);
    expect(res.rejected).toEqual([
      { index: 1, reason: expect.stringMatching(/^precision: "AMP_BF17" is not one of FP32, /) },
      {
        index: 2,
        reason: expect.stringMatching(
          /^model: "tiny-layers.json" is a file, which only `trainplan calibrate import FILE` reads/,
        ),
      },
      { index: 3, reason: expect.stringMatching(/^stepTimeMs/) },
    ]);
    const stored = (await run(LIST)).data!.measurements;
    expect(stored).toEqual([
      {
        id: res.ids[0],
        owner: 'pat',
        gpu: 'A100-SXM4-80GB',
        model: 'resnet50_v1.5',
        nodes: 1,
        gpusPerNode: 8,
        precision: 'AMP_BF16',
        stepTimeMs: ms,
        source: 'page',
      },
    ]);
  });

  it('reads a CSV as a spreadsheet saves it: a byte-order mark first, CRLF line ends', async () => {
    const ms = plausibleMs('A10G', 32);
    const text = `\uFEFFmodel,gpu,batch_size_per_gpu,precision,step_time_ms,source\r\nresnet50_v1.5,A10G,32,AMP_BF16,${ms},excel\r\n`;
    const r = await run(IMPORT, { text });
    expect(r.errors).toBeUndefined();
    expect(r.data!.importMeasurements).toMatchObject({ stored: 1, rejected: [] });
    const [stored] = (await run(LIST)).data!.measurements.filter((m: { gpu: string }) => m.gpu === 'A10G');
    expect(stored).toMatchObject({ model: 'resnet50_v1.5', stepTimeMs: ms, source: 'excel' });
  });

  it('reads a JSON list of harness rows or of MeasurementInput objects', async () => {
    const ms = plausibleMs('L4', 64);
    const text = JSON.stringify([
      {
        model: 'resnet50_v1.5',
        gpu: 'NVIDIA L4',
        batch_size_per_gpu: 64,
        precision: 'AMP_BF16',
        step_time_ms: ms,
      },
      {
        workload: { model: 'resnet50_v1.5', samples: 1 },
        gpu: 'L4',
        batchSizePerGpu: 64,
        precision: 'AMP_BF16',
        stepTimeMs: ms * 1.1,
      },
    ]);
    const r = await run(IMPORT, { text });
    expect(r.errors).toBeUndefined();
    expect(r.data!.importMeasurements).toMatchObject({ stored: 2, rejected: [] });
    const l4 = (await run(LIST)).data!.measurements.filter((m: { gpu: string }) => m.gpu === 'L4');
    expect(l4.map((m: { owner: string; stepTimeMs: number }) => [m.owner, m.stepTimeMs])).toEqual([
      ['local', ms],
      ['local', ms * 1.1],
    ]);
  });

  it('refuses text it cannot read as BAD_USER_INPUT naming the field, storing nothing', async () => {
    const before = (await run(LIST)).data!.measurements.length;
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ text: '' }, 'text', /no runs/],
      [{ text: 'model,gpu\n' }, 'text', /no runs/],
      [{ text: '[{"model": ' }, 'text', /not JSON/],
      [{ text: '{"model": "resnet50_v1.5"}' }, 'text', /expected a JSON list of runs/],
      [
        { text: `model\n${'resnet50_v1.5\n'.repeat(1001)}` },
        'text',
        /at most 1000 runs per call \(got 1001\)/,
      ],
      [{ text: 'x'.repeat(1_000_001) }, 'text', /at most 1,000,000 characters/],
      [{ text: 'model\nresnet50_v1.5\n', owner: '' }, 'owner', /must be 1 to 100 characters/],
    ];
    for (const [vars, field, message] of cases) {
      const r = await run(IMPORT, vars);
      expect(r.errors?.[0].extensions, JSON.stringify(vars).slice(0, 60)).toMatchObject({
        code: 'BAD_USER_INPUT',
        field,
      });
      expect(r.errors![0].message).toMatch(message);
    }
    expect((await run(LIST)).data!.measurements).toHaveLength(before);
  });
});
