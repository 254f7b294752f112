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
});
