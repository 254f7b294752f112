// A thread that runs onnxruntime sessions is stopped between runs (predictor/learned/run-gate.ts).
// CI for stop 59 lost its server this way: a 60-job procurement overran its limit while its planner
// thread corrected candidates, the watchdog terminated the thread mid-run, and the process aborted.
// Each scenario runs as its own process, since the failure it guards against is an abort.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { closeRunGate, GateClosed, newRunGate, throughGate } from '../predictor/learned/run-gate.js';
import { ROOT, spawnServer } from './spawn-server.js';
import { syntheticProcurement } from './synthetic-requests.js';

function stopThreads(how: 'gate' | 'terminate', count: number) {
  return spawnSync(
    process.execPath,
    ['--import', 'tsx', 'test/fixtures-threads/stop-onnx-threads.ts', how, String(count)],
    { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
  );
}

describe('stopping a thread that corrects with onnxruntime', () => {
  it('through its run gate: 12 threads stopped at random moments, and the process lives', () => {
    const r = stopThreads('gate', 12);
    expect(r.stderr).not.toMatch(/Napi::Error/);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/stopped 12/);
  }, 120_000);

  it('with a bare terminate(), the hazard the gate is for: the process aborts', () => {
    // If onnxruntime-node stops aborting here, the gate may be unnecessary; this says so.
    const r = stopThreads('terminate', 12);
    expect(r.signal).toBe('SIGABRT');
    expect(r.stderr).toMatch(/terminate called after throwing an instance of 'Napi::Error'/);
  }, 120_000);
});

describe('a server stopped while a plan corrects its candidates', () => {
  it('exits 0 after its grace, not SIGABRT: the planner threads are stopped through their gates first', async () => {
    // Before: 1 of 4 such stops ended in SIGABRT (the exit cut a thread mid-run).
    const codes: (number | string)[] = [];
    for (const waitMs of [2000, 2800, 3600]) {
      const srv = await spawnServer({
        env: { TRAINPLAN_SHUTDOWN_DELAY_MS: '0', TRAINPLAN_SHUTDOWN_GRACE_MS: '300' },
      });
      const input = syntheticProcurement({ jobs: 60, options: 20, months: 120, timeLimitSeconds: 60 });
      const query = 'query($input: ProcurementInput!) { planProcurement(input: $input) { status } }';
      const answer = fetch(srv.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables: { input } }),
      }).catch(() => 'cut');
      await new Promise((r) => setTimeout(r, waitMs));
      codes.push(await srv.stop('SIGTERM'));
      await answer;
    }
    expect(codes).toEqual([0, 0, 0]);
  }, 120_000);
});

describe('the gate itself', () => {
  it('a run that starts after the gate closed is refused without being called', async () => {
    const gate = newRunGate();
    await closeRunGate(gate);
    let called = false;
    await expect(
      throughGate(async () => {
        called = true;
      }, gate),
    ).rejects.toBeInstanceOf(GateClosed);
    expect(called).toBe(false);
  });

  it('closing waits for the runs in flight, whose results are then refused', async () => {
    const gate = newRunGate();
    let finish!: () => void;
    const running = throughGate(() => new Promise<string>((r) => (finish = () => r('done'))), gate).then(
      (v) => v,
      (e: unknown) => e,
    );
    const again = throughGate(async () => 'second', gate);
    await expect(again).resolves.toBe('second');
    let closed = false;
    const closing = closeRunGate(gate).then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(closed).toBe(false);
    finish();
    await closing;
    expect(closed).toBe(true);
    expect(await running).toBeInstanceOf(GateClosed);
  });

  it('an open gate passes results and errors through', async () => {
    const gate = newRunGate();
    await expect(throughGate(async () => 42, gate)).resolves.toBe(42);
    await expect(
      throughGate(async () => {
        throw new Error('native failed');
      }, gate),
    ).rejects.toThrow('native failed');
    await closeRunGate(gate); // nothing in flight: closes at once
  });
});
