// A thread that corrects rows with the shipped model without pause, as a planner thread does while
// it corrects a large search: test/run-gate.test.ts stops it at random moments.
import { parentPort } from 'node:worker_threads';
import { featureNames } from '../../predictor/learned/features.js';
import { LEARNED_MODEL_FILE } from '../../seeds/catalog.js';
import { loadOnnxCorrection } from '../../predictor/learned/onnx.js';
import { GateClosed } from '../../predictor/learned/run-gate.js';

const d = featureNames(true).length;
const onnx = await loadOnnxCorrection(LEARNED_MODEL_FILE.pathname, d, 2);
const rows = new Float32Array(2048 * d);
parentPort!.postMessage({ type: 'ready' });
try {
  for (;;) await onnx.run(rows, 2048);
} catch (e) {
  if (!(e instanceof GateClosed)) throw e;
}
