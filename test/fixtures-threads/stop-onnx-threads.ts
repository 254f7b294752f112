// Starts `count` correcting threads one after another and stops each at a random moment, either
// through its run gate (stopWorker) or with a bare terminate(); prints "stopped N" when the
// process survived them all. Run by test/run-gate.test.ts as its own process, since a wrong stop
// aborts the whole process.
import { startWorker, stopWorker } from '../../optimizer/threads.js';

const [how, countArg] = process.argv.slice(2);
const count = Number(countArg);
const entry = new URL('./onnx-loop-worker.ts', import.meta.url);
let stopped = 0;
for (let i = 0; i < count; i++) {
  const w = await startWorker(entry, { name: 'the correcting thread', startTimeoutMs: 60_000 });
  await new Promise((r) => setTimeout(r, 5 + Math.random() * 100));
  if (how === 'gate') await stopWorker(w);
  else await w.terminate();
  stopped++;
}
console.log(`stopped ${stopped}`);
