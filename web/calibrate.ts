// Your runs: the calibration loop in a page. Paste (or open) what the measurement harness wrote,
// record it (importMeasurements, read as `trainplan calibrate import` reads a file), and see every
// recorded run beside what trainplan predicted for it without the runs (how far off it was for
// this machine, which is what the runs now correct in every prediction and plan for that GPU and
// model) and what the other runs predict for it (how well that correction carries to a run it has
// not seen). Runs can be deleted one by one. Everything goes to this server's /graphql.
import './page.css';
import { $, graphql, RequestErrors } from './api.js';
import { layoutWords, type LayoutDegrees } from '../predictor/layout-words.js';

interface Run {
  id: number;
  owner: string;
  recordedAt: string;
  model: string;
  gpu: string;
  precision: string;
  nodes: number;
  gpusPerNode: number;
  batchSizePerGpu: number;
  gradAccumSteps: number;
  parallelism: LayoutDegrees;
  /** How its attention cores ran, as recorded (null: not stated, predicted as predict's default). */
  attention: 'FUSED' | 'EAGER' | null;
  stepTimeMs: number;
  predictedStepTimeMs: number | null;
  predictedFromOtherRunsStepTimeMs: number | null;
  peakMemoryGb: number | null;
  predictedPeakMemoryGb: number | null;
  /** What CUDA gave the run's process (GiB): plans on its GPU are fitted in the least of these. */
  gpuMemoryGb: number | null;
  /** The run's MFU at its measured step (null where the configuration no longer builds). */
  mfu: number | null;
  source: string;
}
interface ImportResult {
  stored: number;
  rejected: { index: number; reason: string }[];
}

const RUNS = `query($owner: String) { measurements(owner: $owner) { id owner recordedAt model gpu precision
  nodes gpusPerNode batchSizePerGpu gradAccumSteps stepTimeMs predictedStepTimeMs
  parallelism { dataParallel tensorParallel pipelineParallel virtualPipelineStages contextParallel expertParallel zeroStage recompute }
  attention predictedFromOtherRunsStepTimeMs peakMemoryGb predictedPeakMemoryGb gpuMemoryGb mfu source } }`;
const IMPORT = `mutation($text: String!, $owner: String) {
  importMeasurements(text: $text, owner: $owner) { stored rejected { index reason } } }`;
const DELETE = `mutation($owner: String!, $ids: [Int!]) { deleteMeasurements(owner: $owner, ids: $ids) }`;

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toPrecision(3));

function cell(text: string, className?: string): HTMLTableCellElement {
  const td = document.createElement('td');
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

/** The middle value (the lower of the two middle ones); undefined for none. */
function median(xs: number[]): number | undefined {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)] : undefined;
}

const pct = (x: number) => `${(100 * x).toFixed(x < 0.1 ? 1 : 0)}%`;

/**
 * The runs as a table, each beside the step trainplan predicted for it without the runs and the
 * step the other runs predict for it: the first says how far off the shipped predictor was on this
 * machine, the second how well the runs' calibration predicts a run it has not seen.
 */
