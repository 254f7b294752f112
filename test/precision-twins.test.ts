// A precision no training row ran is read by the learned correction as its twin (AMP_BF16 as
// AMP_FP16, FP4 as FP8: predictor/learned/precision-twins.ts), so the trees never answer from a
// column that was 0 on every row they were fitted on; the roofline under them prices the precision
// itself. Before, over the AMP_FP16 rows, the same configurations in AMP_BF16 came out at 0.919 of
// AMP_FP16's step (0.55 at worst) where the roofline says 0.984 (bench/precision-twins.ts).
import { describe, expect, it } from 'vitest';
import { loadMeasurements } from '../seeds/catalog.js';
import { fittedLlmRuns } from '../seeds/llm.js';
import { LearnedPredictor } from '../predictor/learned/model.js';
import { featureNames } from '../predictor/learned/features.js';
import { correctionPrecision, LEARNED_PRECISIONS, TRAINED_AS } from '../predictor/learned/precision-twins.js';
import { PRECISIONS } from '../predictor/types.js';
import { predictZoo } from './zoo-prediction.js';
import { correctedMoved } from './moved-configurations.js';

describe('precisions the learned correction reads as their twin', async () => {
  const learned = await LearnedPredictor.load();

  it('every precision with a column of its own has training rows; no precision read as a twin has one', () => {
    const trained = new Set<string>([
      ...loadMeasurements().map((r) => r.precision),
      ...fittedLlmRuns().map((r) => r.precision),
    ]);
    for (const p of LEARNED_PRECISIONS) expect(trained.has(p), p).toBe(true);
    for (const p of Object.keys(TRAINED_AS)) expect(trained.has(p), p).toBe(false);
    // Each twin has a column; every precision is one or the other.
    for (const t of Object.values(TRAINED_AS)) expect(LEARNED_PRECISIONS).toContain(t!.as);
    expect(PRECISIONS.every((p) => LEARNED_PRECISIONS.includes(correctionPrecision(p)))).toBe(true);
    expect(learned.meta.featureNames).toEqual(featureNames(true));
    expect(learned.meta.featureNames).not.toContain('precision_AMP_BF16');
  });

  it("an AMP_BF16 configuration moves from AMP_FP16's by the roofline's ratio, and says what it was read as", async () => {
    const {
      pairs,
      asMeasured: fp16,
      moved: bf16,
      gaps,
    } = await correctedMoved(
      learned,
      (r) => r.precision === 'AMP_FP16',
      (r) => ({ ...r, precision: 'AMP_BF16' }),
    );
    const gpus = new Set(pairs.map((e) => e.row.gpu));
    expect(pairs.length).toBeGreaterThan(300);
    expect(gpus.size).toBeGreaterThan(10);
    // The correction's factor (on each one's own roofline step) is AMP_FP16's up to what the
    // roofline's breakdown feeds the trees (its step and its shares differ by the loss scaling).
    expect(gaps.reduce((a, b) => a + b, 0) / gaps.length).toBeLessThan(0.01);
    expect(Math.max(...gaps)).toBeLessThan(0.05);
    expect(bf16.caseOf(0)).toMatch(
      /^(measured|calibrated|unmeasured): .*; AMP_BF16 read as AMP_FP16 by the learned correction/,
    );
    expect(fp16.caseOf(0)).not.toMatch(/read as/);
    // The evidence names the precision whose rows it is (the rows ran AMP_FP16, not AMP_BF16).
    const measured = Array.from(bf16.mid, (_, i) => bf16.caseOf(i)).filter((c) => c.startsWith('measured:'));
    expect(measured.length).toBeGreaterThan(300);
    for (const c of measured)
      expect(c).toMatch(/^measured: this model is in the measurements on .* at AMP_FP16 /);
    // The same interval as AMP_FP16's measured rows.
    expect(bf16.hi[0] / bf16.mid[0]).toBeCloseTo(fp16.hi[0] / fp16.mid[0], 6);
  });

  it('FP4, on the GPUs with an FP4 rate, is read as FP8 and says so', async () => {
    const at = (precision: 'FP4' | 'FP8') =>
      predictZoo(learned, { model: 'gpt2_124m', gpu: 'B200', precision, batchSizePerGpu: 16 });
    const [fp4, fp8] = await Promise.all([at('FP4'), at('FP8')]);
    expect(fp4.evidence).toMatch(/; FP4 read as FP8 by the learned correction \(no FP4 run is measured/);
    expect(fp4.evidence).toMatch(/no FP4 kernel is measured either/);
    expect(fp8.evidence).not.toMatch(/read as/);
    // The roofline prices FP4's rate; the correction is FP8's up to what that moves in its features.
    expect(fp4.stepTimeMs).toBeLessThan(fp8.stepTimeMs);
  });
});
