// `trainplan evaluate --llm`: the analytical predictor on the published LLM runs
// (seeds/measurements/llm_train.csv), each predicted at its own layout under the software stack its
// framework names; FP8/BF16 speed ratios of runs published in both precisions at the same layout; and
// whole pre-training campaigns (llm_campaign_gpu_hours.csv) as GPU-hours, analytically and as
// `predict` answers them (the learned correction applied); and the model FLOPs count (MFU's) against
// the runs' published TFLOPS and MFU.
import { getGpu, loadEfficiency, PREDICTOR_CARD_FILE } from '../seeds/catalog.js';
import { SOFTWARE_FILE } from '../seeds/tables.js';
import {
  fittedLlmRuns,
  loadLlmArchitectures,
  loadLlmCampaigns,
  loadLlmRuns,
  moeLlmRuns,
  type LlmCampaign,
  type LlmRun,
} from '../seeds/llm.js';
import { familyOf, llmModel, llmSourceOf, predictLlmRun, type LlmRunPrediction } from '../predictor/llm.js';
import { predict, type PredictRequest } from '../predictor/predict.js';
import { publishedRunFlops, type PublishedRunFlops } from '../predictor/published-mfu.js';
import { predictCorrected } from '../predictor/corrected.js';
import { correctionInputOf, learnedPredictor } from '../predictor/learned/model.js';
import { llmExamples } from '../predictor/learned/train.js';
import { readFileSync, writeFileSync } from 'node:fs';
import {
  overrideStackEffects,
  runsStackOf,
  softwareFile,
  SOFTWARE_STACKS,
  stackOfFramework,
  type SoftwareStack,
  type StackEffects,
} from '../predictor/software.js';
import type { Efficiency } from '../predictor/step.js';

const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '–');
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Each run predicted at its layout (default: the latest published version of each measured run). */
export function llmPredictions(
  eff: Efficiency = loadEfficiency(),
  stackOf: (r: LlmRun) => SoftwareStack = (r) => stackOfFramework(r.framework),
  runs: LlmRun[] = fittedLlmRuns(),
) {
  const archs = new Map(loadLlmArchitectures().map((a) => [a.model, a]));
  return runs.map((r) => predictLlmRun(r, archs, stackOf(r), eff));
}

/**
 * Runs on GPUs that no latest run used: versions their source later replaced (is_latest 0; today
 * torchtitan's A100 figures of 2024-04, replaced by H100 ones), so no stack effect and no tree was
 * fitted on them or on their GPU. What a GPU new to LLM training gets, checked against measurements.
 */
export function otherGpuRuns(): LlmRun[] {
  const runs = loadLlmRuns();
  const fittedGpus = new Set(runs.filter((r) => r.isLatest).map((r) => r.gpu));
  return runs.filter((r) => !r.isLatest && r.tokensPerSecondPerGpu !== null && !fittedGpus.has(r.gpu));
}

export const ape = (p: LlmRunPrediction) =>
  Math.abs(p.tokensPerSecondPerGpu! - p.run.tokensPerSecondPerGpu!) / p.run.tokensPerSecondPerGpu!;

function table(title: string, preds: LlmRunPrediction[], key: (p: LlmRunPrediction) => string): string {
  const groups = new Map<string, number[]>();
  for (const p of preds) groups.set(key(p), [...(groups.get(key(p)) ?? []), ape(p)]);
  const lines = [`| ${title} | rows | MAPE | mean predicted / measured |`, '|---|---:|---:|---:|'];
  const ratio = (ps: LlmRunPrediction[]) =>
    Math.exp(mean(ps.map((p) => Math.log(p.tokensPerSecondPerGpu! / p.run.tokensPerSecondPerGpu!))));
  lines.push(`| **all** | ${preds.length} | ${pct(mean(preds.map(ape)))} | ${ratio(preds).toFixed(2)} |`);
  for (const [g, errs] of [...groups].sort()) {
    const ps = preds.filter((p) => key(p) === g);
    lines.push(`| ${g} | ${errs.length} | ${pct(mean(errs))} | ${ratio(ps).toFixed(2)} |`);
  }
  return lines.join('\n');
}

/**
 * One published run's model FLOPs as trainplan counts them (predictor/published-mfu.ts) beside the
 * source's own: the FLOPs per token its published TFLOPS per GPU imply, and the MFU trainplan gives at
 * the run's measured throughput beside the MFU it published.
 */
export interface ModelFlopsCheck extends PublishedRunFlops {
  run: LlmRun;
  /** FLOPs per token the published TFLOPS per GPU imply (TFLOPS / tokens per second per GPU). */
  publishedPerToken: number | null;
  /** The MFU the source published (against its own peak). */
  publishedMfu: number | null;
}