async function showRuns(): Promise<void> {
  // One owner's runs when asked; each is still predicted from every owner's other runs, as the
  // answers are calibrated by all of them.
  const owner = $<HTMLInputElement>('own-only').checked ? $<HTMLInputElement>('owner').value : null;
  const { measurements } = await graphql<{ measurements: Run[] }>(RUNS, { owner });
  const without = measurements.filter((r) => r.predictedStepTimeMs);
  const ratio = median(without.map((r) => r.stepTimeMs / r.predictedStepTimeMs!));
  const off = (predicted: number, r: Run) => Math.abs(predicted / r.stepTimeMs - 1);
  // The same runs on both sides: those the other runs predict.
  const both = without.filter((r) => r.predictedFromOtherRunsStepTimeMs);
  const offWithout = median(both.map((r) => off(r.predictedStepTimeMs!, r)));
  const offFromOthers = median(both.map((r) => off(r.predictedFromOtherRunsStepTimeMs!, r)));
  $('runs-summary').textContent = measurements.length
    ? `${measurements.length} run${measurements.length > 1 ? 's' : ''} recorded` +
      (ratio === undefined
        ? '.'
        : `; the median run took ${ratio.toFixed(2)}x the step predicted without the runs (${
            ratio > 1 ? 'slower' : 'faster'
          } than predicted): predictions and plans for these GPUs and models are now calibrated by them.`) +
      (offWithout === undefined || offFromOthers === undefined
        ? ''
        : ` Each run predicted from the other runs is off by a median ${pct(offFromOthers)} (without the runs: ${pct(
            offWithout,
          )}): about how far a calibrated prediction of a configuration not yet run can be off.`)
    : 'No run recorded yet.';
  const table = document.createElement('table');
  const head = table.createTHead().insertRow();
  for (const h of [
    'id',
    'owner',
    'model',
    'GPU',
    'GPUs',
    'precision',
    'batch',
    'layout',
    'attention',
    'measured ms',
    'predicted ms',
    'measured / predicted',
    'from other runs ms',
    'measured / from other runs',
    'MFU',
    'peak GB',
    'predicted GB',
    'GPU GiB',
    'source',
    'recorded',
    '',
  ]) {
    const th = document.createElement('th');
    th.textContent = h;
    head.append(th);
  }
  const body = table.createTBody();
  for (const r of measurements) {
    const row = body.insertRow();
    row.dataset.id = String(r.id);
    const gpus = r.nodes > 1 ? `${r.nodes} x ${r.gpusPerNode}` : String(r.gpusPerNode);
    row.append(
      cell(String(r.id)),
      cell(r.owner, 'text'),
      cell(r.model, 'text'),
      cell(r.gpu, 'text'),
      cell(gpus),
      cell(r.precision, 'text'),
      cell(r.gradAccumSteps > 1 ? `${r.batchSizePerGpu} x ${r.gradAccumSteps}` : String(r.batchSizePerGpu)),
      // As the plans write theirs: a tensor-parallel or ZeRO run reads apart from a plain one.
      cell(layoutWords(r.parallelism), 'text'),
      // The run is predicted the way its cores ran; '-' where it did not say (the model's default).
      cell(r.attention ?? '-', 'text'),
      cell(ms(r.stepTimeMs)),
      // Null when the configuration no longer builds or no learned model is loaded: said, not hidden.
      cell(r.predictedStepTimeMs === null ? '-' : ms(r.predictedStepTimeMs)),
      cell(r.predictedStepTimeMs === null ? '-' : `x${(r.stepTimeMs / r.predictedStepTimeMs).toFixed(2)}`),
      // Null when no other configuration is stored, or past the store size the server re-predicts.
      cell(r.predictedFromOtherRunsStepTimeMs === null ? '-' : ms(r.predictedFromOtherRunsStepTimeMs)),
      cell(
        r.predictedFromOtherRunsStepTimeMs === null
          ? '-'
          : `x${(r.stepTimeMs / r.predictedFromOtherRunsStepTimeMs).toFixed(2)}`,
      ),
      // What share of the GPUs' peak the run reached, as the plans' MFU counts it.
      cell(r.mfu === null ? '-' : `${(100 * r.mfu).toFixed(0)}%`),
      // The peak PyTorch allocated beside what trainplan counted (before the runs' memory calibration).
      cell(r.peakMemoryGb === null ? '-' : r.peakMemoryGb.toFixed(1)),
      cell(r.predictedPeakMemoryGb === null ? '-' : r.predictedPeakMemoryGb.toFixed(1)),
      // What its GPU gave the process, which plans on that GPU are fitted in ('-': the run did not say).
      cell(r.gpuMemoryGb === null ? '-' : r.gpuMemoryGb.toFixed(2)),
      cell(r.source, 'text'),
      cell(r.recordedAt.slice(0, 16).replace('T', ' '), 'text'),
    );
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.className = 'delete';
    remove.textContent = 'delete';
    remove.addEventListener('click', () => void deleteRun(r));
    const td = document.createElement('td');
    td.append(remove);
    row.append(td);
  }
  $('runs').replaceChildren(table);
}

async function deleteRun(r: Run): Promise<void> {
  $('runs-error').textContent = '';
  try {
    await graphql(DELETE, { owner: r.owner, ids: [r.id] });
    await showRuns();
  } catch (e) {
    $('runs-error').textContent = (e as Error).message;
  }
}

/** What recording did: how many runs were stored, and each refused row (numbered as in the file) with why. */
function showResult(result: ImportResult): void {
  // Every row is either stored or refused: together they are the file's rows.
  const rows = result.stored + result.rejected.length;
  $('import-result').textContent = `Stored ${result.stored} of ${rows} run${rows === 1 ? '' : 's'}.`;
  $('rejected').replaceChildren(
    ...result.rejected.map((r) => {
      const li = document.createElement('li');
      li.textContent = `row ${r.index + 1}: ${r.reason}`;
      return li;
    }),
  );
}

async function record(event: Event): Promise<void> {
  event.preventDefault();
  document
    .querySelectorAll('[data-error-for], #form-error, #import-result')
    .forEach((e) => (e.textContent = ''));
  $('rejected').replaceChildren();
  const text = $<HTMLTextAreaElement>('runs-text').value;
  const owner = $<HTMLInputElement>('owner').value;
  const button = $<HTMLButtonElement>('record');
  button.disabled = true;
  try {
    const { importMeasurements } = await graphql<{ importMeasurements: ImportResult }>(IMPORT, {
      text,
      owner,
    });
    showResult(importMeasurements);
    await showRuns();
  } catch (e) {
    // BAD_USER_INPUT names the field at fault (the text or the owner): said beside it.
    if (e instanceof RequestErrors)
      for (const error of e.errors) {
        const slot = document.querySelector(`[data-error-for="${error.extensions?.field ?? ''}"]`);
        (slot ?? $('form-error')).textContent += `${error.message} `;
      }
    else $('form-error').textContent = (e as Error).message;
  } finally {
    button.disabled = false;
  }
}

$<HTMLInputElement>('runs-file').addEventListener('change', async (event) => {
  const file = (event.target as HTMLInputElement).files?.[0];
  if (file) $<HTMLTextAreaElement>('runs-text').value = await file.text();
});
$('import-form').addEventListener('submit', (e) => void record(e));
const reshow = () =>
  void showRuns().catch((e: unknown) => ($('runs-error').textContent = (e as Error).message));
$('own-only').addEventListener('change', reshow);
$('owner').addEventListener('change', () => {
  if ($<HTMLInputElement>('own-only').checked) reshow();
});
reshow();
