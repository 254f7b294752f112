// The published decoders the zoo lists by id (seeds/models.json `published`): each is the
// llm_models.csv row it names, recognised as that architecture so its published runs stand behind
// (and calibrate) its answers, at the sequence length its entry says, and asked through the API
// like any zoo model, answering what the publisher's Hugging Face config answers.
import { describe, expect, it } from 'vitest';
import { modelCost } from '../predictor/layers.js';
import { buildLlmModel } from '../predictor/llm.js';
import { measuredRunsOf, publishedArchitecturesOf } from '../predictor/published-runs.js';
import type { ModelDef } from '../predictor/types.js';
import { getModel, loadZoo } from '../predictor/zoo/index.js';
import { publishedSeqLen } from '../predictor/zoo/published.js';
import { loadPublishedZooModels, loadZooEntries, parseCsv } from '../seeds/catalog.js';
import { loadLlmArchitectures, loadLlmRuns } from '../seeds/llm.js';
import { readFileSync } from 'node:fs';
import { activeParameters } from './active-parameters.js';
import { apolloForTests } from './graphql-client.js';
import { HF_CONFIGS } from './import-fixtures.js';

const published = loadPublishedZooModels();
const model = (id: string): ModelDef => getModel(id)!;

/** llm_models.csv's params_b_total: the publisher's nominal size (from the model's name). */
const nominalBillions = new Map(
  parseCsv(readFileSync(new URL('../seeds/measurements/llm_models.csv', import.meta.url), 'utf8')).map(
    (r) => [r.model, Number(r.params_b_total)],
  ),
);

