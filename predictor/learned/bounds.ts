// The range of the learned correction over a box of inputs, without running it on each input. A
// tree ensemble's output is its base plus one leaf per tree; over a box (each feature between a low
// and a high value) a tree can only reach the leaves whose path conditions the box meets, so the
// output lies between the sums of the smallest and the largest reachable leaves. With no box at all
// that is the sum of each tree's smallest and largest leaf. The trees are read from the ONNX file
// onnxruntime runs, so the bound is a bound of exactly what is run.
import { readFileSync } from 'node:fs';
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

export interface TreeEnsembleBounds {
  /** Smallest and largest output over the box lo <= x <= hi (inputs compared as float32, as onnxruntime does). */
  range(lo: ArrayLike<number>, hi: ArrayLike<number>): [number, number];
  /** Smallest and largest output over every input. */
  readonly global: [number, number];
}

interface FlatTree {
  feature: Int32Array;
  threshold: Float32Array;
  left: Int32Array;
  right: Int32Array;
  /** Leaf weight (learning rate applied), NaN for branches. */
  weight: Float64Array;
}

/**
 * Summation order differs between this bound and onnxruntime (float32 accumulation): the bound is
 * widened by this much in the output's units (log throughput ratio), far below any prediction's
 * resolution and far above float32 rounding of a 90-tree sum.
 */
const SLACK = 1e-4;

export function treeBoundsFromOnnx(bytes: Uint8Array): TreeEnsembleBounds {
  const model = onnx.ModelProto.decode(bytes);
  const node = model.graph?.node?.find((n) => n.opType === 'TreeEnsembleRegressor');
  if (!node) throw new Error('no TreeEnsembleRegressor in the model');
  const attr = new Map((node.attribute ?? []).map((a) => [a.name ?? '', a]));
  const ints = (name: string) => (attr.get(name)?.ints ?? []).map(Number);
  const floats = (name: string) => attr.get(name)?.floats ?? [];
  const treeIds = ints('nodes_treeids'),
    nodeIds = ints('nodes_nodeids'),
    featureIds = ints('nodes_featureids'),
    values = floats('nodes_values'),
    trueIds = ints('nodes_truenodeids'),
    falseIds = ints('nodes_falsenodeids');
  const modes = (attr.get('nodes_modes')?.strings ?? []).map((s) => Buffer.from(s).toString());
  const base = floats('base_values')[0] ?? 0;
  const count = Math.max(...treeIds) + 1;
  const sizes = new Array<number>(count).fill(0);
  treeIds.forEach((t, i) => (sizes[t] = Math.max(sizes[t], nodeIds[i] + 1)));
  const trees: FlatTree[] = sizes.map((n) => ({
    feature: new Int32Array(n).fill(-1),
    threshold: new Float32Array(n),
    left: new Int32Array(n),
    right: new Int32Array(n),
    weight: new Float64Array(n).fill(Number.NaN),
  }));
  treeIds.forEach((t, i) => {
    const tree = trees[t],
      n = nodeIds[i];
    if (modes[i] === 'LEAF') return;
    if (modes[i] !== 'BRANCH_LEQ') throw new Error(`unsupported node mode ${modes[i]}`);
    tree.feature[n] = featureIds[i];
    tree.threshold[n] = values[i];
    tree.left[n] = trueIds[i];
    tree.right[n] = falseIds[i];
  });
  const targetTrees = ints('target_treeids'),
    targetNodes = ints('target_nodeids'),
    weights = floats('target_weights');
  targetTrees.forEach((t, i) => (trees[t].weight[targetNodes[i]] = weights[i]));

  let gLo = base,
    gHi = base;
  for (const t of trees) {
    let lo = Infinity,
      hi = -Infinity;
    for (const w of t.weight)
      if (!Number.isNaN(w)) {
        lo = Math.min(lo, w);
        hi = Math.max(hi, w);
      }
    gLo += lo;
    gHi += hi;
  }
  const stack = new Int32Array(64);
  return {
    global: [gLo - SLACK, gHi + SLACK],
    range(xLo, xHi) {
      let sumLo = base,
        sumHi = base;
      for (const t of trees) {
        let lo = Infinity,
          hi = -Infinity,
          top = 0;
        stack[top++] = 0;
        while (top > 0) {
          const n = stack[--top];
          const f = t.feature[n];
          if (f < 0) {
            const w = t.weight[n];
            if (w < lo) lo = w;
            if (w > hi) hi = w;
            continue;
          }
          // onnxruntime compares the float32 input with the float32 threshold: x <= threshold goes left.
          const th = t.threshold[n];
          if (Math.fround(xLo[f]) <= th) stack[top++] = t.left[n];
          if (Math.fround(xHi[f]) > th) stack[top++] = t.right[n];
        }
        sumLo += lo;
        sumHi += hi;
      }
      return [sumLo - SLACK, sumHi + SLACK];
    },
  };
}

export function treeBoundsFromFile(path: string | URL): TreeEnsembleBounds {
  return treeBoundsFromOnnx(readFileSync(path));
}
