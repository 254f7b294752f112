// Runs Python with the measurement harness (harness/measure.py) imported as `measure`, for the
// tests that look inside it with Debian's PyTorch (test/harness.test.ts) and with PyTorch 2 and
// transformers (test/harness-transformers.test.ts).
import { execFileSync } from 'node:child_process';
import { dirname } from 'node:path';
import { HARNESS_FILE } from '../cli/harness.js';

/** What `lines` print (JSON), run by `python` after `import contextlib, json, sys, torch, measure`; `args` are its sys.argv[1:]. */
export function fromMeasurePython(python: string, lines: string[], args: string[] = []): unknown {
  const script = [
    'import contextlib, json, sys, torch',
    `sys.path.insert(0, ${JSON.stringify(dirname(HARNESS_FILE.pathname))})`,
    'import measure',
    ...lines,
  ].join('\n');
  return JSON.parse(execFileSync(python, ['-c', script, ...args], { stdio: 'pipe' }).toString());
}
