// A training layout in the few words people write it in ("DP4 TP2 PP4 VP5 CP2 EP8 ZeRO-1 recompute full"):
// the one notation of the plan explorer (web/explorer.ts) and the CLI's recommend table. No imports,
// so the browser bundle takes this file alone.

/** The degrees a plan reports (the API's Parallelism, as far as its layout goes). */
export interface LayoutDegrees {
  dataParallel: number;
  tensorParallel: number;
  pipelineParallel: number;
  /** Model chunks per pipeline stage (interleaved 1F1B; NeMo's and Megatron's "VP"). */
  virtualPipelineStages: number;
  /** GPUs each sequence is split over (context parallelism; Megatron's "CP"). */
  contextParallel: number;
  expertParallel: number;
  zeroStage: number;
  /** NONE, SELECTIVE or FULL. */
  recompute: string;
}

/** Data parallelism always; every other degree only where it is used. */
export const layoutWords = (p: LayoutDegrees): string =>
  [
    `DP${p.dataParallel}`,
    p.tensorParallel > 1 ? `TP${p.tensorParallel}` : '',
    p.pipelineParallel > 1 ? `PP${p.pipelineParallel}` : '',
    p.virtualPipelineStages > 1 ? `VP${p.virtualPipelineStages}` : '',
    p.contextParallel > 1 ? `CP${p.contextParallel}` : '',
    p.expertParallel > 1 ? `EP${p.expertParallel}` : '',
    p.zeroStage > 0 ? `ZeRO-${p.zeroStage}` : '',
    p.recompute !== 'NONE' ? `recompute ${p.recompute.toLowerCase()}` : '',
  ]
    .filter(Boolean)
    .join(' ');
