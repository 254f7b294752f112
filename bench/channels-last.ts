// Where seeds/efficiency.json's nchwConvEfficiency comes from: the NCHW/NHWC step-time ratio the
// roofline predicts for 16-bit training against the published comparisons, for a range of values.
//
//   npx tsx bench/channels-last.ts
//
// Published, all on V100 under 16-bit training (seeds/efficiency.json's _about cites them):
// PyTorch's channels-last tutorial, ResNet-50 under AMP 1.22x slower NCHW; PaddlePaddle/Paddle#20597,
// FP16 steps ResNet-50 1.22x, VGG-16 1.72x, Inception-v4 1.11x. Their batch sizes are not stated,
// so each value is tried at batch 64, 128 and 256. Prints, per value, the predicted ratios and their
// mean |log error| against the published ones; the shipped value is marked. Takes seconds.
import { getGpu, loadEfficiency } from '../seeds/catalog.js';
import { predict } from '../predictor/predict.js';
import { getModel } from '../predictor/zoo/index.js';

const PUBLISHED = [
  ['resnet50_v1.5', 1.22],
  ['vgg16', 1.72],
  ['inception_v4', 1.11],
] as const;
const shipped = loadEfficiency();
const gpu = getGpu('V100-SXM2-16GB')!;

for (const value of [0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8, 1]) {
  const eff = { ...shipped, nchwConvEfficiency: value };
  const cells: string[] = [];
  let sum = 0,
    n = 0;
  for (const batch of [64, 128, 256]) {
    const ratios = PUBLISHED.map(([id, published]) => {
      const model = getModel(id)!;
      const step = (channelsLast: boolean) =>
        predict(
          {
            model,
            gpu,
            precision: 'AMP_FP16',
            batchSizePerGpu: batch,
            gpusPerNode: 1,
            nodes: 1,
            interNodeGbps: 100,
            channelsLast,
          },
          eff,
        ).stepTimeMs;
      const ratio = step(false) / step(true);
      sum += Math.abs(Math.log(ratio / published));
      n++;
      return ratio.toFixed(2);
    });
    cells.push(`b${batch} ${ratios.join('/')}`);
  }
  const mark = value === shipped.nchwConvEfficiency ? '  <- shipped' : '';
  console.log(
    `nchwConvEfficiency ${value.toFixed(2)}: ${cells.join('  ')}  mean |log error| ${(sum / n).toFixed(3)}${mark}`,
  );
}
console.log(`published: ${PUBLISHED.map(([id, r]) => `${id} ${r}x`).join(', ')}`);
