// /ready: the checks that say whether this process can answer (seeds and models loaded, the learned
// model or its analytical fallback). /health only says the process is alive.
import { loadZoo } from '../predictor/zoo/index.js';
import { loadEfficiency, loadGpus, networkDefaults } from '../seeds/catalog.js';

/** Extra readiness checks (a learned model, say): a check that throws or returns false keeps /ready at 503. */
const readinessChecks = new Map<string, () => unknown>([
  ['gpus', () => loadGpus().length > 0],
  ['models', () => loadZoo().length > 0],
  ['efficiency', () => Object.keys(loadEfficiency()).length > 0],
  ['network', () => networkDefaults() !== undefined],
]);
export function addReadinessCheck(name: string, check: () => unknown): void {
  readinessChecks.set(name, check);
}
export function runChecks(): { ok: boolean; checks: Record<string, string> } {
  const checks: Record<string, string> = {};
  let ok = true;
  for (const [name, check] of readinessChecks) {
    // A string is a passing check with something to say (e.g. the learned model's fallback).
    try {
      const r = check();
      checks[name] = r === false ? 'failing' : typeof r === 'string' ? r : 'ok';
      ok &&= r !== false;
    } catch (e) {
      checks[name] = `failing: ${(e as Error).message}`.slice(0, 200);
      ok = false;
    }
  }
  return { ok, checks };
}