/** The latest published runs of a known architecture with a published model TFLOPS or MFU. */
export function modelFlopsChecks(runs: LlmRun[] = loadLlmRuns()): ModelFlopsCheck[] {
  return runs.flatMap((run) => {
    const f = run.tflopsPerGpu !== null || run.mfu !== null ? publishedRunFlops(run) : undefined;
    if (!f) return [];
    const publishedPerToken =
      run.tflopsPerGpu === null ? null : (run.tflopsPerGpu * 1e12) / run.tokensPerSecondPerGpu!;
    return [{ ...f, run, publishedPerToken, publishedMfu: run.mfu }];
  });
}

/** Per source, model family and task: how trainplan's count compares with the published figures. */
export function formatModelFlopsChecks(checks: ModelFlopsCheck[] = modelFlopsChecks()): string {
  const range = (xs: number[]) =>
    xs.length ? `${Math.min(...xs).toFixed(3)}-${Math.max(...xs).toFixed(3)}` : '–';
  const groups = new Map<string, ModelFlopsCheck[]>();
  for (const c of checks) {
    const k = `${llmSourceOf(c.run).replace(/^https:\/\/docs.nvidia.com\/.*$/, 'NeMo docs')} | ${familyOf(c.run.model)} | ${c.run.task}`;
    groups.set(k, [...(groups.get(k) ?? []), c]);
  }
  const lines = [
    "Model FLOPs (predictor/utilization.ts) against the published runs' own: trainplan's count / the count their TFLOPS per GPU imply (all keys; causal attention at half), and trainplan's MFU at their throughput / their MFU",
    '| source | family | task | runs | / published TFLOPS, all keys | / published TFLOPS, causal half | MFU / published MFU |',
    '|---|---|---|---:|---:|---:|---:|',
  ];
  for (const [k, cs] of [...groups].sort()) {
    const tf = cs.filter((c) => c.publishedPerToken !== null);
    const mfu = cs.filter((c) => c.mfu !== null && c.publishedMfu !== null);
    lines.push(
      `| ${k} | ${cs.length} | ${range(tf.map((c) => c.perToken.ALL_KEYS / c.publishedPerToken!))} | ${range(tf.map((c) => c.perToken.CAUSAL_HALF / c.publishedPerToken!))} | ${range(mfu.map((c) => c.mfu! / c.publishedMfu!))} |`,
    );
  }
  return lines.join('\n');
}

/** Runs published in BF16 and FP8 at the same layout: measured and predicted FP8/BF16 speed ratios. */
export function fp8Pairs(preds: LlmRunPrediction[]) {
  const key = (r: LlmRun) =>
    [
      r.source,
      r.model,
      r.gpu,
      r.numGpus,
      r.seqLen,
      r.microBatch,
      r.globalBatch,
      r.tensorParallel,
      r.pipelineParallel,
      r.contextParallel,
      r.virtualPipeline,
      r.zeroOrFsdp,
      r.activationCheckpointing,
    ].join('|');
  const by = new Map<string, Partial<Record<'BF16' | 'FP8', LlmRunPrediction>>>();
  for (const p of preds) {
    if (!p.tokensPerSecondPerGpu) continue;
    const k = key(p.run);
    by.set(k, { ...by.get(k), [p.run.precision]: p });
  }
  return [...by.values()]
    .filter((v) => v.BF16 && v.FP8 && v.BF16.run.gpu.startsWith('H100'))
    .map((v) => ({
      run: v.FP8!.run,
      measured: v.FP8!.run.tokensPerSecondPerGpu! / v.BF16!.run.tokensPerSecondPerGpu!,
      predicted: v.FP8!.tokensPerSecondPerGpu! / v.BF16!.tokensPerSecondPerGpu!,
    }));
}

/**
 * A pre-training campaign predicted as a tuned stack at its published layout. Llama 2's paper
 * (Touvron et al. 2023, arXiv:2307.09288, section 2.2.1 and table 1) gives the GPUs (A100-80GB), the
 * network (200 Gbps per GPU end-point, InfiniBand or RoCE: 1,600 Gbps per 8-GPU node), sequence 4,096
 * and a 4M-token global batch (1,024 sequences), not the parallel layout. Assumed: FSDP (ZeRO-3) data
 * parallelism with one sequence per GPU, so 1,024 GPUs (128 nodes of 8), the attention core recomputed
 * in backward (FlashAttention), which the 80 GB cards hold for 7B and 13B.
 */
