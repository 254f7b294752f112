// Runs Python with the measurement harness (harness/measure.py) imported as `measure`, for the
// tests that look inside it with Debian's PyTorch (test/harness.test.ts) and with PyTorch 2 and
// transformers (test/harness-transformers.test.ts).
import { execFileSync } from 'node:child_process';
import { dirname } from 'node:path';
import { HARNESS_FILE } from '../service/harness-script.js';

/**
 * Python defining `saved_bytes(model, step, precision)`: the bytes autograd keeps for backward while
 * `step()` runs a forward pass (saved-tensor hooks, every storage once), the weights and autocast's
 * copies of them left out (the memory model counts those as weights); AMP_BF16 under CPU autocast.
 * For Debian's PyTorch 1.13 (typed storages) and PyTorch 2.
 */
export const SAVED_BYTES = [
  'VIEWS = ("ToCopyBackward0", "TBackward0", "TransposeBackward0", "ViewBackward0", "PermuteBackward0")',
  'def of_weight(t):',
  '    n = t.grad_fn',
  '    while n is not None and type(n).__name__ in VIEWS:',
  '        n = n.next_functions[0][0]',
  '    return n is not None and type(n).__name__ == "AccumulateGrad"',
  'storage_of = (lambda t: t.untyped_storage()) if hasattr(torch.Tensor, "untyped_storage") else (lambda t: t.storage())',
  'def saved_bytes(model, step, precision):',
  '    weights = {storage_of(p).data_ptr() for p in model.parameters()}',
  '    kept = {}',
  '    def pack(t):',
  '        s = storage_of(t)',
  '        if s.data_ptr() not in weights and not of_weight(t):',
  '            kept[s.data_ptr()] = max(kept.get(s.data_ptr(), 0), s.nbytes())',
  '        return t',
  '    amp = torch.autocast("cpu", dtype=torch.bfloat16) if precision == "AMP_BF16" else contextlib.nullcontext()',
  '    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), amp:',
  '        step()',
  '    return sum(kept.values())',
];

/** measure.py's arguments for one timed step on CPU, none before it, the run printed as JSON. */
export const ONE_STEP_ON_CPU = ['--steps', '1', '--warmup', '0', '--device', 'cpu', '--format', 'json'];

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
