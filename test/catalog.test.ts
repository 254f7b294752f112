import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import {
  getGpu,
  loadExcludedMeasurements,
  loadGpus,
  currentListings,
  loadInstances,
  loadMeasurements,
  measurementFromRow,
  parseCsv,
} from '../seeds/catalog.js';
import { longerButFasterPerToken } from '../seeds/measurement-checks.js';

describe('seeds: GPU catalog', () => {
  const gpus = loadGpus();
  it('loads every row of gpus.csv', () => {
    const rows = parseCsv(readFileSync(new URL('../seeds/gpus.csv', import.meta.url), 'utf8'));
    expect(gpus.length).toBe(rows.length);
    expect(gpus.length).toBeGreaterThanOrEqual(53);
    expect(new Set(gpus.map((g) => g.id)).size).toBe(gpus.length);
  });

  it('keeps dense datasheet peaks and leaves unknown cells null', () => {
    const h100 = getGpu('H100-SXM5-80GB')!;
    expect(h100.peakTflops).toEqual({
      fp32: 67,
      tf32: 494.7,
      fp16: 989.4,
      bf16: 989.4,
      fp8: 1978.9,
      fp4: null,
    });
    expect(h100.memoryGb).toBe(80);
    expect(h100.memoryBwGbps).toBe(3350);
    expect(h100.generation).toBe('hopper');
    const v100 = getGpu('V100-SXM2-16GB')!;
    expect(v100.peakTflops.bf16).toBeNull();
    expect(v100.peakTflops.tf32).toBeNull();
    expect(v100.generation).toBe('volta');
  });

  it('fits plans in the memory CUDA gives a process, from a sourced figure where one exists, else the label', () => {
    const rows = parseCsv(readFileSync(new URL('../seeds/gpu-memory.csv', import.meta.url), 'utf8'));
    expect(rows.length).toBeGreaterThanOrEqual(15);
    for (const r of rows) {
      const g = getGpu(r.gpu)!;
      expect(g, r.gpu).toBeDefined();
      // Each figure says what reported it, where, in the source's own words, and how it became MiB.
      for (const k of ['reported_by', 'source', 'quote', 'derivation'])
        expect(r[k], `${r.gpu} ${k}`).not.toBe('');
      expect(g.usableMemoryGb).toBeCloseTo(Number(r.usable_mib) / 1024, 9);
      expect(g.usableMemoryGb).toBeLessThanOrEqual(g.memoryGb);
      expect(g.usableMemorySource).toContain(r.source);
    }
    // An "80 GB" H100: 85,045,477,376 bytes as CUDA's deviceQuery reports them, 79.2 GiB; a 16 GB T4 14.8.
    expect(getGpu('H100-SXM5-80GB')!.usableMemoryGb).toBeCloseTo(85045477376 / 2 ** 30, 9);
    expect(getGpu('T4')!.usableMemoryGb).toBeCloseTo(14.76, 2);
    // A GPU no source gives the figure for is taken at its label, and says so.
    const listed = new Set(rows.map((r) => r.gpu));
    const unlisted = gpus.filter((g) => !listed.has(g.id));
    expect(unlisted.length).toBeGreaterThan(0);
    for (const g of unlisted) {
      expect(g.usableMemoryGb).toBe(g.memoryGb);
      expect(g.usableMemorySource).toMatch(/^the vendor label/);
    }
  });

  it('has the Blackwell systems with no measurements: GB200, B300, GB300 with their sourced figures', () => {
    const gb200 = getGpu('GB200')!,
      b300 = getGpu('B300')!,
      gb300 = getGpu('GB300')!;
    // GB200 NVL72 rack figures / 72 / 2 (sparse footnote); superchip 372 GB, 16 TB/s / 2 GPUs.
    expect(gb200.peakTflops).toEqual({ fp32: 90, tf32: 1250, fp16: 2500, bf16: 2500, fp8: 5000, fp4: 10000 });
    expect([gb200.memoryGb, gb200.memoryBwGbps, gb200.tdpW]).toEqual([186, 8000, 1200]);
    expect(b300.peakTflops).toEqual({ fp32: 75, tf32: 1125, fp16: 2250, bf16: 2250, fp8: 4500, fp4: 13125 });
    expect(b300.memoryGb).toBe(288);
    expect(b300.int8Tops).toBeNull(); // sources disagree (4,500 vs 150): left empty
    expect(gb300.peakTflops.fp4).toBe(15000);
    expect(gb300.fp64Tflops).toBeNull();
    expect(getGpu('B200')!.peakTflops.fp4).toBe(9000);
    for (const g of [gb200, b300, gb300]) {
      expect(g.generation).toBe('blackwell');
      expect(g.hasNvlinkFabric).toBe(true);
      expect(g.priceUsdPerGpuHour).toBeNull();
    }
  });

  it('derives a missing intra-node bandwidth from the link name and says so', () => {
    const t4 = getGpu('T4')!;
    expect(t4.intraNodeBwGbpsBidir).toBe(32);
    expect(t4.intraNodeBwSource).toMatch(/derived/);
    const a100 = getGpu('A100-SXM4-80GB')!;
    expect(a100.intraNodeBwGbpsBidir).toBe(600);
    expect(a100.intraNodeBwSource).toBe('gpus.csv');
    expect(a100.hasNvlinkFabric).toBe(true);
    expect(getGpu('RTX-3090')!.hasNvlinkFabric).toBe(false);
  });

  it('default price is the lowest listed price point; unpriced GPUs stay null', () => {
    expect(getGpu('V100-SXM2-16GB')!.priceUsdPerGpuHour).toBe(0.55);
    expect(getGpu('RTX-3090')!.priceUsdPerGpuHour).toBeNull();
  });
});

