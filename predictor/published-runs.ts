// Which published LLM runs (seeds/measurements/llm_train.csv) measured a model. The runs are keyed by
// their publishers' model names (Llama-2-7B), which no zoo model or user query uses: the zoo's
// llama2_7b, or a Hugging Face import of meta-llama/Llama-2-7b's config, is that architecture under
// another name. Without this an answer for Llama 2 7B on an H100 said "no measurements of this model"
// while 17 published runs of it on H100s are in the data.
//
// The trees do not read these runs as evidence features (learned/train.ts evidenceOf: LLM runs give
// none and get none); here they say what stands behind an answer and which published run is nearest,
// and learned/published-calibration.ts calibrates an answer on those that ran its GPU and stack.
import { loadLlmArchitectures, loadLlmRuns, type LlmRun } from '../seeds/llm.js';
import { buildLlmModel, llmModel } from './llm.js';
import { costOf } from './predict.js';
import { stackOfFramework, type SoftwareStack } from './software.js';
import type { ModelDef, Precision } from './types.js';

const architectureCache = new WeakMap<ModelDef, readonly string[]>();

/** Published decoders at 4,096 tokens, the parameter count a query's model is first compared with. */
const REFERENCE_SEQ_LEN = 4096;

/**
 * The published architectures (llm_models.csv names) a model is: those whose decoder, built at the
 * model's sequence length, has the same parameter count and the same FLOPs per sequence. The two agree
 * only when layers, widths, heads, FFN, vocabulary and MLP kind all do; more than one name is the same
 * shapes published twice (Llama-3-8B and Llama-3.1-8B). Empty for any other model, and for one that
 * is not a sequence model.
 *
 * Only rows whose parameters at 4,096 tokens are within what learned positions could add or remove
 * at the model's length are built at that length, and those uncached: a query chooses its sequence
 * length, and keeping ~60 decoders per length a client asks for would grow without bound.
 */
export function publishedArchitecturesOf(model: ModelDef): readonly string[] {
  let names = architectureCache.get(model);
  if (names === undefined) {
    const found: string[] = [];
    if (model.batchElement === 'sequence' && model.seqLen) {
      const c = costOf(model);
      const same = (a: number, b: number) => Math.abs(a / b - 1) < 1e-9;
      for (const a of loadLlmArchitectures()) {
        const reference = llmModel(a, REFERENCE_SEQ_LEN);
        if (typeof reference === 'string') continue;
        const positions = Math.abs(model.seqLen - REFERENCE_SEQ_LEN) * (a.hidden ?? 0);
        if (Math.abs(costOf(reference).parameters - c.parameters) > positions + 1e-9 * c.parameters) continue;
        const m = model.seqLen === REFERENCE_SEQ_LEN ? reference : buildLlmModel(a, model.seqLen);
        if (typeof m === 'string') continue;
        const p = costOf(m);
        if (same(p.parameters, c.parameters) && same(p.forwardFlops, c.forwardFlops)) found.push(a.model);
      }
    }
    names = found;
    architectureCache.set(model, names);
  }
  return names;
}

/** Every published run with a measured throughput (llm_train.csv rows whose throughput is given). */
export const measuredLlmRuns = (): readonly LlmRun[] =>
  loadLlmRuns().filter((r) => r.tokensPerSecondPerGpu !== null);

let measuredCache: Map<string, LlmRun[]> | undefined;
/**
 * Every published run with a measured throughput of these architectures, superseded versions
 * included: a source's older table measured the same layout on older software, and some GPUs (the
 * A100 rows) have no other.
 */
export function measuredRunsOf(names: readonly string[]): readonly LlmRun[] {
  if (!measuredCache) {
    measuredCache = new Map();
    for (const r of measuredLlmRuns()) measuredCache.set(r.model, [...(measuredCache.get(r.model) ?? []), r]);
  }
  return names.flatMap((n) => measuredCache!.get(n) ?? []);
}