export function campaignRequests(): (
  { campaign: LlmCampaign; error: string } | { campaign: LlmCampaign; req: PredictRequest; gpus: number }
)[] {
  const archs = new Map(loadLlmArchitectures().map((a) => [a.model, a]));
  return loadLlmCampaigns()
    .filter(
      (c) =>
        c.gpuHours !== null &&
        c.tokensTrained !== null &&
        c.seqLen !== null &&
        c.globalBatchTokens !== null &&
        archs.has(c.model),
    )
    .filter((c) => c.model === 'Llama-2-7B' || c.model === 'Llama-2-13B')
    .map((c) => {
      const model = llmModel(archs.get(c.model)!, c.seqLen!);
      if (typeof model === 'string') return { campaign: c, error: model };
      const gpu = getGpu(c.gpu)!;
      // The published global batch ("4M" tokens) in whole sequences, rounded to a multiple of 1,024:
      // 1,024 sequences of 4,096 (4.19M tokens).
      const published = c.globalBatchTokens!,
        globalSequences = Math.round((published.low + published.high) / 2 / c.seqLen! / 1024) * 1024,
        gpus = globalSequences;
      const req: PredictRequest = {
        model,
        gpu,
        precision: 'BF16',
        batchSizePerGpu: 1,
        gpusPerNode: 8,
        nodes: gpus / 8,
        gradAccumSteps: 1,
        interNodeGbps: 1600,
        // FlashAttention recomputes the attention core in backward: what selective recomputation models.
        parallelism: { tensorParallel: 1, pipelineParallel: 1, zeroStage: 3, recompute: 'selective' },
        stack: 'TUNED',
        samples: c.tokensTrained!,
      };
      return { campaign: c, req, gpus };
    });
}

/** The campaigns by the analytical predictor alone (what the stack effects were fitted with). */
export function campaignHours(eff: Efficiency = loadEfficiency()) {
  return campaignRequests().map((c) => {
    if ('error' in c) return c;
    const p = predict(c.req, eff);
    const gpuHours = p.totalHours! * c.gpus;
    return { campaign: c.campaign, gpuHours, ratio: gpuHours / c.campaign.gpuHours!, fits: p.fitsInMemory };
  });
}

/**
 * The campaigns as `predict` answers them: the analytical estimate with the learned correction, and
 * its P10-P90. No Llama 2 run on an A100 trained the trees (the only ones are superseded torchtitan
 * rows), and no campaign figure did.
 */
export async function learnedCampaignHours(eff: Efficiency = loadEfficiency()) {
  const learned = await learnedPredictor();
  const out = [];
  for (const c of campaignRequests()) {
    if ('error' in c) continue;
    const p = await predictCorrected(c.req, learned, eff);
    const gpuHours = p.totalHours! * c.gpus;
    out.push({
      campaign: c.campaign,
      predictor: p.predictor,
      gpuHours,
      ratio: gpuHours / c.campaign.gpuHours!,
      p10: (gpuHours * p.stepTimeMsP10) / p.stepTimeMs,
      p90: (gpuHours * p.stepTimeMsP90) / p.stepTimeMs,
    });
  }
  return out;
}

/** The learned campaign lines of `evaluate --llm` (after the analytical ones). */
export async function formatLearnedCampaigns(eff: Efficiency = loadEfficiency()): Promise<string> {
  const round = (x: number) => Math.round(x).toLocaleString('en-US');
  return (await learnedCampaignHours(eff))
    .map(
      (c) =>
        `${c.campaign.model} campaign on ${c.campaign.gpu} as predict answers it (${c.predictor === 'analytical' ? 'the learned model did not load: the analytical estimate' : `${c.predictor}: the learned correction applied`}): ${round(c.gpuHours)} GPU-hours, P10-P90 ${round(c.p10)} to ${round(c.p90)}, vs published ${c.campaign.gpuHours!.toLocaleString('en-US')} (x${c.ratio.toFixed(2)})`,
    )
    .join('\n\n');
}

/**
 * The runs on a GPU no fitted run used (otherGpuRuns) with the learned correction, as `predict`
 * answers an architecture with no published runs: no tree trained on them or on any LLM run on their
 * GPU (the GPU's benchmark rows and their models' H100 runs, yes), so what a GPU new to LLM training
 * gets from the trees.
 */
