// How a prediction or plan says to time it on your own GPUs (Prediction.harness, Plan.harness):
// the harness's commands at exactly the configuration (test/harness.test.ts runs them on CPU and
// reads the run back), or none with the reason where the harness cannot run it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HARNESS_FILE } from '../service/harness-script.js';
import { HARNESS_PRECISIONS, HARNESS_RECOMPUTE } from '../service/harness-commands.js';
import { apolloForTests } from './graphql-client.js';
import { HF_CONFIGS } from './import-fixtures.js';

const run = apolloForTests();
const PREDICT = `query($input: PredictInput!) { predict(input: $input) { harness { commands note } } }`;
const harnessOf = async (input: Record<string, unknown>) => {
  const r = await run(PREDICT, {
    input: { workload: { model: 'gpt2_124m', samples: 1e6 }, batchSizePerGpu: 8, ...input },
  });
  expect(r.errors).toBeUndefined();
  return r.data!.predict.harness as { commands: string[]; note: string };
};

describe('harness commands', () => {
  it('offers the precision modes measure.py trains in, no more (its PRECISIONS list)', () => {
    const python = /^PRECISIONS = \[(.*)\]$/m.exec(readFileSync(HARNESS_FILE, 'utf8'))![1];
    expect(JSON.parse(`[${python}]`)).toEqual(HARNESS_PRECISIONS);
  });

  it('offer the recomputation measure.py runs, no more (its RECOMPUTE list)', () => {
    const python = /^RECOMPUTE = \[(.*)\]$/m.exec(readFileSync(HARNESS_FILE, 'utf8'))![1];
    expect(JSON.parse(`[${python}]`)).toEqual(HARNESS_RECOMPUTE);
  });

  it('time full and selective recomputation (the attention core) as the configuration names it', async () => {
    const full = await harnessOf({
      gpu: 'H100-SXM5-80GB',
      precision: 'BF16',
      parallelism: { recompute: 'FULL' },
    });
    expect(full.commands[1]).toBe(
      'python3 measure.py --batch-size 8 --precision BF16 --recompute full --out runs.csv',
    );
    const selective = await harnessOf({
      gpu: 'H100-SXM5-80GB',
      precision: 'BF16',
      parallelism: { recompute: 'SELECTIVE', recomputeModules: ['CORE_ATTN'] },
    });
    expect(selective.commands[1]).toBe(
      'python3 measure.py --batch-size 8 --precision BF16 --recompute selective --out runs.csv',
    );
  });

  it('run the attention cores the way the configuration is costed; a model without them takes no flag', async () => {
    const at = { gpu: 'H100-SXM5-80GB', precision: 'BF16' };
    expect((await harnessOf({ ...at, attention: 'EAGER' })).commands[1]).toBe(
      'python3 measure.py --batch-size 8 --precision BF16 --attention eager --out runs.csv',
    );
    // Unstated, the harness runs them as trainplan's default for the model does: no flag.
    expect((await harnessOf(at)).commands[1]).toBe(
      'python3 measure.py --batch-size 8 --precision BF16 --out runs.csv',
    );
    const cnn = await harnessOf({
      ...at,
      workload: { model: 'resnet50_v1.5', samples: 1e6 },
      attention: 'EAGER',
    });
    expect(cnn.commands[1]).not.toMatch(/--attention/);
    // The zoo's BERT is DeepLearningExamples' script (scores in memory), replayed so by default; a
    // stack with its own fused kernel costs its cores fused, and the harness runs them so.
    const bert = { ...at, workload: { model: 'bert_large_squad', samples: 1e6 } };
    expect((await harnessOf(bert)).commands[1]).not.toMatch(/--attention/);
    expect((await harnessOf({ ...bert, softwareStack: 'MEGATRON' })).commands[1]).toMatch(
      / --attention fused /,
    );
    // A Hugging Face GPT-Neo, which transformers runs op by op only: no flag, and the note says why.
    const neo = {
      ...at,
      workload: {
        customModel: {
          huggingFaceConfig: JSON.stringify(
            HF_CONFIGS.find((c) => c.id === 'EleutherAI/gpt-neo-125M')!.config,
          ),
        },
        samples: 1e6,
        seqLen: 256,
      },
    };
    const megatron = await harnessOf({ ...neo, softwareStack: 'MEGATRON' });
    expect(megatron.commands[1]).not.toMatch(/--attention/);
    expect(megatron.note).toMatch(
      /transformers runs this config's attention cores op by op .*, not fused as MEGATRON costs them/,
    );
    expect((await harnessOf(neo)).note).not.toMatch(/op by op/);
  });

  it('time ZeRO over the data-parallel GPUs, stages 2 and 3 under FullyShardedDataParallel', async () => {
    const one = await harnessOf({
      gpu: 'H100-SXM5-80GB',
      precision: 'BF16',
      gpusPerNode: 8,
      parallelism: { zeroStage: 1 },
    });
    expect(one.commands[1]).toBe(
      'python3 measure.py --batch-size 8 --precision BF16 --zero-stage 1 --gpus 8 --out runs.csv',
    );
    expect(one.note).not.toMatch(/FullyShardedDataParallel/);
    const three = await harnessOf({
      gpu: 'H100-SXM5-80GB',
      precision: 'BF16',
      gpusPerNode: 8,
      nodes: 2,
      interNodeGbps: 400,
      parallelism: { zeroStage: 3, recompute: 'FULL' },
    });
    expect(three.commands[1]).toBe(
      'torchrun --nnodes 2 --nproc-per-node 8 --node-rank $NODE_RANK --master-addr $FIRST_NODE --master-port 29500 measure.py --batch-size 8 --precision BF16 --recompute full --zero-stage 3 --inter-node-gbps 400 --inter-node-transport RDMA --out runs.csv',
    );
    expect(three.note).toMatch(
      /ZeRO stage 3 runs under FullyShardedDataParallel \(FULL_SHARD\), which needs PyTorch 2/,
    );
  });

  it('time one GPU, a machine of them, and several nodes over the network the configuration assumes', async () => {
    const one = await harnessOf({ gpu: 'H100-SXM5-80GB', precision: 'AMP_BF16' });
    expect(one.commands).toEqual([
      'npx trainplan harness --model gpt2_124m --out measure.py',
      'python3 measure.py --batch-size 8 --precision AMP_BF16 --out runs.csv',
      'npx trainplan calibrate import runs.csv',
    ]);
    expect(one.note).toMatch(/run measure.py on a machine with the GPU/);
    const machine = await harnessOf({
      gpu: 'H100-SXM5-80GB',
      precision: 'FP8',
      gpusPerNode: 8,
      gradAccumSteps: 4,
    });
    expect(machine.commands[1]).toBe(
      'python3 measure.py --batch-size 8 --grad-accum-steps 4 --precision FP8 --gpus 8 --out runs.csv',
    );
    expect(machine.note).toMatch(
      /FP8 needs Transformer Engine installed \(NVIDIA's; on AMD GPUs its ROCm build/,
    );
    const nodes = await harnessOf({
      gpu: 'A100-SXM4-80GB',
      precision: 'BF16',
      gpusPerNode: 8,
      nodes: 4,
      interNodeGbps: 100,
      interNodeTransport: 'TCP',
      workload: { model: 'gpt2_124m', samples: 1e6, seqLen: 512 },
    });
    expect(nodes.commands.slice(0, 2)).toEqual([
      'npx trainplan harness --model gpt2_124m --seq-len 512 --out measure.py',
      'torchrun --nnodes 4 --nproc-per-node 8 --node-rank $NODE_RANK --master-addr $FIRST_NODE --master-port 29500 measure.py --batch-size 8 --precision BF16 --inter-node-gbps 100 --inter-node-transport TCP --out runs.csv',
    ]);
    expect(nodes.note).toMatch(/on each of the 4 nodes .* \(100 Gbps, TCP\): give yours/);
  });

  it("run tensor parallelism over a machine's GPUs as a layer replay, with ZeRO stage 1 across its groups", async () => {
    const h = await harnessOf({
      gpu: 'H100-SXM5-80GB',
      precision: 'BF16',
      gpusPerNode: 8,
      parallelism: { tensorParallel: 4, zeroStage: 1 },
      workload: { model: 'gpt2_124m', samples: 1e6, seqLen: 512 },
    });
    expect(h.commands[1]).toBe(
      'python3 measure.py --batch-size 8 --precision BF16 --zero-stage 1 --tensor-parallel 4 --gpus 8 --out runs.csv',
    );
    expect(h.note).toMatch(
      /tensor parallelism 4 is replayed layer by layer: each GPU runs its 1\/4 of the layers trainplan splits/,
    );
  });

  it('run a pipeline, plain 1F1B or interleaved, as a layer replay, its micro-batches the accumulation steps, across nodes by torchrun', async () => {
    const h = await harnessOf({
      gpu: 'H100-SXM5-80GB',
      precision: 'BF16',
      gpusPerNode: 8,
      nodes: 2,
      interNodeGbps: 400,
      gradAccumSteps: 8,
      parallelism: { tensorParallel: 4, pipelineParallel: 2, zeroStage: 1 },
    });
    expect(h.commands[1]).toBe(
      'torchrun --nnodes 2 --nproc-per-node 8 --node-rank $NODE_RANK --master-addr $FIRST_NODE --master-port 29500 measure.py --batch-size 8 --grad-accum-steps 8 --precision BF16 --zero-stage 1 --tensor-parallel 4 --pipeline-parallel 2 --inter-node-gbps 400 --inter-node-transport RDMA --out runs.csv',
    );
    expect(h.note).toMatch(
      /pipeline parallelism 2 is replayed as Megatron splits and schedules it: each stage its 1\/2 of the transformer blocks .* 1F1B over the 8 micro-batches/,
    );
    const interleaved = await harnessOf({
      gpu: 'H100-SXM5-80GB',
      precision: 'BF16',
      gpusPerNode: 4,
      gradAccumSteps: 4,
      parallelism: { pipelineParallel: 4, virtualPipelineStages: 3 },
    });
    expect(interleaved.commands[1]).toBe(
      'python3 measure.py --batch-size 8 --grad-accum-steps 4 --precision BF16 --pipeline-parallel 4 --virtual-pipeline-stages 3 --gpus 4 --out runs.csv',
    );
    expect(interleaved.note).toMatch(
      /each stage its 1\/4 of the transformer blocks in 3 model chunks 4 apart .* interleaved 1F1B over the 4 micro-batches/,
    );
    // ZeRO-3 under the pipeline: torchtitan's FSDP, each stage's weights gathered once a step.
    const sharded = await harnessOf({
      gpu: 'H100-SXM5-80GB',
      precision: 'BF16',
      gpusPerNode: 8,
      gradAccumSteps: 4,
      parallelism: { tensorParallel: 2, pipelineParallel: 2, zeroStage: 3 },
    });
    expect(sharded.commands[1]).toBe(
      'python3 measure.py --batch-size 8 --grad-accum-steps 4 --precision BF16 --zero-stage 3 --tensor-parallel 2 --pipeline-parallel 2 --gpus 8 --out runs.csv',
    );
    expect(sharded.note).toMatch(
      /the gradients reduce-scattered across the replicas after the last micro-batch; .*ZeRO stage 3 under the pipeline runs as torchtitan runs FSDP there: FSDP2 \(fully_shard\) on each model chunk, its weights gathered at the first micro-batch and kept through the step/,
    );
  });

  it('run expert parallelism as a layer replay: each GPU its experts, the all-to-alls the predictor costs', async () => {
    const h = await harnessOf({
      workload: { model: 'mixtral_8x7b', samples: 1e6 },
      gpu: 'H100-SXM5-80GB',
      precision: 'BF16',
      gpusPerNode: 8,
      batchSizePerGpu: 1,
      parallelism: { tensorParallel: 2, expertParallel: 8, zeroStage: 3 },
    });
    expect(h.commands.slice(0, 2)).toEqual([
      'npx trainplan harness --model mixtral_8x7b --out measure.py',
      'python3 measure.py --batch-size 1 --precision BF16 --zero-stage 3 --tensor-parallel 2 --expert-parallel 8 --gpus 8 --out runs.csv',
    ]);
    expect(h.note).toMatch(
      /expert parallelism 8 is replayed as Megatron-Core runs it \(expert tensor parallelism 1\): each GPU holds 1\/8 of every expert layer's experts/,
    );
  });

  it('run context parallelism as a layer replay: each GPU its share of the sequence, K and V round the ring', async () => {
    const h = await harnessOf({
      workload: { model: 'gpt2_124m', samples: 1e6, seqLen: 1024 },
      gpu: 'H100-SXM5-80GB',
      precision: 'BF16',
      gpusPerNode: 8,
      parallelism: { tensorParallel: 2, contextParallel: 2, zeroStage: 3 },
    });
    expect(h.commands[1]).toBe(
      'python3 measure.py --batch-size 8 --precision BF16 --zero-stage 3 --tensor-parallel 2 --context-parallel 2 --gpus 8 --out runs.csv',
    );
    expect(h.note).toMatch(
      /ZeRO stage 3 runs under FullyShardedDataParallel \(FULL_SHARD, over the data-parallel ranks of the groups\)/,
    );
    expect(h.note).toMatch(
      /context parallelism 2 is replayed as ring attention runs it: each GPU its 1\/2 of every sequence/,
    );
  });

  it('build a Hugging Face config with transformers at the length predicted, and say what differs from a tuned stack', async () => {
    const gpt2 = HF_CONFIGS.find((c) => c.id === 'gpt2')!;
    const h = await harnessOf({
      workload: {
        customModel: { huggingFaceConfig: JSON.stringify(gpt2.config) },
        samples: 1e6,
        seqLen: 256,
      },
      gpu: 'H100-SXM5-80GB',
      precision: 'AMP_BF16',
      softwareStack: 'MEGATRON',
    });
    expect(h.commands.slice(0, 2)).toEqual([
      'npx trainplan harness --out measure.py',
      'python3 measure.py --hf-config config.json --seq-len 256 --batch-size 8 --precision AMP_BF16 --out runs.csv',
    ]);
    expect(h.note).toMatch(/config\.json: the Hugging Face config of the request, saved beside measure\.py/);
    expect(h.note).toMatch(/the harness runs eager PyTorch, not MEGATRON/);
  });

  it('time FP8 under ZeRO 2-3 as the same layout in AMP_BF16, saying so: that run calibrates the FP8 estimate', async () => {
    const h = await harnessOf({
      gpu: 'H100-SXM5-80GB',
      precision: 'FP8',
      gpusPerNode: 2,
      parallelism: { zeroStage: 3 },
    });
    expect(h.commands[1]).toBe(
      'python3 measure.py --batch-size 8 --precision AMP_BF16 --zero-stage 3 --gpus 2 --out runs.csv',
    );
    expect(h.note).toMatch(
      /^the harness runs ZeRO stage 3 under FullyShardedDataParallel, where it does not run FP8 \(Transformer Engine\): these commands time 20 steps after 5 warm-up of the same layout in AMP_BF16/,
    );
    expect(h.note).not.toMatch(/Transformer Engine installed/);
    // (That such a run calibrates the FP8 estimate: test/measurements.test.ts.)
  });

  it('are none, with the reason, where the harness cannot run the configuration', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ gpu: 'B200', precision: 'FP4' }, /the harness has no FP4 mode/],
      [
        {
          gpu: 'H100-SXM5-80GB',
          precision: 'BF16',
          gpusPerNode: 8,
          gradAccumSteps: 3,
          parallelism: { tensorParallel: 2, pipelineParallel: 2, virtualPipelineStages: 3 },
        },
        /interleaved schedule runs micro-batches in groups of the 2 stages, as Megatron's does; this configuration has 3/,
      ],
      [
        {
          gpu: 'H100-SXM5-80GB',
          precision: 'BF16',
          gpusPerNode: 2,
          parallelism: { tensorParallel: 2, zeroStage: 1 },
        },
        /ZeRO stage 1 shards over data-parallel GPUs; this configuration has one replica/,
      ],
      [
        {
          gpu: 'H100-SXM5-80GB',
          precision: 'BF16',
          gpusPerNode: 2,
          parallelism: { tensorParallel: 2 },
          workload: {
            customModel: {
              huggingFaceConfig: JSON.stringify(HF_CONFIGS.find((c) => c.id === 'gpt2')!.config),
            },
            samples: 1e6,
          },
        },
        /splits a zoo model's layer replay by tensor, pipeline, context and expert parallelism, not a Hugging Face build; this configuration uses tensor parallelism 2/,
      ],
      [
        {
          gpu: 'H100-SXM5-80GB',
          precision: 'BF16',
          parallelism: { recompute: 'SELECTIVE', recomputeModules: ['CORE_ATTN', 'MLP'] },
        },
        /reruns the attention core \(core_attn\) only; this configuration reruns core_attn, mlp/,
      ],
      [
        {
          gpu: 'H100-SXM5-80GB',
          precision: 'BF16',
          parallelism: { recompute: 'SAVE_QKV_PROJ' },
        },
        /the harness recomputes selective or full only; this configuration uses save_qkv_proj recomputation/,
      ],
      [
        {
          gpu: 'H100-SXM5-80GB',
          precision: 'BF16',
          parallelism: { recompute: 'SELECTIVE' },
          workload: {
            customModel: {
              huggingFaceConfig: JSON.stringify(HF_CONFIGS.find((c) => c.id === 'gpt2')!.config),
            },
            samples: 1e6,
          },
        },
        /a Hugging Face model checkpoints whole blocks only/,
      ],
      [
        {
          gpu: 'H100-SXM5-80GB',
          precision: 'BF16',
          workload: { model: 'gpt2_124m', samples: 1e6, fineTuning: 'LORA' },
        },
        /not LoRA adapters/,
      ],
    ];
    for (const [input, why] of cases) {
      const h = await harnessOf(input);
      expect(h.commands, JSON.stringify(input)).toEqual([]);
      expect(h.note).toMatch(why);
      expect(h.note).toMatch(
        /time it with your own training code and record its step time with recordMeasurements/,
      );
    }
  });

  it("come with every ranked plan, at the plan's own batch, precision and GPUs", async () => {
    const r = await run(
      `query($input: RecommendInput!) { recommend(input: $input) {
        plans { nodes gpusPerNode batchSizePerGpu gradAccumSteps precision harness { commands } } } }`,
      {
        input: {
          workload: { model: 'resnet50_v1.5', samples: 1e7 },
          gpus: ['A100-SXM4-80GB', 'L4'],
          precisions: ['AMP_BF16', 'FP32'],
          maxNodes: 2,
          limit: 10,
          prices: [
            { gpu: 'A100-SXM4-80GB', usdPerGpuHour: 2 },
            { gpu: 'L4', usdPerGpuHour: 0.8 },
          ],
        },
      },
    );
    expect(r.errors).toBeUndefined();
    const plans = r.data!.recommend.plans as {
      nodes: number;
      gpusPerNode: number;
      batchSizePerGpu: number;
      gradAccumSteps: number;
      precision: string;
      harness: { commands: string[] };
    }[];
    expect(plans.length).toBeGreaterThan(1);
    for (const p of plans) {
      const line = p.harness.commands[1];
      expect(line).toContain(`--batch-size ${p.batchSizePerGpu} `);
      expect(line).toContain(`--precision ${p.precision} `);
      if (p.gradAccumSteps > 1) expect(line).toContain(`--grad-accum-steps ${p.gradAccumSteps} `);
      if (p.nodes > 1)
        expect(line).toMatch(new RegExp(`^torchrun --nnodes ${p.nodes} --nproc-per-node ${p.gpusPerNode} `));
      else if (p.gpusPerNode > 1) expect(line).toContain(`--gpus ${p.gpusPerNode} `);
      else expect(line).not.toMatch(/--gpus|torchrun/);
    }
  });
});
