// A zoo or imported model that is a published LLM architecture: its published runs
// (measurements/llm_train.csv, under the publisher's model name) are what `evidence` and
// `evidenceLevel` say stands behind an answer, where they used to say "no measurements of this model".
import { describe, expect, it } from 'vitest';
import { fromHuggingFaceConfig } from '../predictor/import/index.js';
import { publishedArchitecturesOf, publishedRunsOf, type RunShape } from '../predictor/published-runs.js';
import { getModel } from '../predictor/zoo/index.js';
import { loadLlmArchitectures, loadLlmRuns } from '../seeds/llm.js';
import { llmModel } from '../predictor/llm.js';
import type { ModelDef } from '../predictor/types.js';
import { apolloForTests } from './graphql-client.js';
import { HF_CONFIGS } from './import-fixtures.js';

/** One 8-GPU node, no split, one sequence per GPU: a layout the published 8-GPU runs share. */
const eightGpus = (seqLen: number): RunShape => ({
  gpus: 8,
  tensorParallel: 1,
  pipelineParallel: 1,
  contextParallel: 1,
  microBatch: 1,
  seqLen,
});

const llama7bConfig = HF_CONFIGS.find((c) => c.id === 'meta-llama/Llama-2-7b-hf')!.config;

describe('which published architecture a model is', () => {
  it('the zoo Llama 2 models and an imported Llama-2-7b config are their published rows; other models are none', () => {
    expect(publishedArchitecturesOf(getModel('llama2_7b')!)).toEqual(['Llama-2-7B']);
    expect(publishedArchitecturesOf(getModel('llama2_13b')!)).toEqual(['Llama-2-13B']);
    expect(publishedArchitecturesOf(getModel('llama2_70b')!)).toEqual(['Llama-2-70B']);
    expect(publishedArchitecturesOf(fromHuggingFaceConfig(llama7bConfig).model)).toEqual(['Llama-2-7B']);
    for (const id of ['gpt2_124m', 'gpt2_1558m', 'bert_large_squad', 'resnet50_v1.5'])
      expect(publishedArchitecturesOf(getModel(id)!), id).toEqual([]);
    // At another sequence length it is still the same architecture (compared at that length).
    expect(publishedArchitecturesOf(fromHuggingFaceConfig(llama7bConfig, { seqLen: 2048 }).model)).toEqual([
      'Llama-2-7B',
    ]);
    // One layer fewer, or another FFN width, is another model.
    const cfg = llama7bConfig as Record<string, unknown>;
    expect(publishedArchitecturesOf(fromHuggingFaceConfig({ ...cfg, num_hidden_layers: 31 }).model)).toEqual(
      [],
    );
    expect(
      publishedArchitecturesOf(fromHuggingFaceConfig({ ...cfg, intermediate_size: 11264 }).model),
    ).toEqual([]);
  });

  it('shapes published under two names are both (Llama 3 and 3.1 8B), and their runs are pooled', () => {
    const arch = loadLlmArchitectures().find((a) => a.model === 'Llama-3.1-8B')!;
    const names = publishedArchitecturesOf(llmModel(arch, 8192) as ModelDef);
    expect(names).toEqual(['Llama-3-8B', 'Llama-3.1-8B']);
    const shape = eightGpus(8192);
    const count = (n: string) =>
      loadLlmRuns().filter((r) => r.model === n && r.tokensPerSecondPerGpu !== null).length;
    expect(count('Llama-3-8B')).toBeGreaterThan(0);
    expect(count('Llama-3.1-8B')).toBeGreaterThan(0);
    expect(publishedRunsOf(names, 'H100-SXM5-80GB', 'BF16', shape).runs).toBe(
      count('Llama-3-8B') + count('Llama-3.1-8B'),
    );
  });

  it('counts the runs with a measured throughput and picks the one nearest the layout on the GPU', () => {
    const csv = loadLlmRuns().filter((r) => r.model === 'Llama-2-7B' && r.tokensPerSecondPerGpu !== null);
    const shape = eightGpus(4096);
    const p = publishedRunsOf(['Llama-2-7B'], 'H100-SXM5-80GB', 'FP8', shape);
    expect(p.runs).toBe(csv.length);
    expect(p.onGpu).toBe(csv.filter((r) => r.gpu === 'H100-SXM5-80GB').length);
    expect(p.nearest!.numGpus).toBe(8);
    expect(p.nearest!.tensorParallel).toBe(1);
    expect(p.nearest!.seqLen).toBe(4096);
    // A 128k-token context on 128 GPUs (TP 4, CP 4) is nearest NeMo's long-context run of that shape.
    const long = publishedRunsOf(['Llama-2-7B'], 'H100-SXM5-80GB', 'FP8', {
      ...shape,
      gpus: 128,
      tensorParallel: 4,
      contextParallel: 4,
      seqLen: 131072,
    });
    expect(long.nearest!.id).toBe('nemolong-0006');
    expect(publishedRunsOf(['Llama-2-7B'], 'A100-SXM4-80GB', 'BF16', shape)).toMatchObject({ onGpu: 0 });
  });
});

