// measure.py's Hugging Face builder (transformers) on CPU, with PyTorch 2 as users run it. Debian
// packages neither transformers nor a PyTorch it supports, so .ci/run installs both into
// .venv-harness from the pip indexes the machine is configured with (TRAINPLAN_HF_PYTHON names
// another Python). Where neither has them the suite is skipped, and its title says why.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { harnessScript, HARNESS_FILE } from '../service/harness-script.js';
import { readRunsFile } from '../cli/calibrate-runs.js';
import { runFromRow } from '../service/run-rows.js';
import { HF_MODEL_TYPES, parseHuggingFaceConfig } from '../predictor/import/index.js';
import { activationBytesPerSampleOn, stackMemory } from '../predictor/memory.js';
import { costOf } from '../predictor/predict.js';
import type { Precision } from '../predictor/types.js';
import { loadEfficiency } from '../seeds/catalog.js';
import { fromMeasurePython, ONE_STEP_ON_CPU, SAVED_BYTES } from './measure-python.js';
import { ROOT } from './spawn-server.js';

function pythonWithTransformers(): string | undefined {
  return [process.env.TRAINPLAN_HF_PYTHON, join(ROOT, '.venv-harness', 'bin', 'python')].find(
    (py) => py && spawnSync(py, ['-c', 'import torch, transformers'], { stdio: 'pipe' }).status === 0,
  );
}

const python = pythonWithTransformers();
const FIXTURES = new URL('./fixtures-harness/hf/', import.meta.url).pathname;
const configs = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => ({
    name: basename(f, '.json'),
    path: join(FIXTURES, f),
    config: JSON.parse(readFileSync(join(FIXTURES, f), 'utf8')) as Record<string, unknown>,
  }));
// Sequence length, or image size for ViT (the fixtures' images are 32 px; their position tables 128).
const LENGTH = 32;