export async function learnedOtherGpuRuns(eff: Efficiency = loadEfficiency()) {
  const learned = await learnedPredictor();
  // Each run as the trees take it: its analytical estimate at its layout and stack.
  const ex = llmExamples(eff, otherGpuRuns());
  const analytical = (e: (typeof ex)[number]) => ({ run: e.run!, tokensPerSecondPerGpu: e.aware.throughput });
  if (!learned.predictor)
    return ex.map((e) => ({ ...analytical(e), predictor: 'analytical', p10: undefined, p90: undefined }));
  // Without the published architectures the model is: predict would calibrate it by its published
  // runs on the GPU (predictor/learned/published-calibration.ts), which are these very runs.
  const c = await learned.predictor.correct(
    ex.map(correctionInputOf).map((it) => ({ ...it, model: { ...it.model, publishedAs: undefined } })),
  );
  // The correction multiplies the step time: throughput divides by it (its P90 step is the P10 throughput).
  return ex.map((e, i) => ({
    run: e.run!,
    predictor: learned.predictor!.name,
    tokensPerSecondPerGpu: e.aware.throughput / c.mid[i],
    p10: e.aware.throughput / c.hi[i],
    p90: e.aware.throughput / c.lo[i],
  }));
}

/** formatLlmEvaluation's lines that ask the learned model (async): the campaigns, and the runs on a GPU new to LLM runs. */
export async function formatLearnedLines(eff: Efficiency = loadEfficiency()) {
  const other = await learnedOtherGpuRuns(eff);
  const predictor = other[0]?.predictor;
  return {
    campaigns: await formatLearnedCampaigns(eff),
    otherGpu: other.length
      ? [
          `The same runs with the learned correction (${predictor === 'analytical' ? 'the learned model did not load: the analytical estimate' : `${predictor}: the learned correction applied, not calibrated by the architecture's published runs, which are these; no tree trained on these runs or on an LLM run on their GPU, their models' H100 runs did`}): MAPE ${pct(mean(other.map(ape)))}`,
          table('GPU, model', other, (p) => `${p.run.gpu} ${p.run.model}`),
        ].join('\n\n')
      : '',
  };
}

/** `learned`: formatLearnedLines' lines, printed after the analytical ones they answer (they are async). */
export function formatLlmEvaluation(
  eff: Efficiency = loadEfficiency(),
  learned?: { campaigns: string; otherGpu: string },
): string {
  const all = llmPredictions(eff);
  const ok = all.filter((p) => p.tokensPerSecondPerGpu !== undefined);
  const skipped = new Map<string, number>();
  for (const p of all)
    if (p.error) {
      const reason = p.error.replace(/^[^:]+: /, '');
      skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
    }
  const shortSource = (p: LlmRunPrediction) => p.run.source.replace(/@.*$/, '');
  const family = (p: LlmRunPrediction) => familyOf(p.run.model);
  const pairs = fp8Pairs(ok);
  const pairErr = pairs.map((x) => Math.abs(x.predicted - x.measured) / x.measured);
  const camp = campaignHours(eff);
  const other = llmPredictions(eff, undefined, otherGpuRuns()).filter(
    (p) => p.tokensPerSecondPerGpu !== undefined,
  );
  const moe = llmPredictions(eff, undefined, moeLlmRuns());
  const moeOk = moe.filter((p) => p.tokensPerSecondPerGpu !== undefined);
  const moeSkipped = new Map<string, number>();
  for (const p of moe)
    if (p.error)
      moeSkipped.set(
        `${p.run.model}: ${p.error.replace(/^[^:]+: /, '')}`,
        (moeSkipped.get(`${p.run.model}: ${p.error.replace(/^[^:]+: /, '')}`) ?? 0) + 1,
      );
  return [
    `LLM runs (latest version of each, analytical predictor at the run's layout and stack): ${all.length} rows, ${ok.length} predicted, MAPE ${pct(mean(ok.map(ape)))}`,
    table('source', ok, shortSource),
    table('stack', ok, (p) => stackOfFramework(p.run.framework)),
    fitLine(ok),
    table('precision', ok, (p) => p.run.precision),
    table('GPU', ok, (p) => p.run.gpu),
    table('model family', ok, family),
    `Runs on a GPU no fitted run used (replaced in their source, never fitted on): ${other.length} predicted, MAPE ${pct(mean(other.map(ape)))}`,
    table('GPU, model', other, (p) => `${p.run.gpu} ${p.run.model}`),
    ...(learned?.otherGpu ? [learned.otherGpu] : []),
    `Mixture-of-experts runs (experts and expert parallelism as published; in-sample: the expert GEMM efficiency is fitted on them, held out by model above; no tree is trained on them): ${moe.length} rows, ${moeOk.length} predicted, MAPE ${pct(mean(moeOk.map(ape)))}`,
    table('model, stack', moeOk, (p) => `${p.run.model} ${stackOfFramework(p.run.framework)}`),
    ...[...moeSkipped].map(([r, n]) => `  not predicted: ${n}  ${r}`),
    `FP8/BF16 speed ratio on H100, ${pairs.length} published pairs at the same layout: measured mean ${mean(pairs.map((x) => x.measured)).toFixed(2)}, predicted mean ${mean(pairs.map((x) => x.predicted)).toFixed(2)}, mean |error| ${pct(mean(pairErr))}, within 10%: ${pairErr.filter((e) => e <= 0.1).length}/${pairs.length}`,
    ...camp.map((c) =>
      'error' in c
        ? `${c.campaign.model}: ${c.error}`
        : `${c.campaign.model} campaign on ${c.campaign.gpu}: predicted ${Math.round(c.gpuHours!).toLocaleString('en-US')} GPU-hours vs published ${c.campaign.gpuHours!.toLocaleString('en-US')} (x${c.ratio!.toFixed(2)})${c.fits ? '' : ' (layout does not fit in memory)'}`,
    ),
    ...(learned?.campaigns ? [learned.campaigns] : []),
    formatModelFlopsChecks(),
    'not predicted:',
    ...[...skipped].sort((a, b) => b[1] - a[1]).map(([r, n]) => `  ${n}  ${r}`),
  ].join('\n\n');
}

