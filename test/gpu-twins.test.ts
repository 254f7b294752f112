// An unmeasured GPU reads a measured same-die twin's rows as evidence about itself
// (predictor/learned/gpu-twins.ts): the same die, SM count and boost clock, no more memory
// bandwidth. H200-SXM has no row; H100-SXM5 has 1,172. Before, the configurations H100 measured,
// moved to H200, came out 4.7% from the roofline's H200/H100 ratio on average and up to 30.7%
// (Tacotron 2 in FP32 1.31x slower on H200, where the roofline says equal).
import { describe, expect, it } from 'vitest';
import { getGpu, type Measurement } from '../seeds/catalog.js';
import { gpuTwin } from '../predictor/learned/gpu-twins.js';
import { LearnedPredictor } from '../predictor/learned/model.js';
import { correctedMoved } from './moved-configurations.js';

const spec = (id: string) => getGpu(id)!;

describe('same-die twins', async () => {
  const learned = await LearnedPredictor.load();
  const shipped = new Set(learned.meta.evidence.map((e) => e.gpu));

  it('pair a GPU with a measured one of its die, SMs and clock and no more bandwidth, and nothing else', () => {
    expect(gpuTwin(spec('H200-SXM-141GB'), shipped, getGpu)?.id).toBe('H100-SXM5-80GB');
    // A measured GPU is itself; another clock (H100 NVL) or no die named (GH200) has no twin.
    expect(gpuTwin(spec('H100-SXM5-80GB'), shipped, getGpu)).toBeUndefined();
    expect(gpuTwin(spec('H100-NVL-94GB'), shipped, getGpu)).toBeUndefined();
    expect(gpuTwin(spec('GH200'), new Set(['H100-SXM5-80GB']), getGpu)).toBeUndefined();
    // Held out, the A100-SXM4-80GB reads the nearest in bandwidth of the 108-SM, 1,410 MHz GA100s;
    // the 40 GB card reads none of the 80 GB ones (they have more bandwidth).
    const withoutA100_80 = new Set([...shipped].filter((g) => g !== 'A100-SXM4-80GB'));
    expect(gpuTwin(spec('A100-SXM4-80GB'), withoutA100_80, getGpu)?.id).toBe('A100-PCIE-80GB');
    expect(
      gpuTwin(spec('A100-SXM4-40GB'), new Set(['A100-SXM4-80GB', 'A100-PCIE-80GB']), getGpu),
    ).toBeUndefined();
  });

  it("H200 answers the configurations H100 measured at the roofline's ratio to H100's, and says whose rows it read", async () => {
    const moved = (r: Measurement) => ({ ...r, gpu: 'H200-SXM-141GB' });
    const c = await correctedMoved(learned, (r) => r.gpu === 'H100-SXM5-80GB', moved);
    const [pairs, h100, h200, gaps] = [c.pairs, c.asMeasured, c.moved, c.gaps];
    expect(pairs.length).toBeGreaterThan(1000);
    expect(gaps.reduce((a, b) => a + b, 0) / gaps.length).toBeLessThan(0.02);
    expect(Math.max(...gaps)).toBeLessThan(0.08);
    expect(h200.caseOf(0)).toMatch(
      /^(measured|calibrated): .*on H100-SXM5-80GB.*; H200-SXM-141GB read as H100-SXM5-80GB by the evidence/,
    );
    expect(h100.caseOf(0)).not.toMatch(/read as/);
    // Still an unmeasured GPU: its level and its interval say so.
    expect(h200.levels[0]).toBe('UNMEASURED');
    const wider = pairs.filter((_, i) => h200.hi[i] / h200.mid[i] > h100.hi[i] / h100.mid[i] + 1e-9);
    // (A floored step's interval moves with its floor's: within 0.1%.)
    const narrower = pairs.filter((_, i) => h200.hi[i] / h200.mid[i] < (h100.hi[i] / h100.mid[i]) * 0.999);
    expect(narrower).toEqual([]);
    expect(wider.length).toBeGreaterThan(pairs.length / 2);
  });
});
