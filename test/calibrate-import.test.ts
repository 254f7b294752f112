// The harness CSV's optional channels_last column: what `trainplan calibrate import` reads of it.
import { describe, expect, it } from 'vitest';
import { runFromRow } from '../cli/calibrate-runs.js';

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