/** The configuration a query runs, as the published runs state theirs. */
export interface RunShape {
  gpus: number;
  tensorParallel: number;
  pipelineParallel: number;
  contextParallel: number;
  microBatch: number;
  seqLen: number;
}

/**
 * Distance between two layouts: the sum of absolute log ratios of GPUs, TP, PP, CP, micro-batch and
 * sequence length (an unstated figure counts as a factor of e^2 off). Which published run a reader
 * should compare with, not a feature of anything.
 */
function distance(r: LlmRun, q: RunShape): number {
  const d = (a: number | null, b: number) => (a === null || a <= 0 ? 2 : Math.abs(Math.log(a / b)));
  return (
    d(r.numGpus, q.gpus) +
    d(r.layoutStated ? r.tensorParallel : null, q.tensorParallel) +
    d(r.layoutStated ? r.pipelineParallel : null, q.pipelineParallel) +
    d(r.contextParallel, q.contextParallel) +
    d(r.microBatch, q.microBatch) +
    d(r.seqLen, q.seqLen)
  );
}

export interface PublishedRuns {
  /** The architecture's names in llm_models.csv. */
  models: readonly string[];
  runs: number;
  onGpu: number;
  /** Of those on the GPU, at the query's precision. */
  onGpuAtPrecision: number;
  /** The software stacks the runs on the GPU ran (software.ts stackOfFramework). */
  stacks: SoftwareStack[];
  /** The run on this GPU nearest to the query's layout, at its precision where one is. */
  nearest?: LlmRun;
}

export function publishedRunsOf(
  names: readonly string[],
  gpuId: string,
  precision: Precision,
  shape: RunShape,
): PublishedRuns {
  const runs = measuredRunsOf(names);
  const onGpu = runs.filter((r) => r.gpu === gpuId);
  const atPrecision = onGpu.filter((r) => r.precision === precision);
  const pool = atPrecision.length ? atPrecision : onGpu;
  const nearest = pool
    .map((r) => ({ r, d: distance(r, shape) - (r.isLatest ? 1e-6 : 0) }))
    .sort((a, b) => a.d - b.d || a.r.id.localeCompare(b.r.id))[0]?.r;
  return {
    models: names,
    runs: runs.length,
    onGpu: onGpu.length,
    onGpuAtPrecision: atPrecision.length,
    stacks: [...new Set(onGpu.map((r) => stackOfFramework(r.framework)))].sort(),
    ...(nearest ? { nearest } : {}),
  };
}

/** What `evidence` says of a model's published runs; undefined when it has none. */
export function describePublishedRuns(
  p: PublishedRuns,
  gpuId: string,
  precision: Precision,
): string | undefined {
  if (p.runs === 0) return undefined;
  // Counted as published: a source's superseded tables measured some layouts again on older software.
  const head = `${p.runs} published measurement${p.runs > 1 ? 's' : ''} of this architecture (${p.models.join(', ')}, measurements/llm_train.csv)`;
  if (p.onGpu === 0) return `${head}, none on ${gpuId}`;
  const n = p.nearest!;
  const layout = [
    `${n.numGpus} GPU${n.numGpus > 1 ? 's' : ''}`,
    ...(n.layoutStated ? [`TP ${n.tensorParallel}`, `PP ${n.pipelineParallel}`] : ['TP and PP not stated']),
    ...(n.contextParallel > 1 ? [`CP ${n.contextParallel}`] : []),
    `micro-batch ${n.microBatch ?? 'not stated'}`,
    `global batch ${n.globalBatch ?? 'not stated'}`,
    `sequence ${n.seqLen ?? 'not stated'}`,
    n.precision,
    n.framework,
  ].join(', ');
  return (
    `${head}, ${p.onGpu} on ${gpuId} (${p.onGpuAtPrecision} at ${precision}; stacks ${p.stacks.join(', ')})` +
    `; the one nearest this layout, ${n.id} (${layout}), measured ${Math.round(n.tokensPerSecondPerGpu!).toLocaleString('en-US')} tokens/s per GPU`
  );
}
