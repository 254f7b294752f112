// Long work in a server process gives the event loop back often enough that the process keeps
// answering its probes and reading new requests: a recommend's search (optimizer/recommend.ts
// searchCandidatesYielding), the bounds of its learned correction (optimizer/pruned.ts) and the
// correction itself (learned/model.ts correct). (Here, the lowest layer with code, so that the
// predictor can use it too; it knows nothing of prediction.) A turn of the
// event loop runs a slice of every such task waiting to go on before it polls for I/O, so the tasks
// running at once share one slice: with k of them, each gives the loop back after SLICE_MS / k. With a
// whole slice each, 16 searches at once made a turn of the loop 800 ms long, and requests arriving
// together waited up to 8 s before the server read them (their budget not yet running).

/** How long one turn of the event loop runs such tasks before it polls for I/O (ms). */
export const SLICE_MS = 50;

/** Tasks of this process between their first and last turn. */
let running = 0;

/** One task's turns: `due()` says when its share of the slice has run out; then `await pause()`. */
export class Turns {
  private sliceStart = performance.now();
  private ended = false;

  constructor(private readonly sliceMs = SLICE_MS) {
    running++;
  }

  due(): boolean {
    return performance.now() - this.sliceStart >= this.sliceMs / running;
  }

  async pause(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.sliceStart = performance.now();
  }

  /** The task is done (or failed): it no longer shares the slice. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    running--;
  }
}