const dir = mkdtempSync(join(tmpdir(), 'trainplan-harness-hf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fromPython = (lines: string[], arg: string): unknown => fromMeasurePython(python!, lines, [arg]);

describe.skipIf(!python)(
  `measure.py's transformers builder (${python ?? 'skipped: no Python with torch and transformers; .ci/run makes .venv-harness'})`,
  () => {
    it('has a fixture for every model_type the config importer reads', () => {
      expect(new Set(configs.map((c) => c.config.model_type))).toEqual(new Set(HF_MODEL_TYPES));
    });

    it("builds each config as the class the importer costs, trains a step, with the importer's weights and FLOPs", () => {
      const built = fromPython(
        [
          'import transformers',
          'from torch.utils.flop_counter import FlopCounterMode',
          'cpu = torch.device("cpu")',
          'out = {}',
          `for name, path, length in json.loads(sys.argv[1]):`,
          '    m, make_batch, loss, ran_at = measure.transformers_model(torch, path, length)',
          '    trainer = measure.Trainer(torch, m, loss, "FP32", cpu, "adam")',
          '    trainer.step(make_batch(2, cpu, trainer.input_dtype))',
          '    out[name] = {"parameters": sum(p.numel() for p in m.parameters()), "class": type(m).__name__, "length": ran_at, "attention": m.attention_ran}',
          // The linears of the first attention module (its output projection last): how many project
          // the input, three separate q, k, v or one fused.
          '    attn = next(mod for mod in m.modules() if type(mod).__name__.endswith(("Attention", "SelfAttention")))',
          '    out[name]["inputProjections"] = sum(1 for c in attn.modules() if isinstance(c, torch.nn.Linear) or type(c).__name__ == "Conv1D") - 1',
          // One sample's forward FLOPs as PyTorch's counter sees them: with attention and experts
          // in plain matmuls (it does not count CPU SDPA kernels or grouped expert GEMMs).
          'config_of = transformers.AutoConfig.from_pretrained',
          'def eager(*args, **kwargs):',
          '    c = config_of(*args, **kwargs)',
          '    c._attn_implementation = "eager"',
          '    c._experts_implementation = "eager"',
          '    return c',
          'transformers.AutoConfig.from_pretrained = eager',
          `for name, path, length in json.loads(sys.argv[1]):`,
          '    m, make_batch, loss, _ = measure.transformers_model(torch, path, length)',
          '    counter = FlopCounterMode(display=False)',
          '    with counter:',
          '        loss(m, make_batch(1, cpu, torch.float32))',
          '    out[name]["forwardFlops"] = counter.get_total_flops()',
          'print(json.dumps(out))',
        ],
        JSON.stringify(configs.map((c) => [c.name, c.path, LENGTH])),
      ) as Record<
        string,
        {
          parameters: number;
          class: string;
          length: number;
          forwardFlops: number;
          inputProjections: number;
          attention: string;
        }
      >;

      const expectedClass: Record<string, RegExp> = {
        bert: /^BertForMaskedLM$/,
        bert_cls: /^BertForSequenceClassification$/,
        bert_pretrain: /^BertForPreTraining$/,
        bert_squad: /^BertForQuestionAnswering$/,
        t5: /^T5ForConditionalGeneration$/,
        vit: /^ViTForImageClassification$/,
        vit_10: /^ViTForImageClassification$/,
      };
      for (const { name, config } of configs) {
        const b = built[name];
        expect(b.class, name).toMatch(expectedClass[name] ?? /(ForCausalLM|LMHeadModel)$/);
        expect(b.length, name).toBe(LENGTH);
        const imported = parseHuggingFaceConfig(readFileSync(join(FIXTURES, `${name}.json`), 'utf8'), {
          seqLen: LENGTH,
        }).model;
        const cost = costOf(imported);
        // The attention transformers runs the type with by default is the one the importer costs
        // (its runs say which: a run recorded from it is predicted so).
        expect(b.attention, `${name} attention`).toBe(imported.attention === 'eager' ? 'EAGER' : 'FUSED');
        const ours = cost.parameters;
        // The work: the importer's matmul-class layers (GEMMs, attention's two products, routed
        // experts at top-k tokens) against PyTorch's count of the same forward pass. What differs
        // is below 0.1%: RoPE's frequency outer product and Qwen2-MoE's shared-expert gate.
        const matmulFlops = cost.layers
          .filter((l) => l.opClass === 'matmul')
          .reduce((sum, l) => sum + l.forwardFlops * l.count, 0);
        expect(Math.abs(matmulFlops / b.forwardFlops - 1), `${name} forward FLOPs`).toBeLessThan(0.001);
        // What transformers trains that the zoo's builders leave out: small per-layer vectors and
        // gates, a few hundred weights per layer at full size (well under calibrate import's 0.5%).
        const layers = Number(config.num_hidden_layers);
        const notModelled: Record<string, number> = {
          // Qwen2-MoE's shared_expert_gate: Linear(hidden, 1) per layer.
          qwen2_moe: Number(config.hidden_size) * layers,
          // Qwen3's RMSNorms over each query and key head (q_norm, k_norm).
          qwen3_moe: 2 * Number(config.head_dim) * layers,
          // gpt-oss's attention sinks (one per head) and router bias (one per expert).
          gpt_oss: (Number(config.num_attention_heads) + Number(config.num_local_experts)) * layers,
        };
        expect(b.parameters - ours, name).toBe(notModelled[name] ?? 0);
        // Separate q, k and v linears where transformers has them (what stock code under autocast
        // keeps a copy of the input for each); multi-head latent attention has its own projections.
        const qkv = cost.layers.find((l) => l.name.endsWith('.qkv'));
        if (qkv) expect(qkv.projections ?? 1, `${name} q, k, v projections`).toBe(b.inputProjections);
        else expect(config.model_type, name).toMatch(/^deepseek_v[23]$/);
      }
      // Without id2label or num_labels, transformers builds a 2-way head (so the importer does too):
      // 8 classes fewer than the 10 of vit_10's id2label, each a row of weights and a bias.
      const vit = configs.find((c) => c.name === 'vit')!.config;
      expect(built.vit_10.parameters - built.vit.parameters).toBe(8 * (Number(vit.hidden_size) + 1));
    }, 180_000);

    it('runs the attention implementation asked for, says which ran, and refuses one transformers has not for the type', () => {
      const measure = (config: string, args: string[]) => {
        copyFileSync(join(FIXTURES, config), join(dir, config));
        return spawnSync(
          python!,
          [
            HARNESS_FILE.pathname,
            '--hf-config',
            config,
            '--batch-size',
            '1',
            '--seq-len',
            '16',
            ...ONE_STEP_ON_CPU,
            ...args,
          ],
          { cwd: dir, encoding: 'utf8' },
        );
      };
      const ran = (config: string, args: string[] = []) => {
        const r = measure(config, args);
        expect(r.status, r.stderr).toBe(0);
        return (JSON.parse(r.stdout) as Record<string, unknown>[])[0].attention;
      };
      // GPT-2 runs scaled_dot_product_attention by default, and its eager path when asked.
      expect(ran('gpt2.json')).toBe('FUSED');
      expect(ran('gpt2.json', ['--attention', 'eager'])).toBe('EAGER');
      expect(ran('bert_pretrain.json', ['--attention', 'eager'])).toBe('EAGER');
      // GPT-Neo has only its eager path in transformers: asked to fuse, the harness says so and stops.
      expect(ran('gpt_neo.json')).toBe('EAGER');
      const refused = measure('gpt_neo.json', ['--attention', 'fused']);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toMatch(
        /--attention fused: transformers \S+ does not run gpt_neo with attn_implementation="sdpa"/,
      );
    }, 180_000);

    it("keeps for backward what PyTorch saves of GPT-2's MLP: gelu_new op by op, gelu_pytorch_tanh as one kernel", () => {
      // Four GPT-2 blocks at 1,024 tokens, one sequence, no dropout (CPU dropout keeps fp32 masks
      // where CUDA keeps one byte), SDPA attention. gelu_new (transformers' NewGELUActivation, GPT-2's
      // default) is Python ops: autograd keeps x, tanh's output, 1 + tanh and x / 2.
      const saved: Record<string, number> = {};
      const imported: Record<string, ReturnType<typeof costOf>> = {};
      for (const act of ['gelu_new', 'gelu_pytorch_tanh']) {
        const config = {
          model_type: 'gpt2',
          n_embd: 768,
          n_layer: 4,
          n_head: 12,
          vocab_size: 50257,
          n_positions: 1024,
          resid_pdrop: 0,
          embd_pdrop: 0,
          attn_pdrop: 0,
          activation_function: act,
        };
        writeFileSync(join(dir, `gpt2-${act}.json`), JSON.stringify(config));
        imported[act] = costOf(parseHuggingFaceConfig(JSON.stringify(config), { seqLen: 1024 }).model);
        Object.assign(
          saved,
          fromPython(
            [
              ...SAVED_BYTES,
              'out = {}',
              'for precision in ["FP32", "BF16"]:',
              '    m, make_batch, loss, _ = measure.transformers_model(torch, sys.argv[1], 1024)',
              '    if precision == "BF16":',
              '        m = m.to(torch.bfloat16)',
              '    step = lambda: loss(m, make_batch(1, torch.device("cpu"), torch.float32))',
              `    out[f"${act} {precision}"] = saved_bytes(m, step, precision)`,
              'print(json.dumps(out))',
            ],
            join(dir, `gpt2-${act}.json`),
          ) as Record<string, number>,
        );
      }
      const eff = loadEfficiency();
      const ours = (
        act: string,
        precision: Precision,
        memory = stackMemory(undefined, precision, eff).eff.memory,
      ) => activationBytesPerSampleOn(imported[act], precision, 1, 'none', memory, 'fused');
      for (const act of ['gelu_new', 'gelu_pytorch_tanh'])
        for (const precision of ['FP32', 'BF16'] as const)
          expect(
            Math.abs(ours(act, precision) / saved[`${act} ${precision}`] - 1),
            `${act} ${precision}`,
          ).toBeLessThan(0.06);
      // Three activation-sized tensors per block more with gelu_new, as counted and as measured.
      const ffn = 1024 * 3072 * 4 * 4;
      expect((saved['gelu_new FP32'] - saved['gelu_pytorch_tanh FP32']) / ffn).toBeCloseTo(3, 1);
      expect((ours('gelu_new', 'FP32') - ours('gelu_pytorch_tanh', 'FP32')) / ffn).toBeCloseTo(3, 6);
      // The general rules (a fused GELU keeps its input) were 30% short of eager GPT-2.
      expect(ours('gelu_new', 'FP32', eff.memory) / saved['gelu_new FP32']).toBeLessThan(0.75);
    }, 180_000);

    it("keeps for backward what PyTorch saves of a Llama config, counted as predict's default stack counts it", () => {
      // A Llama at 1,024 tokens, one sequence: PyTorch's saved tensors (autograd's saved-tensor
      // hooks, every storage once; the weights and autocast's cached weight copies left out: the
      // memory model counts those as weights) against the activations predict counts on the
      // default stack (PYTORCH_EAGER), with fused attention (transformers' default, SDPA) and eager.
      const config = {
        model_type: 'llama',
        hidden_size: 1024,
        intermediate_size: 2816,
        num_attention_heads: 16,
        num_hidden_layers: 8,
        vocab_size: 32000,
        max_position_embeddings: 4096,
      };
      writeFileSync(join(dir, 'llama-1024.json'), JSON.stringify(config));
      const saved = fromPython(
        [
          ...SAVED_BYTES,
          // Each attention implementation transformers has for Llama: SDPA (its default) and eager.
          'import transformers',
          'config_of = transformers.AutoConfig.from_pretrained',
          'def with_attention(*args, **kwargs):',
          '    c = config_of(*args, **kwargs)',
          '    c._attn_implementation = ATTENTION',
          '    return c',
          'transformers.AutoConfig.from_pretrained = with_attention',
          'out = {}',
          'for ATTENTION, precision in [(a, p) for a in ["sdpa", "eager"] for p in ["FP32", "AMP_BF16", "BF16"]]:',
          '    m, make_batch, loss, _ = measure.transformers_model(torch, sys.argv[1], 1024)',
          '    if precision == "BF16":',
          '        m = m.to(torch.bfloat16)',
          '    step = lambda: loss(m, make_batch(1, torch.device("cpu"), torch.float32))',
          '    out[f"{ATTENTION} {precision}"] = saved_bytes(m, step, precision)',
          'print(json.dumps(out))',
        ],
        join(dir, 'llama-1024.json'),
      ) as Record<string, number>;
      const cost = costOf(parseHuggingFaceConfig(JSON.stringify(config), { seqLen: 1024 }).model);
      const eff = loadEfficiency();
      const ratio = (
        attention: 'fused' | 'eager',
        precision: Precision,
        memory = stackMemory(undefined, precision, eff).eff.memory,
      ) =>
        activationBytesPerSampleOn(cost, precision, 1, 'none', memory, attention) /
        saved[`${attention === 'fused' ? 'sdpa' : 'eager'} ${precision}`];
      // Every mode to the tensor (within 1%), AMP_BF16 with Hugging Face's separate q, k and v
      // projections each keeping its own autocast copy of the norm's output.
      for (const attention of ['fused', 'eager'] as const)
        for (const precision of ['FP32', 'AMP_BF16', 'BF16'] as const)
          expect(Math.abs(ratio(attention, precision) - 1), `${attention} ${precision}`).toBeLessThan(0.01);
      // The general rules missed stock RMSNorm's fp32 copies (17% short in AMP_BF16) and, with eager
      // attention in a BF16 model, the fp32 probabilities softmax keeps (40% short).
      expect(ratio('fused', 'AMP_BF16', eff.memory)).toBeLessThan(0.85);
      expect(ratio('eager', 'BF16', eff.memory)).toBeLessThan(0.65);
    }, 180_000);

    it("recomputes a config's blocks (gradient checkpointing): each block runs forward again, the gradients unchanged", () => {
      const [same, plainCalls, againCalls, blocks] = fromPython(
        [
          'def step(recompute):',
          '    torch.manual_seed(0)',
          '    m, make_batch, loss, _ = measure.transformers_model(torch, sys.argv[1], 32, recompute)',
          '    m.train()',
          '    torch.manual_seed(1)',
          '    ids = make_batch(2, torch.device("cpu"), torch.float32)',
          '    calls = [0]',
          '    for layer in m.model.layers: layer.register_forward_pre_hook(lambda *_: calls.__setitem__(0, calls[0] + 1))',
          '    loss(m, ids).backward()',
          '    return [p.grad for p in m.parameters()], calls[0], len(m.model.layers)',
          'plain, plain_calls, blocks = step("none")',
          'again, again_calls, _ = step("full")',
          'same = all(torch.allclose(a, b, rtol=1e-4, atol=1e-6) for a, b in zip(plain, again))',
          'print(json.dumps([same, plain_calls, again_calls, blocks]))',
        ],
        join(FIXTURES, 'llama.json'),
      ) as [boolean, number, number, number];
      expect(same).toBe(true);
      expect(plainCalls).toBe(blocks);
      expect(againCalls).toBe(2 * blocks);
      // Selective (the attention core alone) is a layer replay's: a Hugging Face block is checkpointed whole.
      const selective = spawnSync(
        python!,
        [
          HARNESS_FILE.pathname,
          '--hf-config',
          join(FIXTURES, 'llama.json'),
          '--batch-size',
          '1',
          '--recompute',
          'selective',
          '--device',
          'cpu',
        ],
        { encoding: 'utf8' },
      );
      expect(selective.status).toBe(2);
      expect(selective.stderr).toMatch(
        /--recompute selective: a Hugging Face model checkpoints whole blocks only/,
      );
    }, 120_000);

    it('times ZeRO-3 under FullyShardedDataParallel, one unit per block, and imports the run at that layout', () => {
      copyFileSync(join(FIXTURES, 'llama.json'), join(dir, 'llama-zero.json'));
      // Two processes on this CPU (gloo), one timed step; the row measure.py wrote.
      const twoProcesses = (args: string) => {
        const out = `zero-${args.replace(/[^\w]+/g, '-')}.csv`;
        execFileSync(
          python!,
          [
            HARNESS_FILE.pathname,
            ...`--batch-size 1 --steps 1 --warmup 1 --device cpu --gpus 2 ${args} --out ${out}`.split(' '),
          ],
          { cwd: dir, stdio: 'pipe' },
        );
        return readRunsFile(join(dir, out))[0];
      };
      const row = twoProcesses(
        '--hf-config llama-zero.json --precision BF16 --recompute full --zero-stage 3',
      );
      expect(row.note).toMatch(
        /FullyShardedDataParallel on gloo, each step the slowest process's; full recomputation; ZeRO stage 3: FULL_SHARD, one unit per LlamaDecoderLayer, bf16 copies of the fp32 master shards gathered, gradients reduced in bf16; builder transformers; parameters 218944;/,
      );
      expect(runFromRow(row, dir)).toMatchObject({
        gpusPerNode: 2,
        precision: 'BF16',
        parallelism: { tensorParallel: 1, pipelineParallel: 1, zeroStage: 3, recompute: 'full' },
      });
      // ZeRO-2 on the layer replay: one unit per replayed layer with weights; accumulating, every
      // micro-batch reduce-scatters its gradients (no no_sync, which would keep them whole); under
      // AMP FSDP's mixed precision gathers bf16 copies and reduces in fp32: as trainplan costs it.
      copyFileSync(
        new URL('./fixtures-harness/tiny-layers.json', import.meta.url),
        join(dir, 'tiny-layers.json'),
      );
      const two = twoProcesses(
        '--layers tiny-layers.json --zero-stage 2 --grad-accum-steps 2 --precision AMP_BF16',
      );
      expect(two.note).toMatch(
        /each step 2 micro-batches of 1 accumulated, each one's gradients reduce-scattered;.*ZeRO stage 2: SHARD_GRAD_OP, one unit per Conv2d, Embedding, Experts, LayerNorm, Linear, Rnn, 16-bit copies of the fp32 shards gathered, gradients reduced in fp32 \(mixed precision\);/,
      );
      expect(runFromRow(two, dir)).toMatchObject({
        gradAccumSteps: 2,
        precision: 'AMP_BF16',
        parallelism: { zeroStage: 2 },
      });

      // ZeRO-3 across tensor-parallel groups: FullyShardedDataParallel over the data-parallel ranks,
      // each sharding its tensor-parallel share (ViT-B/16 at 32 px, TP 2 x DP 2 on four processes).
      writeFileSync(join(dir, 'vit.py'), harnessScript('vit_b16', 32));
      execFileSync(
        python!,
        [
          join(dir, 'vit.py'),
          ...'--batch-size 1 --steps 1 --warmup 1 --device cpu --gpus 4 --tensor-parallel 2 --zero-stage 3 --out vit-tp-zero.csv'.split(
            ' ',
          ),
        ],
        { cwd: dir, stdio: 'pipe' },
      );
      const [tpZero] = readRunsFile(join(dir, 'vit-tp-zero.csv'));
      expect(tpZero.note).toMatch(
        /tensor parallel 2 x data parallel 2 over 4 processes .*: 24 row-parallel all-reduces per pass, .*; ZeRO stage 3: FULL_SHARD, one unit per .*RowParallel;/,
      );
      expect(runFromRow(tpZero, dir).parallelism).toMatchObject({ tensorParallel: 2, zeroStage: 3 });

      // ZeRO-3 with expert parallelism: each expert layer's experts a unit sharded over the ranks
      // holding them, the rest over the data-parallel ranks (a tiny mixture of experts, EP 2 on two).
      copyFileSync(new URL('./fixtures-harness/tiny-moe.json', import.meta.url), join(dir, 'tiny-moe.json'));
      const moe = twoProcesses('--layers tiny-moe.json --zero-stage 3 --expert-parallel 2');
      expect(moe.note).toMatch(
        /expert parallel 2: 4 all-to-alls per pass, .*; ZeRO stage 3: FULL_SHARD, one unit per layer with weights, each expert layer's experts over the ranks holding them;/,
      );
      expect(runFromRow(moe, dir).parallelism).toMatchObject({ expertParallel: 2, zeroStage: 3 });
    }, 240_000);

    it("times ZeRO-3 under a pipeline as torchtitan runs it (FSDP2, each stage's weights gathered once a step) and imports the run at that layout", () => {
      // ViT-B/16 at 32 px, two stages x tensor parallel 2 x two replicas on eight processes, two
      // micro-batches, BF16 (fp32 shards, bf16 compute, bf16 gradient reduction, as trainplan costs BF16's).
      writeFileSync(join(dir, 'vit-pp.py'), harnessScript('vit_b16', 32));
      execFileSync(
        python!,
        [
          join(dir, 'vit-pp.py'),
          ...'--batch-size 1 --grad-accum-steps 2 --precision BF16 --steps 1 --warmup 1 --device cpu --gpus 8 --tensor-parallel 2 --pipeline-parallel 2 --zero-stage 3 --out vit-pp-zero.csv'.split(
            ' ',
          ),
        ],
        { cwd: dir, stdio: 'pipe' },
      );
      const [row] = readRunsFile(join(dir, 'vit-pp-zero.csv'));
      // The row-parallel all-reduces counted through FSDP2's wrapping (fully_shard renames each
      // sharded layer's class): ViT-B/16's 12 blocks, two row-parallel linears each, over the stages.
      expect(row.note).toMatch(
        /pipeline parallel 2 x tensor parallel 2 x data parallel 2 over 8 processes .*: 1F1B over 2 micro-batches, .*, 24 row-parallel all-reduces per pass, .*; ZeRO stage 3: FSDP2 \(fully_shard\) per model chunk, one unit per layer with weights, kept gathered through the step and reduce-scattered at each chunk's last micro-batch \(torchtitan's FSDP under a pipeline\), bf16 copies of the fp32 master shards gathered, gradients reduced in bf16;/,
      );
      expect(runFromRow(row, dir)).toMatchObject({
        gpusPerNode: 8,
        gradAccumSteps: 2,
        precision: 'BF16',
        parallelism: { tensorParallel: 2, pipelineParallel: 2, zeroStage: 3 },
      });
    }, 180_000);

    it('times a config end to end: the run records the length it ran at and imports with its weights checked', () => {
      copyFileSync(join(FIXTURES, 'llama.json'), join(dir, 'llama.json'));
      for (const precision of ['FP32', 'AMP_BF16', 'BF16'])
        execFileSync(
          python!,
          [
            HARNESS_FILE.pathname,
            '--hf-config',
            'llama.json',
            '--batch-size',
            '2',
            '--steps',
            '2',
            '--warmup',
            '1',
            '--precision',
            precision,
            '--device',
            'cpu',
            '--out',
            'runs.csv',
          ],
          { cwd: dir, stdio: 'pipe' },
        );
      const rows = readRunsFile(join(dir, 'runs.csv'));
      expect(rows.map((r) => r.precision)).toEqual(['FP32', 'AMP_BF16', 'BF16']);
      for (const row of rows) {
        // No --seq-len: 1024 tokens, cut to the config's 128 positions, and the run says so (the
        // importer's default for this config would be its 128 too, but for another it differs).
        expect(row).toMatchObject({ model: 'llama.json', seq_len: '128', gpu: 'cpu' });
        expect(row.note).toMatch(/builder transformers; parameters 218944; torch 2\./);
        const run = runFromRow(row, dir);
        expect(run.workload.seqLen).toBe(128);
        expect(run.workload.customModel).toMatchObject({
          huggingFaceConfig: readFileSync(join(dir, 'llama.json'), 'utf8'),
        });
      }
      // The same row recorded for another config (one layer more) is refused: it timed another network.
      const deeper = { ...JSON.parse(readFileSync(join(dir, 'llama.json'), 'utf8')), num_hidden_layers: 3 };
      writeFileSync(join(dir, 'llama-3-layers.json'), JSON.stringify(deeper));
      expect(() => runFromRow({ ...rows[0], model: 'llama-3-layers.json' }, dir)).toThrow(
        /the run trained 218,944 weights, but llama-3-layers\.json has 2\d\d,\d\d\d: it timed another network/,
      );
    }, 180_000);
  },
);