describe('published decoders in the zoo', () => {
  const gql = apolloForTests();

  it('are listed after the stated entries, under ids no stated entry has', () => {
    const ids = loadZoo().map((m) => m.id);
    expect(published.length).toBeGreaterThanOrEqual(10);
    expect(ids.slice(loadZooEntries().length)).toEqual(published.map((m) => m.id));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('each is the architecture it names, found by shape; all but the two Mixtrals have published runs', () => {
    const unmeasured: string[] = [];
    for (const p of published) {
      const names = publishedArchitecturesOf(model(p.id));
      expect(names, p.id).toContain(p.architecture);
      if (measuredRunsOf(names).length === 0) unmeasured.push(p.id);
    }
    expect(unmeasured).toEqual(['mixtral_8x7b', 'mixtral_8x22b']);
    // Llama 3 and 3.1 share their shapes: either id finds both publishers' names.
    expect(publishedArchitecturesOf(model('llama3_8b'))).toEqual(['Llama-3-8B', 'Llama-3.1-8B']);
  });

  it("have the publisher's size: within 10% of the nominal one, and Llama 3 8B's and Mixtral's exact counts", () => {
    for (const p of published.filter((m) => nominalBillions.get(m.architecture)! > 0)) {
      const billions = modelCost(model(p.id)).parameters / 1e9;
      const nominal = nominalBillions.get(p.architecture)!;
      expect(
        Math.abs(billions / nominal - 1),
        `${p.id}: ${billions.toFixed(2)}B vs ${nominal}B`,
      ).toBeLessThan(0.1);
    }
    // meta-llama/Meta-Llama-3-8B: 8,030,261,248 parameters (128,256-token vocabulary, untied head).
    expect(modelCost(model('llama3_8b')).parameters).toBe(8_030_261_248);
    // llm_models.csv states no size for Mixtral 8x7B; its model card says 46.7B (as test/import-fixtures.ts).
    expect(nominalBillions.get('Mixtral-8x7B')).toBe(0);
    expect(modelCost(model('mixtral_8x7b')).parameters).toBe(46_702_792_704);
    // Nor for Mixtral 8x22B: Mistral AI, "Cheaper, Better, Faster, Stronger" (2024-04-17): 39B active
    // parameters of 141B; 8 experts, 2 per token (the MLPerf MoE benchmark's table, llm_vocab.json).
    expect(nominalBillions.get('Mixtral-8x22B')).toBe(0);
    const big = modelCost(model('mixtral_8x22b'));
    expect(Math.abs(big.parameters / 141e9 - 1)).toBeLessThan(0.01);
    expect(Math.abs(activeParameters(big, 2) / 39e9 - 1)).toBeLessThan(0.01);
    expect(model('mixtral_8x22b').seqLen).toBe(32768);
  });

  it('default to the stated sequence length, else the one most of their published runs trained', () => {
    expect(model('llama3_8b').seqLen).toBe(8192);
    expect(model('llama3_8b').source).toMatch(/Introducing Meta Llama 3/);
    for (const p of published.filter((m) => m.seqLen === undefined)) {
      const lengths = loadLlmRuns()
        .filter((r) => r.model === p.architecture && r.seqLen)
        .map((r) => r.seqLen!);
      const most = (n: number) => lengths.filter((l) => l === n).length;
      const seqLen = model(p.id).seqLen!;
      expect(
        lengths.every((l) => most(l) <= most(seqLen)),
        p.id,
      ).toBe(true);
      expect(model(p.id).source, p.id).toContain(
        `the length ${most(seqLen)} of its ${lengths.length} published runs trained`,
      );
    }
    expect(publishedSeqLen({ id: 'x', name: 'x', architecture: 'Mixtral-8x7B', batchSizes: [1] })).toMatch(
      /no published run of Mixtral-8x7B/,
    );
  });

  it('rebuild at a requested sequence length as the published runs do', () => {
    const arch = loadLlmArchitectures().find((a) => a.model === 'Llama-3-8B')!;
    const at4096 = getModel('llama3_8b', { seqLenOrImageSize: 4096 })!;
    const reference = buildLlmModel(arch, 4096) as ModelDef;
    expect(at4096.seqLen).toBe(4096);
    expect(at4096.unitsPerBatchElement).toBe(4096);
    expect(modelCost(at4096).forwardFlops).toBe(modelCost(reference).forwardFlops);
    expect(modelCost(at4096).forwardFlops).toBeLessThan(modelCost(model('llama3_8b')).forwardFlops / 1.9);
  });

  it("answers by id exactly what it answers for the publisher's Hugging Face config.json", async () => {
    const layout = `gpu: "H100-SXM5-80GB", nodes: 8, gpusPerNode: 8, batchSizePerGpu: 1, gradAccumSteps: 8,
      precision: BF16, softwareStack: MEGATRON,
      parallelism: { pipelineParallel: 2, expertParallel: 8, zeroStage: 1, recompute: FULL }`;
    const fields = 'stepTimeMs stepTimeMsP10 stepTimeMsP90 memoryGbPerGpu evidence';
    for (const [hf, id] of [
      ['Qwen/Qwen3-30B-A3B', 'qwen3_30b_a3b'],
      ['deepseek-ai/DeepSeek-V3', 'deepseek_v3'],
      ['openai/gpt-oss-120b', 'gpt_oss_120b'],
      ['mistralai/Mixtral-8x7B-v0.1', 'mixtral_8x7b'],
    ]) {
      const config = JSON.stringify(HF_CONFIGS.find((c) => c.id === hf)!.config);
      const byId = await gql(
        `{ predict(input: { workload: { model: "${id}", samples: 1e9, seqLen: 4096 }, ${layout} }) { ${fields} } }`,
      );
      const byConfig = await gql(
        `query($config: String!) { predict(input: { workload: { customModel: { huggingFaceConfig: $config }, samples: 1e9, seqLen: 4096 }, ${layout} }) { ${fields} } }`,
        { config },
      );
      expect(byId.errors, id).toBeUndefined();
      expect(byId.data!.predict.evidence, id).toMatch(
        id === 'mixtral_8x7b'
          ? /^unmeasured: no measurements of this model/
          : /^published: \d+ published measurements of this architecture/,
      );
      expect(byId, id).toEqual(byConfig);
    }
  });

  it('Llama 3 8B by id on 8 H100s under Megatron at a published fine-tuning layout: calibrated by its runs, within 10% of what the run measured', async () => {
    // NVIDIA dgxc-benchmarking's Llama 3 8B fine-tuning (dgxc-0174): 8 GPUs, TP 1, PP 1, micro-batch 1,
    // global batch 32, 4,096 tokens, BF16.
    const run = loadLlmRuns().find((r) => r.id === 'dgxc-0174')!;
    expect(run).toMatchObject({
      model: 'Llama-3-8B',
      numGpus: 8,
      microBatch: 1,
      globalBatch: 32,
      seqLen: 4096,
    });
    const { data, errors } = await gql(`{ predict(input: {
      workload: { model: "llama3_8b", samples: 1e9, seqLen: 4096 }
      gpu: "H100-SXM5-80GB", gpusPerNode: 8, batchSizePerGpu: 1, gradAccumSteps: 4,
      precision: BF16, softwareStack: MEGATRON, parallelism: { zeroStage: 1 }
    }) { throughput fitsInMemory evidence evidenceLevel } }`);
    expect(errors).toBeUndefined();
    const p = data!.predict;
    expect(p.evidenceLevel).toBe('MODEL_MEASURED_ON_GPU');
    expect(p.evidence).toMatch(/published measurements of this architecture \(Llama-3-8B, Llama-3\.1-8B/);
    expect(p.evidence).toMatch(
      /calibrated by the \d+ latest published runs of this architecture on H100-SXM5-80GB/,
    );
    expect(p.fitsInMemory).toBe(true);
    const perGpu = p.throughput / 8;
    expect(Math.abs(perGpu / run.tokensPerSecondPerGpu! - 1)).toBeLessThan(0.1);
  });
});