describe('predict and recommend say so', () => {
  const run = apolloForTests();
  const predict = (model: string, gpu: string, extra: string) =>
    run(`{ predict(input: {
      workload: { model: "${model}", samples: 1e9 }
      gpu: "${gpu}", gpusPerNode: 8, batchSizePerGpu: 1, gradAccumSteps: 16 ${extra}
    }) { evidence evidenceLevel } }`);

  it('Llama 2 7B in FP8 under Megatron on 8 H100s names its published runs and the nearest one, with its measured figure', async () => {
    const p = (await predict('llama2_7b', 'H100-SXM5-80GB', 'precision: FP8, softwareStack: MEGATRON')).data!
      .predict;
    const nearest = loadLlmRuns().find((r) => r.id === 'nemo2407-0005')!;
    expect(p.evidenceLevel).toBe('MODEL_MEASURED_ON_GPU');
    expect(p.evidence).toMatch(
      /^published: \d+ published measurements of this architecture \(Llama-2-7B, measurements\/llm_train\.csv\)/,
    );
    expect(p.evidence).not.toMatch(/no measurements of this model/);
    // Its runs on this GPU and stack calibrate it (published-calibration.test.ts), and set its interval.
    expect(p.evidence).toMatch(
      /calibrated by the \d+ latest published runs of this architecture on H100-SXM5-80GB under MEGATRON/,
    );
    expect(p.evidence).toContain(
      `nemo2407-0005 (8 GPUs, TP 1, PP 1, micro-batch 1, global batch 128, sequence 4096, FP8, NeMo (Megatron-Core)), measured ${Math.round(nearest.tokensPerSecondPerGpu!).toLocaleString('en-US')} tokens/s per GPU`,
    );
  });

  it('under stock PyTorch it says the runs ran other stacks; on a GPU without runs, none there; a model without runs, unmeasured', async () => {
    const eager = (await predict('llama2_7b', 'H100-SXM5-80GB', 'precision: BF16')).data!.predict;
    expect(eager.evidenceLevel).toBe('MODEL_MEASURED_ON_GPU');
    expect(eager.evidence).toMatch(
      /they ran tuned stacks; this estimate is of PYTORCH_EAGER, which none of them ran/,
    );
    const a100 = (await predict('llama2_7b', 'A100-SXM4-80GB', 'precision: BF16, softwareStack: MEGATRON'))
      .data!.predict;
    expect(a100.evidenceLevel).toBe('GPU_MEASURED');
    expect(a100.evidence).toMatch(
      /^published: \d+ published measurements of this architecture \(Llama-2-7B.*\), none on A100-SXM4-80GB/,
    );
    const gpt2 = (await predict('gpt2_1558m', 'H100-SXM5-80GB', 'precision: BF16, softwareStack: MEGATRON'))
      .data!.predict;
    expect(gpt2.evidence).toMatch(/^unmeasured: no measurements of this model/);
    // No benchmark row or published run measured it, so the LLM runs' interval is widened, and the text says so.
    expect(gpt2.evidence).toMatch(
      /interval: the MEGATRON runs' errors held out by model family, widened to a held-out model's: no benchmark row measured this model/,
    );
    expect(gpt2.evidenceLevel).toBe('GPU_MEASURED');
  });

  it('minEvidence: MODEL_MEASURED_ON_GPU keeps Llama 2 7B plans on the GPU its runs measured', async () => {
    const r = (
      await run(`{ recommend(input: {
        workload: { model: "llama2_7b", samples: 1e9 }, gpus: ["H100-SXM5-80GB", "A100-SXM4-80GB"]
        objective: TIME, maxNodes: 1, minEvidence: MODEL_MEASURED_ON_GPU, limit: 5
      }) { plans { gpu { id } evidenceLevel } } }`)
    ).data!.recommend;
    expect(r.plans.length).toBeGreaterThan(0);
    for (const p of r.plans) {
      expect(p.gpu.id).toBe('H100-SXM5-80GB');
      expect(p.evidenceLevel).toBe('MODEL_MEASURED_ON_GPU');
    }
  });
});
