#!/usr/bin/env python3
"""Derive seeds/achievable/achievable.json from the measured micro-benchmarks in shared/data/achievable.

Run: python3 seeds/achievable/derive.py /path/to/shared/data/achievable  (then npx prettier --write the JSON)

What it writes (compact; the raw tables are multi-MB):
- gemm[table][math]: points [idealUs, measuredUs] of single GEMM kernels, where idealUs = FLOPs / the
  measured device's dense datasheet peak for that math (seeds/gpus.csv) and measuredUs = FLOPs / measured
  FLOP/s. Per table and math the shapes are binned by log2(idealUs) (half-octave bins); each bin keeps the
  median of idealUs and of measuredUs. measuredUs is then made non-decreasing in idealUs (running max):
  more work never takes less time. Where the MAMF (stas00) best shape is larger than the table's largest
  shape, it is appended as the last point, so large kernels approach the best measured efficiency.
  Sources: XLA's matmul perf table (H100 sm_90 bf16 and f32 = TF32 tensor cores; B200 bf16, f32 = TF32,
  fp8 e4m3; MI300-series gfx942 bf16, f32, fp8), Azure cuBLASLt GEMMs (A100 fp16, H100/GB200 fp8;
  XLA's sm_90 fp8 rows are left out: 87 exceed the datasheet peak, see achievable/README.md), MAMF.
  The first point of a curve is the per-kernel latency floor of a GEMM (about 5 us on every GPU).
  Tables measured only from 1024^3 up (Azure's A100, H100 fp8, GB200 fp8) take H100 bf16's smaller,
  latency-bound XLA points below their first shape.
- memory[gpu]: BabelStream Triad GB/s measured on that GPU (Azure ND v4/v5), and its fraction of the
  datasheet bandwidth.
- attention[gpu]: FlashAttention-2's measured TFLOPS (Azure; FA2's benchmark script at batch 2, sequence
  8192, no causal mask, head dimension 128 on H100/H200/GB200 and 64 on A100/MI300X; the guide tabulates
  one figure per implementation and does not say whether it is the forward, backward or both), and its
  fraction of the GPU's dense 16-bit tensor peak. A fused attention kernel's two GEMMs run at this rate,
  not at a GEMM's: softmax, masking and the online rescaling sit between them on the same SMs.
- allReduce[gpu]: NCCL/RCCL all-reduce bus bandwidth by message size on an 8-GPU (4 on GB200) node
  (Azure), as a fraction of the GPU's per-direction intra-node link bandwidth from gpus.csv.
"""
import csv, json, math, statistics, sys
from collections import defaultdict

src = sys.argv[1] if len(sys.argv) > 1 else '../shared/data/achievable'
here = __file__.rsplit('/', 1)[0]
gpus = {r['id']: r for r in csv.DictReader(open(f'{here}/../gpus.csv', newline=''))}
peak = lambda gpu, col: float(gpus[gpu][col])

TABLES = {
    # table key: (measured GPU id in gpus.csv, XLA arch key or None, Azure system or None, MAMF accelerator)
    'H100': ('H100-SXM5-80GB', 'sm_90', 'ND_H100_v5', 'NVIDIA H100 SXM'),
    'B200': ('B200', 'sm_100_B200', None, 'NVIDIA B200 SXM'),
    'GB200': ('GB200', None, 'ND_GB200_v6', 'NVIDIA GB200 SXM'),
    'MI300X': ('MI300X', 'gfx942', 'ND_MI300X_v5', 'AMD MI300X'),
    'A100': ('A100-SXM4-80GB', None, 'ND_A100_v4', 'NVIDIA A100 SXM'),
}
PEAK_COL = {'bf16': 'bf16_tensor_tflops', 'fp16': 'fp16_tensor_tflops', 'tf32': 'tf32_tensor_tflops',
            'fp32': 'fp32_tflops', 'fp8': 'fp8_tensor_tflops'}
XLA_DTYPE = {  # XLA dtype key -> math mode, per arch
    'sm_90': {'bf16xbf16->bf16': 'bf16', 'f32xf32->f32': 'tf32'},
    'sm_100_B200': {'bf16xbf16->bf16': 'bf16', 'f32xf32->f32': 'tf32', 'f8e4m3fnxf8e4m3fn->bf16': 'fp8'},
    # gfx942 f32 rows are left out: they reach 1.5x the fp32 matrix peak (not what fp32 training runs).
    'gfx942': {'bf16xbf16->bf16': 'bf16', 'f8e4m3fnuzxf8e4m3fnuz->bf16': 'fp8'},
}
AZURE_DTYPE = {'fp16': 'fp16', 'fp8': 'fp8'}
MAMF_DTYPE = {'bf16': 'bf16', 'fp8_e4m3fn': 'fp8'}

