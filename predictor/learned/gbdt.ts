// Gradient-boosted regression trees (squared error), small and deterministic: the learned
// correction to the analytical estimate. Trees are kept in the flat layout ONNX's
// TreeEnsembleRegressor uses, so what is trained here is exactly what onnxruntime runs.

export interface Tree {
  /** Per node: feature index (-1 for a leaf), threshold (go left when x <= threshold), children, leaf value. */
  feature: number[];
  threshold: number[];
  left: number[];
  right: number[];
  value: number[];
}

export interface Ensemble {
  base: number;
  learningRate: number;
  trees: Tree[];
  featureCount: number;
}

export interface GbdtParams {
  trees: number;
  depth: number;
  learningRate: number;
  minLeaf: number;
  /** Fraction of rows each tree sees (row subsampling), drawn from a seeded generator. */
  subsample: number;
  /** L2 penalty on leaf values (shrinks leaves fitted on few rows). */
  lambda: number;
  seed: number;
  /**
   * Per feature: +1 the prediction may only rise with it, -1 only fall, 0 free. Enforced the way
   * LightGBM's basic method does: a split on a constrained feature must order its children's values,
   * and its children inherit bounds at the midpoint, so every tree (and the sum) is monotone.
   */
  monotone?: number[];
}

export const DEFAULT_PARAMS: GbdtParams = {
  trees: 300,
  depth: 5,
  learningRate: 0.05,
  minLeaf: 8,
  subsample: 0.8,
  lambda: 1,
  seed: 42,
};

/** mulberry32: a tiny seeded generator, so training is reproducible. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

// ONNX evaluates trees in float32: thresholds and inputs are rounded the same way here.
const f32 = Math.fround;

export function predictTree(t: Tree, x: ArrayLike<number>): number {
  let n = 0;
  while (t.feature[n] >= 0) n = f32(x[t.feature[n]]) <= t.threshold[n] ? t.left[n] : t.right[n];
  return t.value[n];
}

export function predictEnsemble(e: Ensemble, x: ArrayLike<number>): number {
  let y = e.base;
  for (const t of e.trees) y += e.learningRate * predictTree(t, x);
  return y;
}

/**
 * The mean of several ensembles fitted to the same features, as one ensemble: the trees side by
 * side, each leaf scaled by 1/K, so ONNX runs it as it runs one fit.
 */
export function averageEnsembles(es: Ensemble[]): Ensemble {
  if (es.length === 1) return es[0];
  const k = es.length;
  const [first] = es;
  if (es.some((e) => e.learningRate !== first.learningRate || e.featureCount !== first.featureCount))
    throw new Error('averageEnsembles: members differ in learning rate or features');
  return {
    base: es.reduce((a, e) => a + e.base, 0) / k,
    learningRate: first.learningRate,
    trees: es.flatMap((e) => e.trees.map((t) => ({ ...t, value: t.value.map((v) => v / k) }))),
    featureCount: first.featureCount,
  };
}

