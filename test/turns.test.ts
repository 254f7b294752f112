// The slice a server's long tasks share (predictor/turns.ts): a turn of the event loop runs a slice
// of every task waiting to go on before it polls for I/O, so with k tasks running each gives the
// loop back after 1/k of the slice, and a turn stays one slice long however many run.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SLICE_MS, Turns } from '../predictor/turns.js';

describe('turns of the event loop', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['performance', 'setImmediate'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('share one slice between the tasks running at once', () => {
    const a = new Turns();
    vi.advanceTimersByTime(0.6 * SLICE_MS);
    expect(a.due()).toBe(false); // alone: the whole slice
    const b = new Turns();
    expect(a.due()).toBe(true); // two: half the slice each, and a has run 0.6 of it
    expect(b.due()).toBe(false);
    vi.advanceTimersByTime(0.1 * SLICE_MS);
    expect(b.due()).toBe(false);
    b.end();
    b.end(); // ending twice counts once
    expect(a.due()).toBe(false); // alone again: 0.7 of the slice run
    vi.advanceTimersByTime(0.3 * SLICE_MS);
    expect(a.due()).toBe(true);
    a.end();
  });

  it('a pause gives the loop back and starts the task a new share', async () => {
    const a = new Turns();
    vi.advanceTimersByTime(SLICE_MS);
    expect(a.due()).toBe(true);
    const paused = a.pause();
    await vi.runAllTimersAsync();
    await paused;
    expect(a.due()).toBe(false);
    a.end();
  });

  it('a pause waits two turns of the loop, so that one begun in an I/O callback polls before it goes on', async () => {
    vi.useRealTimers();
    let ticks = 0;
    const tick = () => {
      if (++ticks < 10) setImmediate(tick);
    };
    // Queued in this turn before the pause, as the rest of a turn's immediates are: with one hop the
    // task went on in the same turn (one tick), before the loop polled for I/O again.
    setImmediate(tick);
    const a = new Turns();
    await a.pause();
    a.end();
    expect(ticks).toBeGreaterThanOrEqual(2);
  });

  it('a task that starts where another left off, before the loop turns, goes on with its slice', async () => {
    vi.useRealTimers();
    let now = 1000;
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => now);
    try {
      const search = new Turns();
      await search.pause(); // the loop turns; the search gets it back at 1000
      now += 0.6 * SLICE_MS; // and runs on without a pause, then ends
      search.end();
      const correction = new Turns(); // the request's next phase, in the same stretch
      expect(correction.due()).toBe(false);
      now += 0.4 * SLICE_MS;
      expect(correction.due()).toBe(true); // the stretch has run a whole slice (a new one: 0.4)
      await correction.pause();
      correction.end();
      await new Promise((resolve) => setImmediate(resolve)); // the loop turns: a new stretch
      const next = new Turns();
      now += 0.5 * SLICE_MS;
      expect(next.due()).toBe(false);
      next.end();
    } finally {
      clock.mockRestore();
    }
  });
});