/**
 * Whether `predict` (what a user's query gets: the stack's memory rules, the run's stated or scripted
 * recomputation, not the memory check's per-source optimizer recipes) fits each run in its GPU.
 */
function fitLine(ok: LlmRunPrediction[]): string {
  const byStack = new Map<string, LlmRunPrediction[]>();
  for (const p of ok) {
    const stack = stackOfFramework(p.run.framework);
    byStack.set(stack, [...(byStack.get(stack) ?? []), p]);
  }
  const parts = [...byStack].map(([stack, ps]) => {
    const misses = ps.filter((p) => !p.prediction!.fitsInMemory);
    return `${stack} ${ps.length - misses.length} of ${ps.length}${misses.length ? ` (misses: ${misses.map((p) => `${p.run.id} ${p.prediction!.memory.totalGb.toFixed(1)} GB`).join(', ')})` : ''}`;
  });
  return `Predicted to fit in their GPUs' memory through predict, at their own layout and stack: ${parts.join('; ')}`;
}

// GEMM fractions above 1: the kernel tables are medians over shapes of the kernels XLA picked, below
// the best kernels a tuned stack calls (H100 BF16: table 0.78-0.80 of peak at the largest shapes).
const FIT_GRID = {
  matmulEfficiency: [0.8, 0.9, 1, 1.1],
  pointwiseBytesFactor: [0.25, 0.5],
  commOverlap: [0.5, 0.8, 1],
  tensorParallelOverlap: [0, 0.5, 0.8],
};
type Fit = Pick<
  StackEffects,
  'matmulEfficiency' | 'pointwiseBytesFactor' | 'commOverlap' | 'tensorParallelOverlap'
>;
export const FITTED_STACKS: SoftwareStack[] = ['MEGATRON', 'TORCH_COMPILE'];

/** The runs a stack predicts under candidate effects (those it cannot predict left out); the stack's effects are restored after. */
function predictedUnder(
  runs: LlmRun[],
  stack: SoftwareStack,
  effects: Partial<StackEffects>,
  eff: Efficiency,
): LlmRunPrediction[] {
  const archs = new Map(loadLlmArchitectures().map((a) => [a.model, a]));
  const restore = overrideStackEffects(stack, effects);
  try {
    return runs
      .map((r) => predictLlmRun(r, archs, stack, eff))
      .filter((p) => p.tokensPerSecondPerGpu !== undefined);
  } finally {
    restore();
  }
}

/** log(predicted / measured throughput) of a predicted run. */
const logErr = (p: LlmRunPrediction) => Math.log(p.tokensPerSecondPerGpu! / p.run.tokensPerSecondPerGpu!);

/** Mean |log error| of predicted runs; Infinity for none (a candidate that predicts nothing never wins). */
const meanAbsLogError = (ps: LlmRunPrediction[]) =>
  ps.length ? mean(ps.map((p) => Math.abs(logErr(p)))) : Infinity;

/** Mean |log(predicted / measured)| of one stack's runs under candidate effects. */
const stackLoss = (runs: LlmRun[], stack: SoftwareStack, fit: Fit, eff: Efficiency = loadEfficiency()) =>
  meanAbsLogError(predictedUnder(runs, stack, fit, eff));

