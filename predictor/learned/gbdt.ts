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

/** Fits an ensemble to rows X (n x d) and targets y. */
export function trainGbdt(X: number[][], y: number[], p: GbdtParams = DEFAULT_PARAMS): Ensemble {
  const n = X.length,
    d = X[0]?.length ?? 0;
  const Xf = X.map((r) => r.map(f32));
  const base = y.reduce((a, b) => a + b, 0) / Math.max(1, n);
  const pred = new Float64Array(n).fill(base);
  // Rows sorted by each feature once; every split search walks these orders.
  const order: Int32Array[] = [];
  for (let j = 0; j < d; j++)
    order.push(Int32Array.from([...Array(n).keys()].sort((a, b) => Xf[a][j] - Xf[b][j] || a - b)));
  const random = rng(p.seed);
  const trees: Tree[] = [];
  const resid = new Float64Array(n);
  const nodeOf = new Int32Array(n);

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
      const sum = new Map<number, number>(),
        cnt = new Map<number, number>();
      for (let i = 0; i < n; i++)
        if (inSample[i] && frontier.includes(nodeOf[i])) {
          sum.set(nodeOf[i], (sum.get(nodeOf[i]) ?? 0) + resid[i]);
          cnt.set(nodeOf[i], (cnt.get(nodeOf[i]) ?? 0) + 1);
        }
      for (const node of frontier)
        tree.value[node] = clamp(
          (sum.get(node) ?? 0) / ((cnt.get(node) ?? 0) + p.lambda),
          lower[node],
          upper[node],
        );
      if (depth === p.depth) break;
      const best = new Map<
        number,
        { gain: number; feature: number; threshold: number; left: number; right: number }
      >();
      const maxNodes = tree.feature.length;
      const inFrontier = new Uint8Array(maxNodes);
      for (const node of frontier) inFrontier[node] = 1;
      const S = new Float64Array(maxNodes),
        C = new Float64Array(maxNodes);
      for (const node of frontier) {
        S[node] = sum.get(node) ?? 0;
        C[node] = cnt.get(node) ?? 0;
      }
      const leftSum = new Float64Array(maxNodes),
        leftCnt = new Float64Array(maxNodes),
        lastVal = new Float64Array(maxNodes);
      for (let j = 0; j < d; j++) {
        leftSum.fill(0);
        leftCnt.fill(0);
        lastVal.fill(Number.NaN);
        for (const i of order[j]) {
          const node = nodeOf[i];
          if (!inSample[i] || !inFrontier[node]) continue;
          const v = Xf[i][j];
          const lc = leftCnt[node];
          const prev = lastVal[node];
          if (v > prev && lc >= p.minLeaf && C[node] - lc >= p.minLeaf) {
            const ls = leftSum[node],
              s = S[node],
              c = C[node];
            const mono = p.monotone?.[j] ?? 0;
            let ok = true;
            if (mono !== 0) {
              const vl = clamp(ls / (lc + p.lambda), lower[node], upper[node]);
              const vr = clamp((s - ls) / (c - lc + p.lambda), lower[node], upper[node]);
              ok = mono > 0 ? vl <= vr : vl >= vr;
            }
            const gain =
              (ls * ls) / (lc + p.lambda) +
              ((s - ls) * (s - ls)) / (c - lc + p.lambda) -
              (s * s) / (c + p.lambda);
            const b = best.get(node);
            if (ok && gain > 1e-12 && (!b || gain > b.gain))
              best.set(node, {
                gain,
                feature: j,
                threshold: f32((prev + v) / 2),
                left: ls / (lc + p.lambda),
                right: (s - ls) / (c - lc + p.lambda),
              });
          }
          leftSum[node] += resid[i];
          leftCnt[node] = lc + 1;
          lastVal[node] = v;
        }
      }
      const frontierSet = new Set(frontier);
      const next: number[] = [];
      for (const node of frontier) {
        const b = best.get(node);
        if (!b) continue;
        tree.feature[node] = b.feature;
        tree.threshold[node] = b.threshold;
        tree.left[node] = newNode();
        tree.right[node] = newNode();
        const mono = p.monotone?.[b.feature] ?? 0;
        const mid = (clamp(b.left, lower[node], upper[node]) + clamp(b.right, lower[node], upper[node])) / 2;
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
        if (tree.feature[node] >= 0 && frontierSet.has(node))
          nodeOf[i] = Xf[i][tree.feature[node]] <= tree.threshold[node] ? tree.left[node] : tree.right[node];
      }
      frontier = next;
    }
    trees.push(tree);
    for (let i = 0; i < n; i++) pred[i] += p.learningRate * predictTree(tree, Xf[i]);
  }
  return { base, learningRate: p.learningRate, trees, featureCount: d };
}
