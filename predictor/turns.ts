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
/**
 * When the stretch of work the event loop is running began (a task got it back, or began where it
 * had turned), and whether the loop has turned since.
 */
let stretchStart = 0;
let turnedSince = true;
function startStretch(now: number): void {
  stretchStart = now;
  turnedSince = false;
  // Runs in a later turn of the loop, so between two stretches (each is one synchronous run).
  setImmediate(() => (turnedSince = true));
}

/** One task's turns: `due()` says when its share of the slice has run out; then `await pause()`. */
export class Turns {
  private sliceStart: number;
  private ended = false;

  constructor(private readonly sliceMs = SLICE_MS) {
    running++;
    // A task that starts where another left off, before the loop has turned (a request's
    // correction after its search, each of its passes after the one before), goes on with that
    // stretch's slice: with a new one each, a request's phases held the loop 115-190 ms at a time.
    if (turnedSince) startStretch(performance.now());
    this.sliceStart = stretchStart;
  }

  due(): boolean {
    return performance.now() - this.sliceStart >= this.sliceMs / running;
  }

  async pause(): Promise<void> {
    // Two hops: a task that began in an I/O callback (a request's arrival) and pauses there gets its
    // first immediate in the same turn of the loop, before it polls for I/O again; the second comes
    // after the next poll either way. (With one, a search's first two slices ran back to back.)
    await new Promise<void>((resolve) => setImmediate(resolve));
    await new Promise<void>((resolve) => setImmediate(resolve));
    startStretch(performance.now());
    this.sliceStart = stretchStart;
  }

  /** The task is done (or failed): it no longer shares the slice. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    running--;
  }
}