/** The grid point with the least loss on `runs` (no runs: effects 1, 1, 1, 0, i.e. unfitted). */
export function fitStack(
  runs: LlmRun[],
  stack: SoftwareStack,
  eff: Efficiency = loadEfficiency(),
): Fit & { loss: number } {
  let best: Fit & { loss: number } = {
    matmulEfficiency: 1,
    pointwiseBytesFactor: 1,
    commOverlap: 1,
    tensorParallelOverlap: 0,
    loss: Infinity,
  };
  // An effect the stack holds (software.json heldInFit) is not the runs' to choose, in any fold.
  const held = softwareFile().stacks[stack].heldInFit;
  const commOverlaps = held?.commOverlap !== undefined ? [held.commOverlap] : FIT_GRID.commOverlap;
  for (const matmulEfficiency of FIT_GRID.matmulEfficiency)
    for (const pointwiseBytesFactor of FIT_GRID.pointwiseBytesFactor)
      for (const commOverlap of commOverlaps)
        for (const tensorParallelOverlap of FIT_GRID.tensorParallelOverlap) {
          const fit = { matmulEfficiency, pointwiseBytesFactor, commOverlap, tensorParallelOverlap };
          const loss = stackLoss(runs, stack, fit, eff);
          if (loss < best.loss) best = { ...fit, loss };
        }
  return best;
}

/**
 * Fits each tuned stack's GEMM fraction and elementwise-traffic fraction on the LLM runs of that stack,
 * and measures them leave-one-model-family-out: each family is predicted with the effects fitted on the
 * other families only. Returns the fit on all runs (what --write stores) and the held-out MAPE.
 */
export function fitSoftware(eff: Efficiency = loadEfficiency()) {
  const runs = fittedLlmRuns();
  const fits: Partial<Record<SoftwareStack, ReturnType<typeof fitStack>>> = {};
  const heldOut: { family: string; stack: SoftwareStack; rows: number; mape: number }[] = [];
  const heldOutBySource: { source: string; stack: SoftwareStack; rows: number; mape: number }[] = [];
  const heldOutLogErrors: Partial<Record<SoftwareStack, number[]>> = {};
  for (const stack of FITTED_STACKS) {
    const mine = runs.filter((r) => stackOfFramework(r.framework) === stack);
    fits[stack] = fitStack(mine, stack, eff);
    // Leave-one-source-out: each publisher's runs predicted with effects fitted on the others'.
    for (const source of [...new Set(mine.map((r) => llmSourceOf(r)))].sort()) {
      const { loss: _loss, ...effects } = fitStack(
        mine.filter((r) => llmSourceOf(r) !== source),
        stack,
        eff,
      );
      const ps = predictedUnder(
        mine.filter((r) => llmSourceOf(r) === source),
        stack,
        effects,
        eff,
      );
      if (ps.length) heldOutBySource.push({ source, stack, rows: ps.length, mape: mean(ps.map(ape)) });
    }
    for (const family of [...new Set(mine.map((r) => familyOf(r.model)))].sort()) {
      const fit = fitStack(
        mine.filter((r) => familyOf(r.model) !== family),
        stack,
        eff,
      );
      const { loss: _loss, ...effects } = fit;
      const ps = predictedUnder(
        mine.filter((r) => familyOf(r.model) === family),
        stack,
        effects,
        eff,
      );
      if (ps.length) heldOut.push({ family, stack, rows: ps.length, mape: mean(ps.map(ape)) });
      (heldOutLogErrors[stack] ??= []).push(...ps.map(logErr));
    }
  }
  const rows = heldOut.reduce((n, h) => n + h.rows, 0);
  const sourceRows = heldOutBySource.reduce((n, h) => n + h.rows, 0);
  // The experts' fraction of their roofline, under the dense effects just fitted.
  const experts: Partial<Record<SoftwareStack, ExpertFit>> = {};
  for (const stack of FITTED_STACKS) {
    const { loss: _loss, ...dense } = fits[stack]!;
    const restore = overrideStackEffects(stack, dense);
    try {
      const fit = fitExperts(stack, eff);
      if (fit) experts[stack] = fit;
    } finally {
      restore();
    }
  }
  return {
    fits,
    experts,
    heldOut,
    heldOutLogErrors,
    heldOutMape: heldOut.reduce((s, h) => s + h.mape * h.rows, 0) / rows,
    heldOutRows: rows,
    heldOutBySource,
    heldOutBySourceMape: heldOutBySource.reduce((s, h) => s + h.mape * h.rows, 0) / sourceRows,
  };
}

/** A stack's expert GEMM efficiency, fitted on its published MoE runs, and each model predicted with it fitted on the others. */
export interface ExpertFit {
  expertGemmEfficiency: number;
  /** Mean |log error| of the fit on all the stack's MoE runs. */
  loss: number;
  heldOut: { model: string; rows: number; mape: number; unfittedMape: number; fitted: number }[];
  /** log(predicted / measured throughput) of every run, its model held out of the fit. */
  heldOutLogErrors: number[];
}

const EXPERT_GRID = [1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2];
const MIN_EXPERT_FIT_RUNS = 10;

