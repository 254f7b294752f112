import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCsv } from '../seeds/catalog.js';

const bin = fileURLToPath(new URL('../bin/trainplan.js', import.meta.url));
const run = (...args: string[]) =>
  execFileSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: tmpdir(), timeout: 120_000 });

describe('trainplan CLI', () => {
  it('predict-csv keeps every input column, adds predictions in the row unit, and writes rows it cannot predict with the reason', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trainplan-'));
    const input = join(dir, 'in.csv');
    const output = join(dir, 'out.csv');
    // train.csv's layout without the throughput column, plus a column of the user's own.
    writeFileSync(
      input,
      [
        'id,model,gpu,num_gpus,num_nodes,batch_size_per_gpu,precision,throughput_unit,my_note',
        'a,resnet50_v1.5,V100-SXM2-16GB,8,1,256,AMP_FP16,images/s,"keep, me"',
        'b,ncf_neumf,A100-SXM4-80GB,1,1,1048576,AMP_FP16,million samples/s,',
        'c,no_such_model,V100-SXM2-16GB,1,1,32,FP32,images/s,',
        'd,resnet50_v1.5,V100-SXM2-16GB,1,1,64,BF16,images/s,',
      ].join('\n'),
    );
    expect(run('predict-csv', '--in', input, '--out', output)).toMatch(
      /wrote 4 rows \(2 predicted, 2 with an error\)/,
    );
    const rows = parseCsv(readFileSync(output, 'utf8'));
    expect(rows).toHaveLength(4);
    expect(Object.keys(rows[0])).toEqual(
      expect.arrayContaining([
        'id',
        'my_note',
        'predicted_throughput',
        'predicted_step_time_s',
        'predicted_forward_s',
        'predicted_backward_s',
        'predicted_optimizer_s',
        'predicted_communication_s',
        'predicted_memory_gb_per_gpu',
        'fits_in_memory',
        'error',
      ]),
    );
    // ResNet-50 AMP at 256 per 16 GB V100 is DeepLearningExamples' default: it ran, so it fits.
    expect(rows[0].fits_in_memory).toBe('true');
    expect(Number(rows[0].predicted_memory_gb_per_gpu)).toBeGreaterThan(8);
    expect(Number(rows[0].predicted_memory_gb_per_gpu)).toBeLessThanOrEqual(16);
    expect(rows[2].fits_in_memory).toBe('');
    expect(rows[0].my_note).toBe('keep, me');
    // 8 V100s at AMP train ResNet-50 at thousands of images/s (the seeds hold 6,174 to 10,723 measured).
    const images = Number(rows[0].predicted_throughput);
    expect(images).toBeGreaterThan(4000);
    expect(images).toBeLessThan(25000);
    expect(Number(rows[0].predicted_step_time_s)).toBeCloseTo((256 * 8) / images, 6);
    // NCF in the row's unit: millions of samples per second, not samples.
    expect(Number(rows[1].predicted_throughput)).toBeGreaterThan(1);
    expect(Number(rows[1].predicted_throughput)).toBeLessThan(1000);
    expect(rows[2].error).toMatch(/not in the zoo/);
    expect(rows[3].error).toMatch(/bf16/);
    expect(rows[3].predicted_throughput).toBe('');
  });

  it('evaluate prints MAPE overall and per group on the seed measurements', () => {
    const out = run('evaluate', '--group-by', 'precision');
    expect(out).toMatch(/rows 4033, predicted \d+, MAPE \d+\.\d%/);
    expect(out).toMatch(/\| AMP_FP16 \| \d+ \| \d+\.\d% \|/);
    expect(() => run('evaluate', '--group-by', 'colour')).toThrow(/unknown key "colour"/);
  });
});
