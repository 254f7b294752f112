// A measured model in a precision none of its rows ran. ResNet-50 ran in FP32, TF32, AMP_FP16 and
// pure FP16 (Lambda, DeepLearningExamples), never in BF16 or apex-O2 FP16, so for those the trees have
// no evidence at the precision and answer from other models' rows in it: at batch 256 that made a
// BF16 ResNet-50 1.17x (GH200) to 1.21x (H100) faster than its AMP run, with a measured
// combination's interval. Such an estimate now says so and takes the held-out errors of whole
// (model, precision) pairs (cli/train-predictor.ts).
import { describe, expect, it } from 'vitest';
import { getGpu, loadEfficiency, loadMeasurements } from '../seeds/catalog.js';
import { LearnedPredictor } from '../predictor/learned/model.js';
import { recommendCorrected } from '../optimizer/recommend-corrected.js';
import { getModel } from '../predictor/zoo/index.js';
import { folds, type Example } from '../predictor/learned/train.js';
import { logInterval, predictZoo } from './zoo-prediction.js';

describe('a precision the model was never measured in', async () => {
  const learned = await LearnedPredictor.load();
  const iv = learned.meta.intervals;
  // Batch 512 keeps ResNet-50's host part under a tenth of the step (no host-bound widening).
  const resnet = (precision: 'BF16' | 'FP16' | 'AMP_FP16' | 'AMP_BF16') =>
    predictZoo(learned, { model: 'resnet50_v1.5', gpu: 'H100-SXM5-80GB', precision, batchSizePerGpu: 512 });

  it("ships the held-out intervals of whole (model, precision) pairs, wider than a measured combination's", () => {
    const pair = iv.unmeasuredPrecision!;
    // Held out as whole pairs, 16-bit estimates run long (the step up to 1.5x) and FP32 ones short.
    expect(pair.reduced.rows).toBeGreaterThan(500);
    expect(pair.fp32.rows).toBeGreaterThan(500);
    expect(pair.reduced.q90).toBeGreaterThan(iv.measuredModel.q90);
    expect(pair.fp32.q10).toBeLessThan(iv.measuredModel.q10);
    expect(pair.reduced.q90).toBeGreaterThan(pair.fp32.q90);
  });

  it('ResNet-50 in BF16 or apex-O2 FP16 says no run of it is measured and takes that interval; AMP does not', async () => {
    for (const precision of ['BF16', 'FP16'] as const) {
      const p = await resnet(precision);
      expect(p.evidence).toContain(`no run of this model at ${precision} is measured on any GPU`);
      const { lo, hi } = logInterval(p);
      expect(lo).toBeLessThanOrEqual(iv.unmeasuredPrecision!.reduced.q10 + 1e-9);
      expect(hi).toBeGreaterThanOrEqual(iv.unmeasuredPrecision!.reduced.q90 - 1e-9);
      expect(p.precisionUnmeasured).toBe(true);
    }
    // Inception-v3 has no row labelled TF32, but its FP32 rows on A100s and H100s ran TF32 matmuls.
    const tf32 = await predictZoo(learned, {
      model: 'inception_v3',
      gpu: 'A100-SXM4-80GB',
      precision: 'TF32',
      batchSizePerGpu: 256,
    });
    expect(tf32.precisionUnmeasured).toBe(false);
    expect(tf32.evidence).not.toContain('no run of this model at');
    // AMP_BF16 reads AMP_FP16's rows (precision-twins.ts): measured, as AMP_FP16 is.
    for (const precision of ['AMP_FP16', 'AMP_BF16'] as const) {
      const p = await resnet(precision);
      expect(p.evidence).not.toContain('no run of this model at');
      expect(p.precisionUnmeasured).toBe(false);
      const { lo, hi } = logInterval(p);
      expect(hi - lo).toBeLessThan(iv.unmeasuredPrecision!.reduced.q90 - iv.unmeasuredPrecision!.reduced.q10);
    }
  });

  it('recommend marks such plans and warns when plan 1 is one; a model no row ran is another case', async () => {
    const req = {
      model: getModel('resnet50_v1.5')!,
      samples: 1e8,
      objective: 'COST' as const,
      gpus: [getGpu('H100-SXM5-80GB')!],
      maxNodes: 1,
      gpusPerNodeChoices: [1],
      batchSizes: [256, 512],
      interNodeGbps: () => 400,
      limit: 10,
    };
    const learnedState = { predictor: learned, reason: '' };
    const eff = loadEfficiency();
    const bf16 = await recommendCorrected({ ...req, precisions: ['BF16' as const] }, learnedState, eff);
    expect(bf16.plans.length).toBeGreaterThan(0);
    for (const p of bf16.plans) expect(p.precisionUnmeasured).toBe(true);
    expect(bf16.notes.join('\n')).toMatch(
      /plan 1 trains resnet50_v1.5 in BF16, which none of its measurements ran/,
    );
    const amp = await recommendCorrected({ ...req, precisions: ['AMP_FP16' as const] }, learnedState, eff);
    for (const p of amp.plans) expect(p.precisionUnmeasured).toBe(false);
    expect(amp.notes.join('\n')).not.toMatch(/none of its measurements ran/);
    // GPT-2 has no benchmark rows at all: an unmeasured model (its own, wider case), not this one.
    const gpt2 = await recommendCorrected(
      { ...req, model: getModel('gpt2_124m')!, samples: 1e9, batchSizes: [8], precisions: ['BF16' as const] },
      learnedState,
      eff,
    );
    for (const p of gpt2.plans) expect(p.precisionUnmeasured).toBe(false);
  });

  it("the split holds every GPU's rows of a (model, precision) pair in one fold and a model's precisions in different folds", () => {
    const ex = loadMeasurements().map((row) => ({ row }) as Example);
    const fs = folds(ex, 'precision');
    expect(fs).toHaveLength(10);
    const foldOf = new Map<string, number>();
    fs.forEach((fold, f) =>
      fold.forEach((i) => {
        const pair = `${ex[i].row.model}|${ex[i].row.precision}`;
        expect(foldOf.get(pair) ?? f).toBe(f);
        foldOf.set(pair, f);
      }),
    );
    expect(fs.flat()).toHaveLength(ex.length);
    const byModel = new Map<string, number[]>();
    for (const [pair, f] of foldOf) {
      const model = pair.slice(0, pair.lastIndexOf('|'));
      byModel.set(model, [...(byModel.get(model) ?? []), f]);
    }
    // ResNet-50 v1.5 ran in four precisions: four different folds.
    expect(byModel.get('resnet50_v1.5')).toHaveLength(4);
    for (const f of byModel.values()) expect(new Set(f).size).toBe(f.length);
  });
});