describe('seeds: instances and measurements', () => {
  it('loads cloud instances with per-GPU prices', () => {
    const inst = loadInstances();
    // 67 rows, of which four list an AWS instance again at a later date (below).
    expect(inst.length).toBe(63);
    const p3 = inst.find((i) => i.instance === 'p3.16xlarge')!;
    expect(p3.gpusPerInstance).toBe(8);
    expect(p3.usdPerGpuHour).toBeCloseTo(3.06, 2);
  });

  it('offers an instance listed twice in a region at its latest list price only', () => {
    const listed = (instance: string) =>
      loadInstances()
        .filter((i) => i.provider === 'AWS' && i.instance === instance)
        .map((i) => [i.onDemandUsdPerHour, i.priceDate.slice(0, 10)]);
    // instances.csv: p5.48xlarge $98.32 (2025-03-14) and $55.04 (2026-11-09); p4d $32.77 and $21.96
    // at the same dates; p4de $40.97 undated (a catalog commit) and $27.45 on 2026-11-09.
    expect(listed('p5.48xlarge')).toEqual([[55.04, '2026-11-09']]);
    expect(listed('p4d.24xlarge')).toEqual([[21.957642, '2026-11-09']]);
    expect(listed('p4de.24xlarge')).toEqual([[27.44705, '2026-11-09']]);
    // p5en: $84.80 on 2025-03-14 in "us-east-1 / us-west-2", $63.296 on 2026-08-06 in three regions.
    expect(listed('p5en.48xlarge')).toEqual([[63.296, '2026-08-06']]);
    // The rule itself: a later date wins whatever the price, an undated row loses to a dated one,
    // a later listing supersedes only the regions it lists, and other instances stay.
    const row = (instance: string, region: string, price_date: string, price: string) => ({
      provider: 'X',
      instance,
      region,
      price_date,
      price,
    });
    const kept = currentListings([
      row('a', 'r1', '2025-01-01', 'old'),
      row('a', 'r1', '2026-01-01 (checked)', 'new, dearer'),
      row('a', 'r2', '2025-01-01', 'other region'),
      row('a', 'r1 / r3', '2025-01-01', 'a region the later one does not list'),
      row('b', 'r1', 'not exposed', 'undated'),
      row('b', 'r1', '2024-06-01', 'dated'),
      row('c', 'r1', 'not exposed', 'only listing'),
    ]).map((r) => r.price);
    expect(kept).toEqual([
      'new, dearer',
      'other region',
      'a region the later one does not list',
      'dated',
      'only listing',
    ]);
  });

  it('loads every measurement row, typed, less those that contradict their stated configuration', () => {
    const rows = loadMeasurements();
    expect(rows.length + loadExcludedMeasurements().length).toBe(4033);
    const every = new Set(rows.map((r) => r.precision));
    expect([...every].sort()).toEqual(['AMP_FP16', 'BF16', 'FP16', 'FP16_PURE', 'FP32', 'TF32']);
    const multi = rows.find((r) => r.numNodes > 1)!;
    expect(multi.gpusPerNode * multi.numNodes).toBe(multi.numGpus);
    for (const r of rows) expect(getGpu(r.gpu), r.gpu).toBeDefined();
  });
});

describe('seeds: rows that contradict their own configuration', () => {
  const row = (id: string, framework: string, seq: number, seqPerS: number, gpus = 1) =>
    measurementFromRow({
      id,
      source: 'dle',
      framework,
      model: 'bert_large_pretrain',
      gpu: 'A100-SXM4-80GB',
      num_gpus: String(gpus),
      num_nodes: '1',
      seq_len_or_image_size: String(seq),
      precision: 'AMP_FP16',
      throughput: String(seqPerS),
      throughput_unit: 'sequences/s',
      software: 'x',
    });

  it('leaves out a longer-sequence row with more tokens/s per GPU than any shorter row of its table, and keeps padded ones', () => {
    const rows = [
      // Padded: 512 tokens cost more per token than 128 (0.75x the tokens/s), as attention says.
      row('tf-128', 'TensorFlow', 128, 400),
      row('tf-512', 'TensorFlow', 512, 75),
      // 1.5x the tokens/s per GPU at 512 than the best 128 row, even the single-GPU one.
      row('pt-128-1', 'PyTorch', 128, 600),
      row('pt-128-8', 'PyTorch', 128, 4400, 8),
      row('pt-512-8', 'PyTorch', 512, 1800, 8),
    ];
    const out = longerButFasterPerToken(rows);
    expect(out.map((e) => e.row.id)).toEqual(['pt-512-8']);
    expect(out[0].reason).toMatch(/^1\.50x the tokens\/s per GPU of pt-128-1 at 128 tokens/);
  });

  it('on train.csv: only the PyTorch and PaddlePaddle BERT phase-2 rows (512 tokens), none of the padded TensorFlow ones', () => {
    const out = loadExcludedMeasurements();
    expect(out.length).toBe(32);
    for (const e of out) {
      expect(e.row.model).toBe('bert_large_pretrain');
      expect(e.row.seqLenOrImageSize).toBe(512);
      expect(['PyTorch', 'PaddlePaddle']).toContain(e.row.framework);
    }
    const kept = loadMeasurements().filter(
      (r) => r.model === 'bert_large_pretrain' && r.seqLenOrImageSize === 512,
    );
    expect(kept.length).toBeGreaterThan(0);
    for (const r of kept) expect(r.framework).toMatch(/^TensorFlow/);
  });
});