/** Fits an ensemble to rows X (n x d) and targets y. */
export function trainGbdt(X: number[][], y: number[], p: GbdtParams = DEFAULT_PARAMS): Ensemble {
  const n = X.length,
    d = X[0]?.length ?? 0;
  const Xf = X.map((r) => r.map(f32));
  const base = y.reduce((a, b) => a + b, 0) / Math.max(1, n);
  const pred = new Float64Array(n).fill(base);
  // Rows sorted by each feature once, with their values laid out in that order: every split search
  // walks these arrays front to back instead of reading Xf[i][j] row by row in sorted order (with
  // typed per-node scratch, a fit on the shipped rows went from about 2.8 s to 2.0 s).
  const order: Int32Array[] = [];
  const sortedValue: Float64Array[] = [];
  for (let j = 0; j < d; j++) {
    const o = Int32Array.from([...Array(n).keys()].sort((a, b) => Xf[a][j] - Xf[b][j] || a - b));
    order.push(o);
    sortedValue.push(Float64Array.from(o, (i) => Xf[i][j]));
  }
  const { minLeaf, lambda } = p;
  const random = rng(p.seed);
  const trees: Tree[] = [];
  const resid = new Float64Array(n);
  const nodeOf = new Int32Array(n);
  // A tree of depth D has at most 2^(D+1) - 1 nodes: per-node scratch sized once.
  const maxNodes = 2 ** (p.depth + 1);
  const inFrontier = new Uint8Array(maxNodes);
  const S = new Float64Array(maxNodes),
    C = new Float64Array(maxNodes),
    leftSum = new Float64Array(maxNodes),
    leftCnt = new Float64Array(maxNodes),
    lastVal = new Float64Array(maxNodes);
  const bestGain = new Float64Array(maxNodes),
    bestFeature = new Int32Array(maxNodes),
    bestThreshold = new Float64Array(maxNodes),
    bestLeft = new Float64Array(maxNodes),
    bestRight = new Float64Array(maxNodes);

  for (let t = 0; t < p.trees; t++) {
    for (let i = 0; i < n; i++) resid[i] = y[i] - pred[i];
    const inSample = new Uint8Array(n);
    for (let i = 0; i < n; i++) inSample[i] = random() < p.subsample ? 1 : 0;
    const tree: Tree = { feature: [], threshold: [], left: [], right: [], value: [] };
    const newNode = () => {
      tree.feature.push(-1);
      tree.threshold.push(0);
      tree.left.push(-1);
      tree.right.push(-1);
      tree.value.push(0);
      return tree.feature.length - 1;
    };
    newNode();
    const lower: number[] = [-Infinity],
      upper: number[] = [Infinity];
    nodeOf.fill(0);
    let frontier = [0];
    for (let depth = 0; depth <= p.depth; depth++) {
      // Per frontier node: sums for its leaf value, then the best split unless at max depth.
      inFrontier.fill(0);
      for (const node of frontier) inFrontier[node] = 1;
      S.fill(0);
      C.fill(0);
      for (let i = 0; i < n; i++)
        if (inSample[i] && inFrontier[nodeOf[i]]) {
          S[nodeOf[i]] += resid[i];
          C[nodeOf[i]] += 1;
        }
      for (const node of frontier)
        tree.value[node] = clamp(S[node] / (C[node] + p.lambda), lower[node], upper[node]);
      if (depth === p.depth) break;
      bestFeature.fill(-1);
      for (let j = 0; j < d; j++) {
        leftSum.fill(0);
        leftCnt.fill(0);
        lastVal.fill(Number.NaN);
        const o = order[j],
          vals = sortedValue[j];
        const mono = p.monotone?.[j] ?? 0;
        for (let k = 0; k < n; k++) {
          const i = o[k];
          const node = nodeOf[i];
          if (!inSample[i] || !inFrontier[node]) continue;
          const v = vals[k];
          const lc = leftCnt[node];
          const prev = lastVal[node];
          if (v > prev && lc >= minLeaf && C[node] - lc >= minLeaf) {
            const ls = leftSum[node],
              s = S[node],
              c = C[node];
            let ok = true;
            if (mono !== 0) {
              const vl = clamp(ls / (lc + lambda), lower[node], upper[node]);
              const vr = clamp((s - ls) / (c - lc + lambda), lower[node], upper[node]);
              ok = mono > 0 ? vl <= vr : vl >= vr;
            }
            const gain =
              (ls * ls) / (lc + lambda) + ((s - ls) * (s - ls)) / (c - lc + lambda) - (s * s) / (c + lambda);
            if (ok && gain > 1e-12 && (bestFeature[node] < 0 || gain > bestGain[node])) {
              bestGain[node] = gain;
              bestFeature[node] = j;
              bestThreshold[node] = f32((prev + v) / 2);
              bestLeft[node] = ls / (lc + lambda);
              bestRight[node] = (s - ls) / (c - lc + lambda);
            }
          }
          leftSum[node] += resid[i];
          leftCnt[node] = lc + 1;
          lastVal[node] = v;
        }
      }
      const next: number[] = [];
      for (const node of frontier) {
        if (bestFeature[node] < 0) continue;
        tree.feature[node] = bestFeature[node];
        tree.threshold[node] = bestThreshold[node];
        tree.left[node] = newNode();
        tree.right[node] = newNode();
        const mono = p.monotone?.[bestFeature[node]] ?? 0;
        const mid =
          (clamp(bestLeft[node], lower[node], upper[node]) +
            clamp(bestRight[node], lower[node], upper[node])) /
          2;
        lower.push(lower[node], lower[node]);
        upper.push(upper[node], upper[node]);
        if (mono > 0) {
          upper[tree.left[node]] = mid;
          lower[tree.right[node]] = mid;
        }
        if (mono < 0) {
          lower[tree.left[node]] = mid;
          upper[tree.right[node]] = mid;
        }
        next.push(tree.left[node], tree.right[node]);
      }
      if (!next.length) break;
      for (let i = 0; i < n; i++) {
        const node = nodeOf[i];
        if (tree.feature[node] >= 0 && inFrontier[node])
          nodeOf[i] = Xf[i][tree.feature[node]] <= tree.threshold[node] ? tree.left[node] : tree.right[node];
      }
      frontier = next;
    }
    trees.push(tree);
    for (let i = 0; i < n; i++) pred[i] += p.learningRate * predictTree(tree, Xf[i]);
  }
  return { base, learningRate: p.learningRate, trees, featureCount: d };
}
