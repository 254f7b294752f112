// `trainplan harness`: writes the measurement harness (harness/measure.py), standalone, with a
// zoo model's layer list inside it when --model is given, so one file and PyTorch are all a GPU
// machine needs. Its output is what `trainplan calibrate import` reads.
import { readFileSync } from 'node:fs';
import { getModel } from '../predictor/zoo/index.js';

export const HARNESS_FILE = new URL('../harness/measure.py', import.meta.url);
const MARKER = /^EMBEDDED_MODEL = None$/m;

/** The harness script, with `model` (zoo id, optionally at another sequence length / image size) embedded. */
export function harnessScript(model?: string, seqLen?: number): string {
  const script = readFileSync(HARNESS_FILE, 'utf8');
  if (!model) return script;
  const def = getModel(model, seqLen === undefined ? undefined : { seqLenOrImageSize: seqLen });
  if (!def)
    throw new Error(`--model: "${model}" is not in the zoo (trainplan query '{ models { id } }' lists them)`);
  const embedded = {
    id: def.id,
    name: def.name,
    seqLen: def.seqLen,
    imageSize: def.imageSize,
    optimizer: def.optimizer,
    batchSizes: def.batchSizes,
    layers: def.layers,
  };
  // JSON is a Python literal except for true/false/null: embed it as a string json.loads reads.
  return script.replace(MARKER, `EMBEDDED_MODEL = json.loads(${JSON.stringify(JSON.stringify(embedded))})`);
}
