import { describe, expect, it } from 'vitest';
import { getGpu } from '../seeds/catalog.js';
import {
  achievableBasis,
  allReduceLinkFraction,
  attentionFlops,
  gemmBasis,
  gemmSeconds,
  memoryFraction,
} from '../predictor/achievable.js';
import type { GpuSpec } from '../predictor/types.js';

const gpu = (id: string): GpuSpec => getGpu(id)!;
const tflops = (g: GpuSpec, m: number, n: number, k: number) =>
  (2 * m * n * k) / gemmSeconds(g, 'bf16', 2 * m * n * k, g.peakTflops.bf16!) / 1e12;

describe('achievable GEMM rates (measured kernels, not datasheet peaks)', () => {
  it('a 1024^3 BF16 GEMM is barely faster on B200 than on H100, although its peak is 2.3x', () => {
    const h100 = gpu('H100-SXM5-80GB'),
      b200 = gpu('B200');
    // XLA's perf table: 253 TFLOPS on H100 and 288 on B200 for this shape (b = 1); the curve is the
    // median over b = 1, 2, 4 shapes of about the same work.
    expect(tflops(h100, 1024, 1024, 1024)).toBeGreaterThan(200);
    expect(tflops(h100, 1024, 1024, 1024)).toBeLessThan(290);
    const ratio = tflops(b200, 1024, 1024, 1024) / tflops(h100, 1024, 1024, 1024);
    expect(ratio).toBeGreaterThan(1);
    expect(ratio).toBeLessThan(1.5);
    expect(b200.peakTflops.bf16! / h100.peakTflops.bf16!).toBeGreaterThan(2.2);
  });

  it('small GEMMs are latency-bound at about 5 us on every GPU', () => {
    for (const id of ['H100-SXM5-80GB', 'B200', 'MI300X', 'A100-SXM4-80GB', 'V100-SXM2-16GB', 'GB300']) {
      const us = gemmSeconds(gpu(id), 'bf16', 2 * 256 ** 3, gpu(id).peakTflops.bf16 ?? 125) * 1e6;
      expect(us).toBeGreaterThan(3.5);
      expect(us).toBeLessThan(8);
    }
  });

  it('large GEMMs approach the best measured fraction of peak, never the peak itself', () => {
    const h100 = gpu('H100-SXM5-80GB');
    const eff = tflops(h100, 16384, 16384, 16384) / h100.peakTflops.bf16!;
    expect(eff).toBeGreaterThan(0.7);
    expect(eff).toBeLessThan(0.85); // stas00's MAMF: 794.5 of 989 TFLOPS (80.3%)
  });

  it('more peak never makes a GEMM slower (the curve is non-decreasing in ideal time)', () => {
    const h100 = gpu('H100-SXM5-80GB');
    for (let e = 6; e <= 14; e += 0.5) {
      const flops = 10 ** e;
      expect(gemmSeconds(h100, 'bf16', flops, 1500)).toBeLessThanOrEqual(
        gemmSeconds(h100, 'bf16', flops, 989.4),
      );
    }
  });

  it('a GPU without a table uses the nearest measured one, scaled by its own datasheet peak, and says so', () => {
    const h200 = gpu('H200-SXM-141GB');
    expect(gemmBasis(h200, 'bf16')).toMatchObject({ table: 'H100', measured: false });
    expect(gemmBasis(gpu('H100-SXM5-80GB'), 'bf16').measured).toBe(true);
    expect(gemmBasis(gpu('GB300'), 'bf16').table).toBe('B200');
    expect(achievableBasis(gpu('B300'), 'bf16')).toMatch(
      /B200's measured bf16 kernels scaled by B300's datasheet bf16 peak/,
    );
    expect(achievableBasis(gpu('B200'), 'fp4')).toMatch(/no FP4 kernel measured/);
    expect(achievableBasis(gpu('H100-SXM5-80GB'), 'bf16')).toMatch(
      /GEMM rates measured on H100-SXM5-80GB; memory bandwidth measured; all-reduce measured; fused attention rate measured/,
    );
  });

  it("fused attention runs at FlashAttention-2's measured rate, or at the fraction of peak it reached on the nearest measured GPU", () => {
    const h100 = attentionFlops(gpu('H100-SXM5-80GB'))!;
    expect(h100).toEqual({ flops: 327.9e12, measuredOn: 'H100-SXM5-80GB' });
    // Well below a large BF16 GEMM on the same GPU: softmax and rescaling share the SMs.
    expect(h100.flops / (gpu('H100-SXM5-80GB').peakTflops.bf16! * 1e12)).toBeLessThan(0.4);
    const h100pcie = attentionFlops(gpu('H100-PCIE-80GB'))!;
    expect(h100pcie.measuredOn).toBe('H100-SXM5-80GB');
    expect(h100pcie.flops / h100.flops).toBeCloseTo(
      gpu('H100-PCIE-80GB').peakTflops.bf16! / gpu('H100-SXM5-80GB').peakTflops.bf16!,
      3,
    );
    expect(attentionFlops(gpu('B300'))!.measuredOn).toBe('GB200');
    expect(achievableBasis(gpu('B300'), 'bf16')).toMatch(/FlashAttention-2 reached on GB200/);
    // No 16-bit tensor peak (Pascal): no fused-attention rate; the GEMM curve answers.
    expect(attentionFlops(gpu('GTX-1080Ti'))).toBeNull();
  });
});

describe('achievable memory bandwidth and all-reduce', () => {
  it('memory bandwidth is the STREAM Triad fraction measured on the GPU, or on its nearest measured one', () => {
    // Azure ND H100 v5 BabelStream Triad 2.97 TB/s of 3.35.
    expect(memoryFraction(gpu('H100-SXM5-80GB')).fraction).toBeCloseTo(2970 / 3350, 3);
    expect(memoryFraction(gpu('B200')).measuredOn).toBe('H100-SXM5-80GB');
    expect(memoryFraction(gpu('MI300X')).fraction).toBeLessThan(
      memoryFraction(gpu('H100-SXM5-80GB')).fraction,
    );
  });

  it('all-reduce bus bandwidth grows with message size: small messages are latency-bound', () => {
    const h100 = gpu('H100-SXM5-80GB');
    const small = allReduceLinkFraction(h100, 1 << 20),
      large = allReduceLinkFraction(h100, 1 << 30);
    // nccl-tests on 8x H100: 43.7 GB/s at 1 MiB, 466 GB/s at 1 GiB (NVLink SHARP; 450 GB/s per direction).
    expect(small * 450).toBeCloseTo(43.7, 0);
    expect(large * 450).toBeCloseTo(466.35, 0);
    expect(allReduceLinkFraction(h100, 1)).toBeLessThan(small);
  });
});