samples = defaultdict(list)  # (table, math) -> [(idealUs, measuredUs)]
sources = defaultdict(set)
arch_to_table = {v[1]: k for k, v in TABLES.items() if v[1]}
for r in csv.DictReader(open(f'{src}/xla_matmul.csv', newline='')):
    t = arch_to_table.get(r['arch_key'])
    math_mode = XLA_DTYPE.get(r['arch_key'], {}).get(r['dtype_key'])
    if not t or not math_mode:
        continue
    b, m, n, k = (int(r[c]) for c in 'bmnk')
    flops = 2 * b * m * n * k
    ideal = flops / (peak(TABLES[t][0], PEAK_COL[math_mode]) * 1e12) * 1e6
    samples[(t, math_mode)].append((ideal, flops / float(r['flops_per_s']) * 1e6))
    sources[(t, math_mode)].add(r['source'])
system_to_table = {v[2]: k for k, v in TABLES.items() if v[2]}
from_xla = set(samples)
azure = list(csv.DictReader(open(f'{src}/azure_microbench.csv', newline='')))
for r in azure:
    t = system_to_table.get(r['system'])
    if not t or not r['benchmark'].startswith('gemm_'):
        continue
    math_mode = AZURE_DTYPE[r['dtype']]
    if (t, math_mode) in from_xla:
        continue  # XLA's table already covers it
    if int(r['n']) < 256:
        continue  # 802816x192x768: a skinny shape far below the square GEMMs' efficiency; one point cannot place it
    flops = 2 * int(r['m']) * int(r['n']) * int(r['k'])
    rate = float(r['value']) * 1e12
    ideal = flops / (peak(TABLES[t][0], PEAK_COL[math_mode]) * 1e12) * 1e6
    samples[(t, math_mode)].append((ideal, flops / rate * 1e6))
    sources[(t, math_mode)].add(r['source'])
mamf_by = {}
for r in csv.DictReader(open(f'{src}/mamf.csv', newline='')):
    if r['table'] == 'current_v2' and r['dtype'] in MAMF_DTYPE:
        mamf_by[(r['accelerator'], MAMF_DTYPE[r['dtype']])] = r

def binned(points):
    bins = defaultdict(list)
    for ideal, measured in points:
        bins[round(2 * math.log2(ideal))].append((ideal, measured))
    out = []
    for key in sorted(bins):
        xs = bins[key]
        out.append([statistics.median(x for x, _ in xs), statistics.median(y for _, y in xs)])
    return out

gemm, floor = {}, {}
h100_small = binned(samples[('H100', 'bf16')])
for (t, math_mode), pts in sorted(samples.items()):
    pts = list(pts)
    mamf = mamf_by.get((TABLES[t][3], 'bf16' if math_mode == 'fp16' else math_mode))
    if mamf and mamf['m'] and math_mode in ('bf16', 'fp16', 'fp8'):
        flops = 2 * int(mamf['m']) * int(mamf['n']) * int(mamf['k'])
        ideal = flops / (peak(TABLES[t][0], PEAK_COL[math_mode]) * 1e12) * 1e6
        mamf_point = [ideal, flops / (float(mamf['mamf_tflops']) * 1e12) * 1e6]
        sources[(t, math_mode)].add(mamf['source'] + ' (MAMF)')
    else:
        mamf_point = None
    curve = binned(pts)
    if mamf_point and mamf_point[0] > curve[-1][0]:
        curve.append(mamf_point)  # beyond the table's largest shape: the best measured large GEMM
    # Tables measured only from 1024^3 up (Azure) have no small kernels: below their first point take
    # H100 bf16's latency-bound points (XLA, from 256^3), which are faster than that first point.
    if curve[0][0] > 0.1:
        below = [p for p in h100_small if p[0] < curve[0][0] and p[1] < curve[0][1]]
        if below:
            curve = below + curve
            sources[(t, math_mode)].add('small kernels (below the first measured shape): H100 bf16 from XLA\'s table')
    running = 0.0
    for p in curve:  # more work never takes less time
        running = max(running, p[1])
        p[1] = running
    gemm.setdefault(t, {})[math_mode] = {
        'points': [[round(x, 4), round(y, 4)] for x, y in curve],
        'samples': len(pts),
        'source': sorted(sources[(t, math_mode)]),
    }
    floor[t] = round(min(curve[0][1], floor.get(t, 1e9)), 2)

