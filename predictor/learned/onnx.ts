// The trained ensemble as an ONNX model (ai.onnx.ml TreeEnsembleRegressor), and onnxruntime-node
// inference over it. Input "features" [N, d] float32 -> output "correction" [N, 1].
import onnxProto from 'onnx-proto';
import type { Ensemble } from './gbdt.js';
import { throughGate } from './run-gate.js';

const { onnx } = onnxProto;

export function ensembleToOnnx(e: Ensemble, docString: string): Uint8Array {
  const nodesTreeids: number[] = [],
    nodesNodeids: number[] = [],
    nodesFeatureids: number[] = [],
    nodesValues: number[] = [];
  const nodesModes: Buffer[] = [],
    nodesTrue: number[] = [],
    nodesFalse: number[] = [];
  const targetTreeids: number[] = [],
    targetNodeids: number[] = [],
    targetIds: number[] = [],
    targetWeights: number[] = [];
  e.trees.forEach((t, ti) => {
    for (let n = 0; n < t.feature.length; n++) {
      const leaf = t.feature[n] < 0;
      nodesTreeids.push(ti);
      nodesNodeids.push(n);
      nodesFeatureids.push(leaf ? 0 : t.feature[n]);
      nodesValues.push(leaf ? 0 : t.threshold[n]);
      nodesModes.push(Buffer.from(leaf ? 'LEAF' : 'BRANCH_LEQ'));
      nodesTrue.push(leaf ? 0 : t.left[n]);
      nodesFalse.push(leaf ? 0 : t.right[n]);
      if (leaf) {
        targetTreeids.push(ti);
        targetNodeids.push(n);
        targetIds.push(0);
        targetWeights.push(e.learningRate * t.value[n]);
      }
    }
  });
  const A = onnx.AttributeProto.AttributeType;
  const ints = (name: string, v: number[]) => ({ name, type: A.INTS, ints: v });
  const floats = (name: string, v: number[]) => ({ name, type: A.FLOATS, floats: v });
  const node = {
    opType: 'TreeEnsembleRegressor',
    domain: 'ai.onnx.ml',
    input: ['features'],
    output: ['correction'],
    name: 'gbdt',
    attribute: [
      ints('nodes_treeids', nodesTreeids),
      ints('nodes_nodeids', nodesNodeids),
      ints('nodes_featureids', nodesFeatureids),
      floats('nodes_values', nodesValues),
      { name: 'nodes_modes', type: A.STRINGS, strings: nodesModes },
      ints('nodes_truenodeids', nodesTrue),
      ints('nodes_falsenodeids', nodesFalse),
      ints('target_treeids', targetTreeids),
      ints('target_nodeids', targetNodeids),
      ints('target_ids', targetIds),
      floats('target_weights', targetWeights),
      { name: 'n_targets', type: A.INT, i: 1 },
      floats('base_values', [e.base]),
      { name: 'aggregate_function', type: A.STRING, s: Buffer.from('SUM') },
      { name: 'post_transform', type: A.STRING, s: Buffer.from('NONE') },
    ],
  };
  const tensor = (name: string, dims: ({ dimParam: string } | { dimValue: number })[]) => ({
    name,
    type: { tensorType: { elemType: onnx.TensorProto.DataType.FLOAT, shape: { dim: dims } } },
  });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'trainplan',
    docString,
    opsetImport: [
      { domain: '', version: 17 },
      { domain: 'ai.onnx.ml', version: 3 },
    ],
    graph: {
      name: 'trainplan_correction',
      node: [node],
      input: [tensor('features', [{ dimParam: 'N' }, { dimValue: e.featureCount }])],
      output: [tensor('correction', [{ dimParam: 'N' }, { dimValue: 1 }])],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

type Ort = typeof import('onnxruntime-node');
export interface OnnxCorrection {
  /** One correction per row of `rows` (each of length featureCount), in batched runs of RUN_ROWS rows. */
  run(rows: Float32Array, count: number): Promise<Float32Array>;
  featureCount: number;
}

/**
 * Rows per onnxruntime run. onnxruntime-node runs a session on the JavaScript thread (in a
 * setImmediate callback), so a run holds the event loop until it ends: with the shipped model on one
 * intra-op thread, 100,000 rows held it for about 0.7 s and 50,000 for 0.33 s (2 cores). In runs of
 * 512 rows the loop turns between them (gaps of a few ms) at the same total time (50,000 rows: 342
 * ms against 329 in one run; 100,000: 672 against 716). With one intra-op thread a row's correction
 * does not depend on the rows run beside it (model.ts), so the runs give what one run gives.
 */
export const RUN_ROWS = 512;

/** Loads a model file (path or bytes) into one onnxruntime session, created once. */
export async function loadOnnxCorrection(
  source: string | Uint8Array,
  featureCount: number,
  threads = 2,
): Promise<OnnxCorrection> {
  const ort: Ort = await import('onnxruntime-node');
  const options = { intraOpNumThreads: threads };
  // Through the thread's run gate (run-gate.ts): a thread is never terminated with one in flight.
  const session = await throughGate(() =>
    typeof source === 'string'
      ? ort.InferenceSession.create(source, options)
      : ort.InferenceSession.create(source, options),
  );
  return {
    featureCount,
    async run(rows, count) {
      const corrections = new Float32Array(count);
      for (let start = 0; start < count; start += RUN_ROWS) {
        const end = Math.min(count, start + RUN_ROWS);
        const block = rows.subarray(start * featureCount, end * featureCount);
        const out = await throughGate(() =>
          session.run({ features: new ort.Tensor('float32', block, [end - start, featureCount]) }),
        );
        corrections.set(out.correction.data as Float32Array, start);
      }
      return corrections;
    },
  };
}
