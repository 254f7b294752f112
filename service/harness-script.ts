// The measurement harness (harness/measure.py) as a user gets it, standalone, with a zoo model's
// layer list inside it when a model is named, so one file and PyTorch are all a GPU machine needs:
// `trainplan harness` writes it, the server hands it out at GET /harness/measure.py. Its output is
// what `trainplan calibrate import` and importMeasurements read.
import { readFileSync } from 'node:fs';
import { parallelStructure } from '../predictor/parallel.js';
import { costOf } from '../predictor/predict.js';
import { fusedAttention } from '../predictor/step.js';
import { loadEfficiency } from '../seeds/catalog.js';
import { DEFAULT_STACK } from '../predictor/software.js';
import type { ModelCost } from '../predictor/types.js';
import { zooModel } from './models.js';
import { InputError } from './validate.js';

export const HARNESS_FILE = new URL('../harness/measure.py', import.meta.url);

/**
 * Whether measure.py, unasked (no --attention), runs a model's attention cores as one fused kernel:
 * as stock PyTorch runs the model's code (a zoo model's marks below; transformers' default for a
 * config's type, which the importer's ModelDef.attention states).
 */
export const harnessFusesAttention = (cost: Pick<ModelCost, 'attention'>): boolean =>
  fusedAttention({ stack: DEFAULT_STACK }, cost, loadEfficiency());
const MARKER = /^EMBEDDED_MODEL = None$/m;
let script: string | undefined;

/**
 * The harness script, with `model` (zoo id, optionally at another sequence length / image size)
 * embedded. `fields` name the inputs in errors (the CLI's flags, the server's query parameters).
 */
export function harnessScript(
  model?: string,
  seqLen?: number,
  fields: { model: string; seqLen: string } = { model: 'model', seqLen: 'seqLen' },
): string {
  // Read once per process: the server hands it out on every GET /harness/measure.py.
  script ??= readFileSync(HARNESS_FILE, 'utf8');
  if (seqLen !== undefined && !model) throw new InputError(fields.seqLen, `needs ${fields.model}`);
  if (!model) return script;
  const def = zooModel(model, seqLen, fields);
  // Per layer entry, what recomputation reruns as the predictor costs it (measure.py --recompute
  // checkpoints those layers of the replay): full, the transformer blocks; selective, the attention
  // core. And what tensor parallelism splits, and which linears' outputs it all-reduces
  // (measure.py --tensor-parallel replays each rank's share and those all-reduces). And what
  // pipeline and context parallelism split and send.
  const cost = costOf(def);
  const s = parallelStructure(cost, def.layers);
  const embedded = {
    id: def.id,
    name: def.name,
    seqLen: def.seqLen,
    imageSize: def.imageSize,
    optimizer: def.optimizer,
    batchSizes: def.batchSizes,
    layers: def.layers,
    recompute: { full: s.inBlocks, selective: s.selectiveRecompute },
    tensorParallel: { split: s.tpSplit, row: s.rowParallel },
    // Pipeline stages split the blocks (the entries recompute.full marks) and send the residual
    // stream (per sample) across each boundary (measure.py --pipeline-parallel).
    pipeline: { blocks: s.blocks, residualElements: s.residualElements },
    // Context parallelism passes K and V around its ring at each attention core (its scores
    // matmul, the core's first layer: measure.py --context-parallel).
    contextParallel: { ring: s.attentionCore.map((core, i) => core && !s.attentionCore[i - 1]) },
    // The attention cores the replay (eager PyTorch) runs as one scaled_dot_product_attention call
    // each, where predictor/step.ts costs them as one kernel on that stack.
    attention: {
      fused: harnessFusesAttention(cost) ? s.selectiveRecompute : s.selectiveRecompute.map(() => false),
    },
  };
  // JSON is a Python literal except for true/false/null: embed it as a string json.loads reads.
  return script.replace(MARKER, `EMBEDDED_MODEL = json.loads(${JSON.stringify(JSON.stringify(embedded))})`);
}