memory = {}
gpu_of_system = {'ND_A100_v4': 'A100-SXM4-80GB', 'ND_H100_v5': 'H100-SXM5-80GB', 'ND_H200_v5': 'H200-SXM-141GB',
                 'ND_MI300X_v5': 'MI300X', 'ND_GB200_v6': 'GB200'}
for r in azure:
    if r['benchmark'] == 'hbm_babelstream' and r['metric'] == 'Triad':
        gpu = gpu_of_system[r['system']]
        measured = float(r['value']) * 1000
        memory[gpu] = {'triadGbps': measured, 'fractionOfDatasheet': round(measured / float(gpus[gpu]['memory_bw_gbps']), 4),
                       'source': r['source']}

attention = {}
for r in azure:
    if r['benchmark'] == 'attention' and r['metric'] == 'Flash Attention 2.0':
        gpu = gpu_of_system[r['system']]
        tflops = float(r['value'])
        head_dim = int(r['notes'].split('head dimension of ')[1].split(',')[0])
        attention[gpu] = {'implementation': 'FlashAttention-2', 'tflops': tflops,
                          'fractionOf16BitPeak': round(tflops / peak(gpu, 'bf16_tensor_tflops'), 4),
                          'headDim': head_dim, 'batch': 2, 'seqLen': 8192, 'causal': False, 'source': r['source']}

all_reduce = {}
for r in azure:
    if r['metric'] != 'busbw':
        continue
    gpu = gpu_of_system[r['system']]
    uni = float(gpus[gpu]['intra_node_bw_gbps_bidir_per_gpu']) / 2
    e = all_reduce.setdefault(gpu, {'gpu': gpu, 'linkGbpsPerDirection': uni, 'points': [], 'source': r['source'],
                                  'gpusInGroup': 4 if gpu == 'GB200' else 8})
    e['points'].append([int(r['size_bytes_derived']), round(float(r['value']) / uni, 5)])

# all-to-all: XLA's collective perf table on 8-GPU hosts (H100 sm_90, B200 sm_100), one group of 8.
# Its throughput is algorithm bandwidth (tensor bytes / median runtime); each GPU sends (n-1)/n of its
# tensor to the others, so the fraction of the per-direction link is that / the link. Points:
# [tensor bytes per GPU, fraction], the median per size, sorted by size.
all_to_all = {}
arch_gpu = {'sm_90': 'H100-SXM5-80GB', 'sm_100_B200': 'B200'}
by_size = {}
for r in csv.DictReader(open(f'{src}/xla_collectives.csv', newline='')):
    gpu = arch_gpu.get(r['arch_key'])
    if r['opcode'] != 'all-to-all' or r['devices_per_group'] != '8' or gpu is None:
        continue
    n = int(r['devices_per_group'])
    uni = float(gpus[gpu]['intra_node_bw_gbps_bidir_per_gpu']) / 2 * 1e9
    size = int(r['tensor_size_bytes_derived'])
    frac = float(r['network_throughput_bytes_per_sec']) * (n - 1) / n / uni
    by_size.setdefault(gpu, {}).setdefault(size, []).append(frac)
    all_to_all.setdefault(gpu, {'gpu': gpu, 'linkGbpsPerDirection': uni / 1e9, 'gpusInGroup': n, 'points': [],
                                'source': r['source']})
for gpu, sizes in by_size.items():
    all_to_all[gpu]['points'] = [[size, round(statistics.median(f), 5)] for size, f in sorted(sizes.items())]

out = {
    '_about': 'Derived by seeds/achievable/derive.py from shared/data/achievable (XLA perf tables, Azure AI-benchmarking-guide, stas00 MAMF); see that script and seeds/achievable/README.md for the derivation. gemm points: [idealUs = FLOPs / datasheet peak of the measured GPU, measuredUs], binned, non-decreasing. allReduce points: [message bytes, bus bandwidth / per-direction link bandwidth]. allToAll points: [tensor bytes per GPU, bytes each GPU sends / runtime / per-direction link bandwidth].',
    'gemm': gemm,
    'memory': memory,
    'attention': attention,
    'allReduce': all_reduce,
    'allToAll': all_to_all,
}
json.dump(out, open(f'{here}/achievable.json', 'w'), indent=1)
for t, d in gemm.items():
    for m, e in d.items():
        pts = e['points']
        print(t, m, e['samples'], 'floor', pts[0][1], 'eff@last %.3f' % (pts[-1][0] / pts[-1][1]), 'n', len(pts))