/** Predictions of `runs` with the experts at `efficiency` of their roofline. */
const atExpertEfficiency = (runs: LlmRun[], stack: SoftwareStack, efficiency: number, eff: Efficiency) =>
  predictedUnder(runs, stack, { expertGemmEfficiency: efficiency }, eff);

function bestExpertEfficiency(runs: LlmRun[], stack: SoftwareStack, eff: Efficiency) {
  let best = { expertGemmEfficiency: 1, loss: Infinity };
  for (const e of EXPERT_GRID) {
    const loss = meanAbsLogError(atExpertEfficiency(runs, stack, e, eff));
    if (loss < best.loss) best = { expertGemmEfficiency: e, loss };
  }
  return best;
}

/**
 * One constant per stack: the fraction of their roofline rate a mixture-of-experts layer's expert GEMMs
 * reach, on a grid, on the stack's published MoE runs; each model is predicted with it fitted on the
 * other models. The all-to-alls stay at NCCL's measured rate: with a second constant for them on the
 * same grid, every held-out fit of the 19 MEGATRON runs put it at 1 (and the experts' at 0.4). Null where the stack's MoE runs cover fewer than two models (nothing to hold out)
 * or are fewer than ten.
 */
export function fitExperts(stack: SoftwareStack, eff: Efficiency = loadEfficiency()): ExpertFit | null {
  const mine = moeLlmRuns().filter((r) => stackOfFramework(r.framework) === stack);
  const predictable = atExpertEfficiency(mine, stack, 1, eff).map((p) => p.run);
  const models = [...new Set(predictable.map((r) => r.model))].sort();
  // A constant and an interval from fewer runs would say more than they know.
  if (models.length < 2 || predictable.length < MIN_EXPERT_FIT_RUNS) return null;
  const heldOut: ExpertFit['heldOut'] = [];
  const heldOutLogErrors: number[] = [];
  for (const model of models) {
    const { expertGemmEfficiency } = bestExpertEfficiency(
      predictable.filter((r) => r.model !== model),
      stack,
      eff,
    );
    const held = predictable.filter((r) => r.model === model);
    const ps = atExpertEfficiency(held, stack, expertGemmEfficiency, eff);
    heldOut.push({
      model,
      rows: ps.length,
      mape: mean(ps.map(ape)),
      unfittedMape: mean(atExpertEfficiency(held, stack, 1, eff).map(ape)),
      fitted: expertGemmEfficiency,
    });
    heldOutLogErrors.push(...ps.map(logErr));
  }
  return { ...bestExpertEfficiency(predictable, stack, eff), heldOut, heldOutLogErrors };
}

export function formatSoftwareFit(f: ReturnType<typeof fitSoftware>): string {
  const expertLines = Object.entries(f.experts).flatMap(([stack, x]) => {
    const rows = x!.heldOut.reduce((n, h) => n + h.rows, 0);
    const weighted = (k: 'mape' | 'unfittedMape') => x!.heldOut.reduce((s, h) => s + h[k] * h.rows, 0) / rows;
    return [
      '',
      `Mixture-of-experts layers, ${stack}: expertGemmEfficiency ${x!.expertGemmEfficiency} (grid ${EXPERT_GRID.join(', ')}; mean |log error| ${x!.loss.toFixed(3)} on its ${rows} published MoE runs). Held out by model (fitted on the other models): MAPE ${pct(weighted('mape'))}, ${pct(weighted('unfittedMape'))} with the experts at their roofline`,
      '| model held out | rows | fitted on the others | MAPE | at the roofline (1) |',
      '|---|---:|---:|---:|---:|',
      ...x!.heldOut.map(
        (h) => `| ${h.model} | ${h.rows} | ${h.fitted} | ${pct(h.mape)} | ${pct(h.unfittedMape)} |`,
      ),
    ];
  });
  return [
    'Tuned-stack effects fitted on the LLM runs of each stack (grid: GEMM fraction of the measured kernel rate, elementwise traffic left, DP/ZeRO overlap, TP overlap):',
    ...Object.entries(f.fits).map(
      ([s, x]) =>
        `  ${s}: matmulEfficiency ${x!.matmulEfficiency}, pointwiseBytesFactor ${x!.pointwiseBytesFactor}, commOverlap ${x!.commOverlap}, tensorParallelOverlap ${x!.tensorParallelOverlap} (mean |log error| ${x!.loss.toFixed(3)})`,
    ),
    `Held out by model family (fitted on the other families): MAPE ${pct(f.heldOutMape)} over ${f.heldOutRows} runs`,
    '| stack | family held out | rows | MAPE |',
    '|---|---|---:|---:|',
    ...f.heldOut.map((h) => `| ${h.stack} | ${h.family} | ${h.rows} | ${pct(h.mape)} |`),
    '',
    `Held out by source (fitted on the other publishers' runs): MAPE ${pct(f.heldOutBySourceMape)}`,
    '| stack | source held out | rows | MAPE |',
    '|---|---|---:|---:|',
    ...f.heldOutBySource.map((h) => `| ${h.stack} | ${h.source} | ${h.rows} | ${pct(h.mape)} |`),
    ...expertLines,
  ].join('\n');
}

