// Per-layer computational features: FLOPs, parameters, elements moved, kernels. Computed from the
// layer's dimensions only; every figure the predictor uses about a model starts here.
import type { Layer, LayerCost, ModelCost, ModelDef, OpClass } from './types.js';

const pair = (v: number | [number, number]): [number, number] => (Array.isArray(v) ? v : [v, v]);

/** Output side of a convolution or pooling window. */
export function convOut(size: number, kernel: number, stride: number, padding: number, dilation = 1): number {
  return Math.floor((size + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1;
}

/** Cost of ONE instance of a layer for ONE sample. */
export function layerCost(layer: Layer): LayerCost {
  const base = {
    name: layer.name ?? layer.type,
    type: layer.type,
    ...('kind' in layer ? { kind: layer.kind } : {}),
    ...('steps' in layer && layer.steps !== undefined ? { steps: layer.steps } : {}),
    ...(layer.frozen ? { frozen: true } : {}),
    ...(layer.sameInputAs ? { sameInputAs: layer.sameInputAs } : {}),
    count: layer.count ?? 1,
  };
  const cost = (
    opClass: OpClass,
    forwardFlops: number,
    backwardFlops: number,
    parameters: number,
    inputElements: number,
    outputElements: number,
    kernels: number,
    kernelFlops = forwardFlops,
  ): LayerCost => ({
    ...base,
    opClass,
    forwardFlops,
    backwardFlops,
    parameters,
    inputElements,
    outputElements,
    kernels,
    kernelFlops,
  });

  // A GEMM-like layer: backward computes the data and the weight gradient, each as costly as the
  // forward. Over `steps` (an autoregressive decoder's per-step layer) it is one small kernel per
  // step, not one long one.
  const gemm = (macs: number, parameters: number, inputs: number, outputs: number, steps = 1) =>
    cost('matmul', 2 * macs, 4 * macs, parameters, inputs, outputs, steps, (2 * macs) / steps);

  switch (layer.type) {
    case 'conv2d': {
      const [kh, kw] = pair(layer.kernel);
      const [ph, pw] = pair(layer.padding ?? 0);
      const stride = layer.stride ?? 1;
      const groups = layer.groups ?? 1;
      const oh = convOut(layer.inH, kh, stride, ph);
      const ow = convOut(layer.inW, kw, stride, pw);
      const weights = (layer.inC / groups) * kh * kw * layer.outC;
      const bias = layer.bias ? layer.outC : 0;
      const macs = oh * ow * weights;
      return gemm(macs, weights + bias, layer.inC * layer.inH * layer.inW, layer.outC * oh * ow);
    }
    case 'conv1d': {
      const stride = layer.stride ?? 1;
      const groups = layer.groups ?? 1;
      const ol = convOut(layer.inL, layer.kernel, stride, layer.padding ?? 0, layer.dilation ?? 1);
      const weights = (layer.inC / groups) * layer.kernel * layer.outC;
      const bias = layer.bias ? layer.outC : 0;
      const macs = ol * weights;
      return gemm(macs, weights + bias, layer.inC * layer.inL, layer.outC * ol, layer.steps);
    }
    case 'linear': {
      const tokens = layer.tokens ?? 1;
      const weights = layer.inFeatures * layer.outFeatures;
      const bias = layer.bias === false ? 0 : layer.outFeatures;
      const macs = tokens * weights;
      if ((layer.experts ?? 1) > 1) {
        // Each routed token passes one expert's weights; the E experts' GEMMs run as one grouped GEMM
        // whose per-expert problems (1/E of the routed tokens each, balanced) set its efficiency.
        const E = layer.experts!;
        return {
          ...gemm(macs, E * (weights + bias), tokens * layer.inFeatures, tokens * layer.outFeatures),
          kernelFlops: (2 * macs) / E,
          experts: E,
        };
      }
      const linear = gemm(
        macs,
        layer.tied ? 0 : weights + bias,
        tokens * layer.inFeatures,
        tokens * layer.outFeatures,
        layer.steps,
      );
      return {
        ...linear,
        ...(layer.router ? { router: true } : {}),
        ...((layer.projections ?? 1) > 1 ? { projections: layer.projections } : {}),
      };
    }
    case 'matmul': {
      const batches = layer.batches ?? 1;
      const macs = batches * layer.m * layer.n * layer.k;
      const shared = layer.sharedRight ? { sharedInputElements: batches * layer.k * layer.n } : {};
      // Scores (m queries x n keys) or context (m queries x k keys): the keys are the longer side.
      const causal = layer.causal ? { causalKeys: Math.max(layer.n, layer.k) } : {};
      return {
        ...gemm(macs, 0, batches * (layer.m * layer.k + layer.k * layer.n), batches * layer.m * layer.n),
        ...shared,
        ...causal,
      };
    }
    case 'embedding': {
      const out = layer.tokens * layer.dim;
      // Gather forward, scatter-add of the gradient backward: memory-bound, no math worth counting.
      return cost('gather', 0, out, layer.vocab * layer.dim, layer.tokens, out, 1, 0);
    }
    case 'norm': {
      const e = layer.elements;
      const affine = layer.kind === 'rmsnorm' ? layer.channels : 2 * layer.channels;
      // mean, variance, normalize, scale and shift ~ 8 FLOPs per element forward, ~2x backward.
      return cost('reduction', 8 * e, 16 * e, affine, e, e, layer.kind === 'batchnorm' ? 1 : 1);
    }
    case 'activation': {
      const e = layer.elements;
      const flopsPerElement =
        layer.kind === 'relu' ? 1 : layer.kind === 'gelu' || layer.kind === 'gelu_new' ? 8 : 4;
      return cost('pointwise', flopsPerElement * e, 2 * flopsPerElement * e, 0, e, e, 1);
    }
    case 'elementwise': {
      const e = layer.elements;
      const inputs = layer.inputs ?? (layer.kind === 'add' || layer.kind === 'mul' ? 2 : 1);
      // A broadcast operand (inputs not whole) is read at its own size, but a product's backward
      // forms its gradient at the output's size before summing it down: one map per operand.
      const operands = Math.ceil(inputs - 1e-9);
      return {
        ...cost('pointwise', e, e, 0, inputs * e, e, 1),
        ...(layer.kind === 'mul' && operands > inputs ? { gradientElements: operands * e } : {}),
      };
    }
    case 'softmax': {
      const e = layer.elements;
      return cost('reduction', 5 * e, 4 * e, 0, e, e, 1);
    }
    case 'pool': {
      const p = layer.padding ?? 0;
      const global = layer.kind === 'global_avg';
      const oh = global ? 1 : convOut(layer.inH, layer.kernel, layer.stride, p);
      const ow = global ? 1 : convOut(layer.inW, layer.kernel, layer.stride, p);
      const window = global ? layer.inH * layer.inW : layer.kernel * layer.kernel;
      const out = layer.channels * oh * ow;
      const inputs = layer.channels * layer.inH * layer.inW;
      return cost('pointwise', out * window, inputs, 0, inputs, out, 1);
    }
    case 'rnn': {
      const gates = layer.cell === 'lstm' ? 4 : 3;
      const dirs = layer.bidirectional ? 2 : 1;
      const weights = dirs * gates * layer.hiddenSize * (layer.inputSize + layer.hiddenSize);
      const bias = dirs * gates * 2 * layer.hiddenSize; // cuDNN keeps two bias vectors per gate
      const macs = layer.steps * weights;
      const out = dirs * layer.steps * layer.hiddenSize;
      // The input projection is one big GEMM and the recurrent one a small GEMM per time step; a
      // stepwise cell (PyTorch's LSTMCell: input GEMM, hidden GEMM, fused gate kernel) runs three
      // kernels per step, its two GEMMs together as large as one step's share of the weights.
      const stepMacs = dirs * gates * layer.hiddenSize * layer.hiddenSize;
      const stepwise = layer.stepwiseInput === true;
      return cost(
        'matmul',
        2 * macs,
        4 * macs,
        weights + bias,
        layer.steps * layer.inputSize,
        out * (gates + 1),
        stepwise ? 3 * dirs * layer.steps : 1 + dirs * layer.steps,
        stepwise ? macs / (dirs * layer.steps) : 2 * stepMacs,
      );
    }
    case 'loss': {
      const e = layer.elements;
      return cost('reduction', 4 * e, 2 * e, 0, e, 1, 2);
    }
  }
}

/** Totals per sample over all layers (each layer counted `count` times). */
export function modelCost(model: Pick<ModelDef, 'layers' | 'attention'>): ModelCost {
  const layers = model.layers.map(layerCost);
  let parameters = 0,
    forwardFlops = 0,
    backwardFlops = 0,
    activationElements = 0;
  for (const l of layers) {
    parameters += l.parameters * l.count;
    forwardFlops += l.forwardFlops * l.count;
    backwardFlops += l.backwardFlops * l.count;
    activationElements += l.outputElements * l.count;
  }
  return {
    parameters,
    forwardFlops,
    backwardFlops,
    activationElements,
    layers,
    ...(model.attention ? { attention: model.attention } : {}),
  };
}
