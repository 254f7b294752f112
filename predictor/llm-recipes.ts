// What a published LLM run ran where its row leaves it unstated: the launch scripts its source
// publishes (seeds/memory.json sourceRecipes), else its framework family's published configurations
// (frameworkStates). One place for the memory check (memory-check.ts) and the runs' step-time
// predictions (llm.ts), so both see the same recomputation and interleaving.
import type { LlmRun } from '../seeds/llm.js';
import type { Efficiency, FrameworkStates, RecomputeModule, SourceRecipe } from '../seeds/types.js';
import type { Recompute } from './parallel.js';

/** What identifies a run's recipe. */
export interface RunKey {
  /** The row's full source: repository@commit:file. */
  sourceFile: string;
  framework: string;
  /** The row's software column (framework release, container). */
  software: string;
  model: string;
  /** pretrain, sft, lora, ... */
  task: string;
  gpu: string;
}

export const runKeyOf = (r: LlmRun): RunKey => ({
  sourceFile: r.source,
  framework: r.framework,
  software: r.software,
  model: r.model,
  task: r.task,
  gpu: r.gpu,
});

/**
 * The framework family whose recipes stored a row's model states (seeds/memory.json frameworkStates):
 * NeMo 1.x (the NeMo Framework Launcher; the NeMo 24.03 and 24.07 containers) or Megatron-Core as
 * NeMo 2, dgxc-benchmarking's NeMo 2 scripts and Megatron-Bridge configure it, or NeMo AutoModel's
 * benchmark configurations; null for the others (torchtitan, Megatron-LM's own arguments), which keep
 * the precision mode's.
 */
export function frameworkFamily(
  c: Pick<RunKey, 'framework' | 'software'>,
): 'nemo1' | 'megatron' | 'automodel' | null {
  if (/NeMo Launcher/.test(c.framework) || /NeMo 1\.x|NeMo 24\.0[0-7]/.test(c.software)) return 'nemo1';
  if (/^(NeMo \(|NeMo 2|Megatron-Bridge)/.test(c.framework)) return 'megatron';
  if (/AutoModel/.test(c.framework)) return 'automodel';
  return null;
}

/**
 * The ZeRO stage of a run that does not shard with FSDP (its zero_or_fsdp cell empty, "DDP (FSDP=0)" or
 * "FSDP=0"): Megatron-Core under NeMo, NeMo's launcher and Megatron-Bridge runs its distributed
 * optimizer (use_distributed_optimizer, their recipes' default), which shards the optimizer state and
 * master weights over the data-parallel group: ZeRO-1; "DDP" there names the gradient reduction, not
 * the absence of it. Other frameworks' data parallelism shards nothing.
 */
export const stageWithoutFsdp = (framework: string): 0 | 1 => (/megatron|nemo/i.test(framework) ? 1 : 0);

/** The launch scripts (seeds/memory.json sourceRecipes) a row ran with, if its source publishes them. */
export function recipeOf(c: RunKey, recipes: readonly SourceRecipe[]): SourceRecipe | undefined {
  return recipes.find(
    (r) =>
      r.rows.test(c.sourceFile) &&
      (!r.software || r.software.test(c.software)) &&
      (!r.models || r.models.includes(c.model)) &&
      (!r.tasks || r.tasks.includes(c.task)) &&
      (!r.gpus || r.gpus.includes(c.gpu)),
  );
}

/**
 * A row's activation-checkpointing cell. torchtitan's "selective (op)" / "per-op SAC" is op-level
 * checkpointing (selective_op), and so is its plain "selective": its train configs default to
 * selective_ac_option = 'op' (e.g. torchtitan/models/llama3/train_configs/llama3_8b.toml). Its "selective (layer)"
 * checkpoints whole blocks every few layers, counted as Megatron's selective. Null when empty.
 */
export function statedRecompute(cell: string, framework: string): Recompute | null {
  const c = cell.trim().toLowerCase();
  if (c === '') return null;
  if (c.startsWith('full')) return 'full';
  if (/op\b|per-op/.test(c) || (c === 'selective' && /torchtitan/.test(framework))) return 'selective_op';
  if (c.startsWith('selective')) return 'selective';
  return 'none';
}

export interface RunRecipe {
  recipe: SourceRecipe | undefined;
  /** The family's model-state recipes (null family: the precision mode's). */
  states: FrameworkStates | undefined;
  /** What the row states, else its scripts', else its family's configurations'; none when nothing says. */
  recompute: Recompute;
  /**
   * Under selective recomputation from the scripts, the modules they rerun (Megatron's
   * recompute_modules); absent: the attention core (a row's own "selective" cell says no more).
   */
  recomputeModules?: RecomputeModule[];
  /** Interleaved chunks per stage: the row's, else its scripts' (1 = plain 1F1B). */
  virtualStages: number;
}

export function runRecipe(
  c: RunKey & { activationCheckpointing: string; virtualPipeline: number },
  memory: Efficiency['memory'],
): RunRecipe {
  const recipe = recipeOf(c, memory.sourceRecipes);
  const family = recipe?.family ?? frameworkFamily(c);
  const states = family ? memory.frameworkStates[family] : undefined;
  const stated = statedRecompute(c.activationCheckpointing, c.framework);
  // A source's scripts say what its rows ran even where no family's recipes apply (MaxText, PaxML).
  const recompute = stated ?? recipe?.recompute ?? states?.recomputeWhenUnstated ?? 'none';
  const virtualStages = c.virtualPipeline > 1 ? c.virtualPipeline : (recipe?.virtualStages?.[c.model] ?? 1);
  const modules =
    stated === null && states && recompute === 'selective' ? recipe?.recomputeModules : undefined;
  return { recipe, states, recompute, virtualStages, ...(modules ? { recomputeModules: modules } : {}) };
}