/** Stores the fitted effects in seeds/software.json (TUNED takes MEGATRON's, software.ts runsStackOf, keeping its own CUDA-graph launch factor). */
export function writeSoftwareFit(f: ReturnType<typeof fitSoftware>): string {
  const file = softwareFile();
  for (const [stack, x] of Object.entries(f.fits)) {
    const s = stack as SoftwareStack;
    const { loss: _loss, ...effects } = x!;
    const errs = [...(f.heldOutLogErrors[s] ?? [])].sort((a, b) => a - b);
    const q = (p: number) => Number(errs[Math.round(p * (errs.length - 1))].toFixed(4));
    file.stacks[s] = {
      ...file.stacks[s],
      ...effects,
      ...(errs.length ? { heldOutLogError: { q10: q(0.1), q90: q(0.9), rows: errs.length } } : {}),
    };
    const moe = f.experts[s];
    if (moe) {
      const moeErrs = [...moe.heldOutLogErrors].sort((a, b) => a - b);
      const mq = (p: number) => Number(moeErrs[Math.round(p * (moeErrs.length - 1))].toFixed(4));
      file.stacks[s].expertGemmEfficiency = moe.expertGemmEfficiency;
      file.stacks[s].moeHeldOutLogError = { q10: mq(0.1), q90: mq(0.9), rows: moeErrs.length };
    } else {
      delete file.stacks[s].expertGemmEfficiency;
      delete file.stacks[s].moeHeldOutLogError;
    }
  }
  // A stack no published run used takes the fitted effects of the stack whose runs stand for it.
  for (const s of SOFTWARE_STACKS) {
    const from = runsStackOf(s);
    if (from === s) continue;
    const m = file.stacks[from];
    file.stacks[s] = {
      ...file.stacks[s],
      matmulEfficiency: m.matmulEfficiency,
      pointwiseBytesFactor: m.pointwiseBytesFactor,
      commOverlap: m.commOverlap,
      tensorParallelOverlap: m.tensorParallelOverlap,
      ...(m.heldOutLogError ? { heldOutLogError: m.heldOutLogError } : {}),
      ...(m.expertGemmEfficiency !== undefined ? { expertGemmEfficiency: m.expertGemmEfficiency } : {}),
      ...(m.moeHeldOutLogError ? { moeHeldOutLogError: m.moeHeldOutLogError } : {}),
    };
  }
  writeFileSync(SOFTWARE_FILE, JSON.stringify(file, null, 2) + '\n');
  return `wrote ${SOFTWARE_FILE.pathname}`;
}

export const LLM_CARD_HEADING = '## LLM training (analytical predictor, tuned software stacks)';
const CARD_FILE = PREDICTOR_CARD_FILE;

/** Replaces the LLM section of seeds/PREDICTOR_CARD.md with this evaluation and fit. */
export function writeLlmCardSection(fitText: string, evaluationText: string): string {
  const card = readFileSync(CARD_FILE, 'utf8');
  const at = card.indexOf(LLM_CARD_HEADING);
  const head = (at >= 0 ? card.slice(0, at) : card).trimEnd();
  const section = `${LLM_CARD_HEADING}

Written by \`npx trainplan evaluate --llm --fit --write\` (cli/evaluate-llm.ts); reproduce the figures with
\`npx trainplan evaluate --llm --fit\`. The published LLM runs (seeds/measurements/llm_train.csv, latest
version of each) are predicted at their own layout (TP, PP, virtual stages, CP, FSDP/ZeRO, recomputation,
micro- and global batch) under the software stack their framework names. The stacks' effects are fitted
on these runs (seeds/software.json); "held out" figures predict each model family with effects fitted on
the other families only. Mixture-of-experts runs are predicted apart (none is in the dense fits): their
stack's expert GEMM efficiency is fitted on them and held out by model. Multi-head latent attention (DeepSeek),
runs without a published architecture, batch or expert parallelism, and the 96 GB H100 variant (not in
the catalog) are not predicted.

${fitText}

${evaluationText}
`;
  writeFileSync(CARD_FILE, `${head}\n\n${section}`);
  return `wrote the LLM section of ${CARD_FILE.pathname}`;
}
