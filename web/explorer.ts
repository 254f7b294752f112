// The plan explorer: a form for `recommend`, and its answer drawn with Observable Plot (no chart
// code of our own): cost versus time with P10-P90 whiskers and the Pareto front, the ranked plans,
// a precision comparison for the chosen configuration (`predict` per precision), and the rejection
// reasons. Everything is fetched from this server's /graphql; nothing leaves the machine.
import './page.css';
import * as Plot from '@observablehq/plot';
import { layoutWords, type LayoutDegrees } from '../predictor/layout-words.js';
import { $, graphql, RequestErrors, type GraphQLError } from './api.js';

/** The degrees each plan reports, fetched with it. */
type Parallelism = LayoutDegrees;
interface Plan {
  rank: number;
  gpu: { id: string };
  nodes: number;
  gpusPerNode: number;
  totalGpus: number;
  batchSizePerGpu: number;
  gradAccumSteps: number;
  precision: string;
  stepTimeMs: number;
  stepTimeMsP10: number;
  stepTimeMsP90: number;
  totalHours: number;
  totalHoursP90: number;
  costUsd: number | null;
  priceUsdPerGpuHour: number | null;
  memoryGbPerGpu: number;
  /** The network between the plan's nodes: its offer's, or the default the offer leaves to us. */
  interNodeGbps: number;
  /** How NCCL crosses it (TCP over an Ethernet-only instance), where the server says. */
  interNodeTransport?: 'RDMA' | 'TCP';
  evidence: string;
  /** What the estimate rests on, in a word (the table's column; `evidence` says it in full). */
  evidenceLevel: 'UNMEASURED' | 'GPU_MEASURED' | 'MODEL_MEASURED_ON_GPU';
  /** How many of the user's recorded runs moved the prediction (absent from servers without the field). */
  calibrationRuns?: number;
  /** How to time the plan with the measurement harness (absent from servers without the field). */
  harness?: { commands: string[]; note: string };
  parallelism: Parallelism;
  offer?: { provider: string; instance: string } | null;
  costUsdP90?: number | null;
  /** The model is measured, but never in this precision (the estimate is the trees' extrapolation). */
  precisionUnmeasured?: boolean;
  /** Model FLOPs utilization at the plan's step time; null without a peak for its math (absent from servers without the field). */
  mfu?: number | null;
}
interface Recommendation {
  status: string;
  predictor: string;
  evaluated: number;
  feasible: number;
  plans: Plan[];
  paretoFront: Plan[];
  rejected: { reason: string; description: string; count: number }[];
  notes: string[];
}
// ------------------------------------------------------------------ what this server offers

/** Fields that only some versions of the API have (offers and providers); asked for when present. */
interface Capabilities {
  providers: boolean;
  softwareStack: boolean;
  attention: boolean;
  offer: boolean;
  costUsdP90: boolean;
  precisionUnmeasured: boolean;
  interNodeTransport: boolean;
  interNodeTransportInput: boolean;
  calibrationRuns: boolean;
  harness: boolean;
  mfu: boolean;
}
let capabilities: Capabilities = {
  providers: false,
  softwareStack: false,
  attention: false,
  offer: false,
  costUsdP90: false,
  precisionUnmeasured: false,
  interNodeTransport: false,
  interNodeTransportInput: false,
  calibrationRuns: false,
  harness: false,
  mfu: false,
};
let throughputUnits = new Map<string, string>();
/** What one batch element is per model (a sequence, an image): the global batch counts them, not tokens. */
let batchElements = new Map<string, string>();

async function loadCatalog(): Promise<void> {
  const data = await graphql<{
    models: { id: string; name: string; throughputUnit: string; batchElement: string }[];
    gpus: { id: string; memoryGb: number }[];
    input: { inputFields: { name: string }[] } | null;
    plan: { fields: { name: string }[] } | null;
    stacks: { enumValues: { name: string; description: string | null }[] } | null;
    attention: { enumValues: { name: string; description: string | null }[] } | null;
  }>(`
    {
      models {
        id
        name
        throughputUnit
        batchElement
      }
      gpus {
        id
        memoryGb
      }
      input: __type(name: "RecommendInput") {
        inputFields {
          name
        }
      }
      plan: __type(name: "Plan") {
        fields {
          name
        }
      }
      attention: __type(name: "AttentionImplementation") {
        enumValues {
          name
          description
        }
      }
      stacks: __type(name: "SoftwareStack") {
        enumValues {
          name
          description
        }
      }
    }
  `);
  const inputs = new Set(data.input?.inputFields.map((f) => f.name));
  const planFields = new Set(data.plan?.fields.map((f) => f.name));
  capabilities = {
    providers: inputs.has('providers'),
    softwareStack: inputs.has('softwareStack') && !!data.stacks,
    attention: inputs.has('attention') && !!data.attention,
    offer: planFields.has('offer'),
    costUsdP90: planFields.has('costUsdP90'),
    precisionUnmeasured: planFields.has('precisionUnmeasured'),
    interNodeTransport: planFields.has('interNodeTransport'),
    interNodeTransportInput: inputs.has('interNodeTransport'),
    calibrationRuns: planFields.has('calibrationRuns'),
    harness: planFields.has('harness'),
    mfu: planFields.has('mfu'),
  };
  throughputUnits = new Map(data.models.map((m) => [m.id, m.throughputUnit]));
  batchElements = new Map(data.models.map((m) => [m.id, m.batchElement]));
  const model = $<HTMLSelectElement>('model');
  model.replaceChildren(...data.models.map((m) => new Option(`${m.name} (${m.id})`, m.id)));
  model.value = 'resnet50_v1.5';
  // The stacks the API knows, each with its own description; the default (eager PyTorch, what a
  // typical user runs) first, as the API has it.
  const stack = $<HTMLSelectElement>('software-stack');
  stack.replaceChildren(
    ...(data.stacks?.enumValues ?? []).map((v) =>
      Object.assign(new Option(v.name, v.name), { title: v.description ?? '' }),
    ),
  );
  stack.disabled = !capabilities.softwareStack;
  // How the attention cores run: by default as the model's code runs them (the API's default).
  const attention = $<HTMLSelectElement>('attention');
  attention.replaceChildren(
    new Option("the model's code", ''),
    ...(data.attention?.enumValues ?? []).map((v) =>
      Object.assign(new Option(v.name, v.name), { title: v.description ?? '' }),
    ),
  );
  attention.disabled = !capabilities.attention;
  $<HTMLSelectElement>('inter-node-transport').disabled = !capabilities.interNodeTransportInput;
  $<HTMLSelectElement>('gpus').replaceChildren(
    ...data.gpus.map((g) => new Option(`${g.id} (${g.memoryGb} GB)`, g.id)),
  );
  for (const id of ['providers']) {
    const input = $<HTMLInputElement>(id);
    if (!capabilities.providers) {
      input.disabled = true;
      input.placeholder = 'this server prices per GPU, not per provider';
    }
  }
  showUnit();
}

function showUnit(): void {
  const unit = throughputUnits.get($<HTMLSelectElement>('model').value)?.replace(/\/s$/, '');
  const source = document.querySelector<HTMLInputElement>('input[name=source]:checked')?.value;
  $('samples-unit').textContent =
    source === 'zoo' && unit ? `(${unit}: dataset size x epochs)` : "(the model's unit, e.g. tokens)";
  const element = source === 'zoo' ? batchElements.get($<HTMLSelectElement>('model').value) : 'sequence';
  $('global-batch-unit').textContent =
    `(the recipe's, in ${element ?? 'batch element'}s per step; empty: each plan's GPUs x batch)`;
}

// ------------------------------------------------------------------ the request

const numberOrNull = (id: string) => {
  const text = $<HTMLInputElement>(id).value.trim();
  return text === '' ? null : Number(text);
};

function recommendInput(): Record<string, unknown> {
  const source = document.querySelector<HTMLInputElement>('input[name=source]:checked')!.value;
  const seqLen = numberOrNull('seq-len');
  const workload: Record<string, unknown> = { samples: numberOrNull('samples') };
  if (source === 'zoo') workload.model = $<HTMLSelectElement>('model').value;
  else workload.customModel = { huggingFaceConfig: $<HTMLTextAreaElement>('hf-config').value };
  if (seqLen !== null) workload.seqLen = seqLen;
  const input: Record<string, unknown> = {
    workload,
    objective: $<HTMLSelectElement>('objective').value,
    deadlineHours: numberOrNull('deadline'),
    budgetUsd: numberOrNull('budget'),
    maxNodes: numberOrNull('max-nodes') ?? 8,
    // The chart shows the whole trade-off, not only the top few.
    limit: 200,
  };
  // A recipe's global batch: every plan accumulates to it, and pipelines run the micro-batches it implies.
  const globalBatch = numberOrNull('global-batch');
  if (globalBatch !== null) input.globalBatch = globalBatch;
  // A network the person states: plans joining instances of offers that state none are then ranked on it.
  const network = numberOrNull('inter-node-gbps');
  if (network !== null) input.interNodeGbps = network;
  // How NCCL crosses it, for every offer (empty: each offer's own: TCP on Ethernet-only instance types).
  const transport = $<HTMLSelectElement>('inter-node-transport').value;
  if (capabilities.interNodeTransportInput && transport) input.interNodeTransport = transport;
  const gpus = [...$<HTMLSelectElement>('gpus').selectedOptions].map((o) => o.value);
  if (gpus.length) input.gpus = gpus;
  const providers = $<HTMLInputElement>('providers')
    .value.split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (capabilities.providers && providers.length) input.providers = providers;
  if (capabilities.softwareStack) input.softwareStack = $<HTMLSelectElement>('software-stack').value;
  const attention = $<HTMLSelectElement>('attention').value;
  if (capabilities.attention && attention) input.attention = attention;
  return input;
}

const planFields = () => `
  rank gpu { id } nodes gpusPerNode totalGpus batchSizePerGpu gradAccumSteps precision
  stepTimeMs stepTimeMsP10 stepTimeMsP90 totalHours totalHoursP90 costUsd priceUsdPerGpuHour
  memoryGbPerGpu interNodeGbps evidence evidenceLevel
  parallelism { dataParallel tensorParallel pipelineParallel virtualPipelineStages contextParallel expertParallel zeroStage recompute }
  ${capabilities.offer ? 'offer { provider instance }' : ''}
  ${capabilities.costUsdP90 ? 'costUsdP90' : ''}
  ${capabilities.precisionUnmeasured ? 'precisionUnmeasured' : ''}
  ${capabilities.interNodeTransport ? 'interNodeTransport' : ''}
  ${capabilities.calibrationRuns ? 'calibrationRuns' : ''}
  ${capabilities.harness ? 'harness { commands note }' : ''}
  ${capabilities.mfu ? 'mfu' : ''}`;

// ------------------------------------------------------------------ errors next to their fields

function clearErrors(): void {
  document.querySelectorAll('[data-error-for]').forEach((e) => (e.textContent = ''));
  document.querySelectorAll('.invalid').forEach((e) => e.classList.remove('invalid'));
  $('form-error').textContent = '';
}

/** The form field an API error names: the longest data-field that is the error's field or a prefix of it. */
function fieldFor(apiField: string | undefined): string | undefined {
  if (!apiField) return undefined;
  const fields = [...document.querySelectorAll<HTMLElement>('[data-field]')].map((e) => e.dataset.field!);
  return fields
    .filter((f) => apiField === f || apiField.startsWith(`${f}.`) || apiField.startsWith(`${f}[`))
    .sort((a, b) => b.length - a.length)[0];
}

function showErrors(errors: GraphQLError[]): void {
  for (const error of errors) {
    const field = fieldFor(error.extensions?.field);
    const slot = field && document.querySelector(`[data-error-for="${field}"]`);
    if (slot) {
      slot.textContent = error.message;
      document.querySelector(`[data-field="${field}"]`)?.classList.add('invalid');
    } else $('form-error').textContent += `${error.message} `;
  }
}

// ------------------------------------------------------------------ drawing

/** Hours scale with the step time, and a per-hour bill with the hours: the P10/P90 hours and their cost. */
function withInterval(p: Plan) {
  const hoursP10 = (p.totalHours * p.stepTimeMsP10) / p.stepTimeMs;
  const perHour = p.costUsd === null ? null : p.costUsd / p.totalHours;
  return {
    ...p,
    gpuId: p.gpu.id,
    layout: layoutWords(p.parallelism),
    hoursP10,
    costP10: perHour === null ? null : perHour * hoursP10,
    costP90: p.costUsdP90 ?? (perHour === null ? null : perHour * p.totalHoursP90),
  };
}

const usd = (x: number | null | undefined) =>
  x === null || x === undefined ? '–' : `$${x < 100 ? x.toFixed(2) : Math.round(x).toLocaleString('en')}`;
const hours = (x: number) => (x < 10 ? x.toPrecision(3) : Math.round(x).toLocaleString('en'));

function drawChart(r: Recommendation): void {
  const plans = r.plans.filter((p) => p.costUsd !== null).map(withInterval);
  const front = r.paretoFront
    .filter((p) => p.costUsd !== null)
    .map(withInterval)
    .sort((a, b) => a.totalHours - b.totalHours);
  const chart = $('chart');
  if (!plans.length) {
    chart.replaceChildren('No priced plan to draw.');
    return;
  }
  chart.replaceChildren(
    Plot.plot({
      width: Math.min(900, chart.clientWidth || 900),
      height: 420,
      grid: true,
      x: { type: 'log', label: 'training time (hours) →' },
      y: { type: 'log', label: '↑ cost (USD)' },
      color: { legend: true, label: 'GPU' },
      marks: [
        Plot.link(plans, {
          x1: 'hoursP10',
          y1: 'costP10',
          x2: 'totalHoursP90',
          y2: 'costP90',
          stroke: 'gpuId',
          strokeOpacity: 0.5,
        }),
        Plot.line(front, { x: 'totalHours', y: 'costUsd', stroke: 'black', strokeWidth: 1.5 }),
        Plot.dot(front, { x: 'totalHours', y: 'costUsd', r: 6, stroke: 'black', fill: 'gpuId' }),
        Plot.dot(plans, {
          x: 'totalHours',
          y: 'costUsd',
          fill: 'gpuId',
          r: 3.5,
          tip: true,
          channels: {
            rank: 'rank',
            GPU: 'gpuId',
            'nodes x GPUs': (p: Plan) => `${p.nodes} x ${p.gpusPerNode}`,
            batch: 'batchSizePerGpu',
            precision: 'precision',
            layout: 'layout',
            'P90 hours': 'totalHoursP90',
            ...(capabilities.mfu ? { MFU: (p: Plan) => (p.mfu == null ? '–' : p.mfu.toFixed(2)) } : {}),
            evidence: 'evidence',
          },
        }),
      ],
    }),
  );
}

function drawTable(r: Recommendation, onChoose: (p: Plan) => void): void {
  type Column = [string, (p: ReturnType<typeof withInterval>) => string, boolean?];
  const offer: Column = ['offer', (p) => (p.offer ? `${p.offer.provider} ${p.offer.instance}` : '–'), true];
  const mfuColumn: Column = ['MFU', (p) => (p.mfu == null ? '–' : `${(100 * p.mfu).toFixed(0)}%`)];
  const columns: Column[] = [
    ['rank', (p) => String(p.rank)],
    ['GPU', (p) => p.gpuId, true],
    ...(capabilities.offer ? [offer] : []),
    ['nodes x GPUs', (p) => `${p.nodes} x ${p.gpusPerNode}`],
    ['batch/GPU', (p) => String(p.batchSizePerGpu) + (p.gradAccumSteps > 1 ? ` x${p.gradAccumSteps}` : '')],
    // A precision the model never ran: its time is the trees' extrapolation, with a wider interval.
    ['precision', (p) => p.precision + (p.precisionUnmeasured ? ' (model never ran it)' : ''), true],
    ['layout', (p) => p.layout, true],
    ['hours', (p) => hours(p.totalHours)],
    ['cost', (p) => usd(p.costUsd)],
    ['P90 hours', (p) => hours(p.totalHoursP90)],
    ['P90 cost', (p) => usd(p.costP90)],
    // What share of the GPUs' peak the plan's time assumes: a reader knows what runs reach.
    ...(capabilities.mfu ? [mfuColumn] : []),
    ['evidence', (p) => evidenceWords(p), true],
  ];
  const table = document.createElement('table');
  const head = table.createTHead().insertRow();
  for (const [name] of columns)
    head.appendChild(Object.assign(document.createElement('th'), { textContent: name }));
  const body = table.createTBody();
  for (const plan of r.plans.map(withInterval)) {
    const row = body.insertRow();
    row.dataset.rank = String(plan.rank);
    for (const [, value, text] of columns) {
      const cell = row.insertCell();
      cell.textContent = value(plan);
      if (text) cell.className = 'text';
    }
    // The full evidence on hover, and under the precision comparison once the plan is chosen: in the
    // row it would be a column of words a line each.
    row.lastElementChild!.setAttribute('title', plan.evidence);
    row.addEventListener('click', () => {
      body.querySelectorAll('tr.chosen').forEach((e) => e.classList.remove('chosen'));
      row.classList.add('chosen');
      onChoose(plan);
    });
  }
  $('plans').replaceChildren(
    r.plans.length ? table : 'No plan meets every constraint: the notes above say why, and what to change.',
  );
}

/** A plan's evidence in a few words: what the estimate rests on, and whether the user's runs moved it. */
function evidenceWords(p: Plan): string {
  const level = {
    MODEL_MEASURED_ON_GPU: 'model measured on this GPU',
    GPU_MEASURED: 'GPU measured, other models',
    UNMEASURED: 'GPU unmeasured',
  }[p.evidenceLevel];
  return p.calibrationRuns ? `${level}; ${p.calibrationRuns} of your runs` : level;
}

function drawRejections(r: Recommendation): void {
  $('rejections').replaceChildren(
    r.rejected.length
      ? Plot.plot({
          marginLeft: 190,
          height: 40 + 28 * r.rejected.length,
          x: { label: 'candidates rejected →', grid: true },
          y: { label: null },
          marks: [
            Plot.barX(r.rejected, {
              x: 'count',
              y: 'reason',
              sort: { y: '-x' },
              fill: '#d95f02',
              tip: true,
              title: (d: { description: string; count: number }) => `${d.count}: ${d.description}`,
            }),
            Plot.ruleX([0]),
          ],
        })
      : 'No candidate was rejected.',
  );
}

/** The answer's notes, warnings marked: what a person should read before renting plan 1. */
function drawNotes(r: Recommendation): void {
  $('notes').replaceChildren(
    ...r.notes.map((note) =>
      Object.assign(document.createElement('li'), {
        textContent: note,
        className: note.startsWith('warning:') ? 'warning' : '',
      }),
    ),
  );
}

// ------------------------------------------------------------------ timing the chosen plan

/**
 * The harness commands that time the chosen plan on the user's GPUs, or why there are none; and
 * the script itself from this server (a zoo model embedded), for a GPU machine without trainplan.
 */
function showHarness(plan: Plan, asked: Asked): void {
  const section = $('measure');
  section.hidden = !plan.harness;
  if (!plan.harness) return;
  $('harness-commands').textContent = plan.harness.commands.join('\n');
  $('harness-commands').hidden = plan.harness.commands.length === 0;
  $('harness-note').textContent = plan.harness.note;
  const { model, seqLen } = asked.workload as { model?: string; seqLen?: number };
  const query = model
    ? `?${new URLSearchParams({ model, ...(seqLen ? { seqLen: String(seqLen) } : {}) })}`
    : '';
  const download = $<HTMLAnchorElement>('harness-download');
  download.href = `/harness/measure.py${query}`;
  download.parentElement!.hidden = plan.harness.commands.length === 0;
}

// ------------------------------------------------------------------ precision comparison

/** What the precision comparison asks again of each plan: the request's workload, software stack and attention. */
interface Asked {
  workload: unknown;
  softwareStack?: unknown;
  attention?: unknown;
}

async function comparePrecisions(plan: Plan, asked: Asked): Promise<void> {
  $('chosen').textContent =
    `(${plan.gpu.id}, ${plan.nodes} x ${plan.gpusPerNode} GPUs, batch ${plan.batchSizePerGpu}, ${layoutWords(plan.parallelism)})`;
  $('chosen-evidence').textContent = `Plan ${plan.rank}'s evidence: ${plan.evidence}`;
  const target = $('precisions');
  target.replaceChildren('Predicting…');
  try {
    const { gpu } = await graphql<{ gpu: { supportedPrecisions: string[] } }>(
      `
        query ($id: String!) {
          gpu(id: $id) {
            supportedPrecisions
          }
        }
      `,
      { id: plan.gpu.id },
    );
    // Every degree the plan chose and its offer's network, so each precision is predicted as the plan
    // runs (without its expert parallelism a mixture-of-experts plan's own precision came back out of
    // memory; without the network, the GPU's default network answered). The degrees are taken whole,
    // less the data-parallel width predict derives: one listed by hand was once left out.
    const { dataParallel: _derived, ...layout } = plan.parallelism;
    const inputs = gpu.supportedPrecisions.map((precision) => ({
      workload: asked.workload,
      ...(asked.softwareStack ? { softwareStack: asked.softwareStack } : {}),
      ...(asked.attention ? { attention: asked.attention } : {}),
      gpu: plan.gpu.id,
      nodes: plan.nodes,
      gpusPerNode: plan.gpusPerNode,
      batchSizePerGpu: plan.batchSizePerGpu,
      gradAccumSteps: plan.gradAccumSteps,
      precision,
      parallelism: layout,
      interNodeGbps: plan.interNodeGbps,
      ...(plan.interNodeTransport ? { interNodeTransport: plan.interNodeTransport } : {}),
      ...(plan.priceUsdPerGpuHour !== null ? { priceUsdPerGpuHour: plan.priceUsdPerGpuHour } : {}),
    }));
    const query = `query (${inputs.map((_, i) => `$p${i}: PredictInput!`).join(', ')}) {
      ${inputs
        .map(
          (_, i) =>
            `p${i}: predict(input: $p${i}) { precision totalHours totalHoursP90 stepTimeMs stepTimeMsP10 costUsd memoryGbPerGpu fitsInMemory }`,
        )
        .join('\n')}
    }`;
    const data = await graphql<Record<string, Plan & { fitsInMemory: boolean }>>(
      query,
      Object.fromEntries(inputs.map((input, i) => [`p${i}`, input])),
    );
    const rows = Object.values(data).map((p) => ({
      ...p,
      hoursP10: (p.totalHours * p.stepTimeMsP10) / p.stepTimeMs,
      fits: p.fitsInMemory ? 'fits in memory' : 'does not fit in memory',
      label:
        `${hours(p.totalHours)} h · ${usd(p.costUsd)}${p.fitsInMemory ? '' : ' · out of memory'}` +
        (p.precision === plan.precision ? ' · this plan' : ''),
    }));
    target.replaceChildren(
      Plot.plot({
        marginLeft: 90,
        marginRight: 200,
        height: 40 + 30 * rows.length,
        x: { type: 'log', label: 'training time (hours), P10-P90 →', grid: true },
        y: { label: null, domain: rows.map((r) => r.precision) },
        color: {
          domain: ['fits in memory', 'does not fit in memory'],
          range: ['#1b9e77', '#bbbbbb'],
          legend: true,
        },
        marks: [
          Plot.ruleY(rows, {
            y: 'precision',
            x1: 'hoursP10',
            x2: 'totalHoursP90',
            stroke: 'fits',
            strokeWidth: 2,
          }),
          Plot.dot(rows, { y: 'precision', x: 'totalHours', fill: 'fits', r: 5, tip: true }),
          Plot.dot(
            rows.filter((r) => r.precision === plan.precision),
            { y: 'precision', x: 'totalHours', r: 9, stroke: 'black' },
          ),
          Plot.text(rows, { y: 'precision', x: 'totalHoursP90', text: 'label', dx: 8, textAnchor: 'start' }),
        ],
      }),
    );
  } catch (e) {
    target.replaceChildren(`Could not compare precisions: ${(e as Error).message}`);
  }
}

// ------------------------------------------------------------------ CSV export

let lastPlans: Plan[] = [];

function csv(plans: Plan[]): string {
  const header = [
    'rank',
    'gpu',
    'offer',
    'nodes',
    'gpus_per_node',
    'batch_size_per_gpu',
    'grad_accum_steps',
    'precision',
    'layout',
    'total_hours',
    'total_hours_p90',
    'cost_usd',
    'cost_usd_p90',
    'price_usd_per_gpu_hour',
    'memory_gb_per_gpu',
    'mfu',
    'evidence',
  ];
  const quote = (v: unknown) => {
    const s = v === null || v === undefined ? '' : String(v);
    return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  const rows = plans
    .map(withInterval)
    .map((p) =>
      [
        p.rank,
        p.gpuId,
        p.offer ? `${p.offer.provider} ${p.offer.instance}` : '',
        p.nodes,
        p.gpusPerNode,
        p.batchSizePerGpu,
        p.gradAccumSteps,
        p.precision,
        p.layout,
        p.totalHours,
        p.totalHoursP90,
        p.costUsd,
        p.costP90,
        p.priceUsdPerGpuHour,
        p.memoryGbPerGpu,
        p.mfu,
        p.evidence,
      ]
        .map(quote)
        .join(','),
    );
  return [header.join(','), ...rows].join('\n') + '\n';
}

function exportCsv(): void {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([csv(lastPlans)], { type: 'text/csv' }));
  link.download = 'trainplan-plans.csv';
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

// ------------------------------------------------------------------ running it

/** A search refused for time that this server would let run longer: how long it may ask for, else undefined. */
function longerBudget(errors: GraphQLError[]): number | undefined {
  const refused = errors.find((e) => e.extensions?.code === 'SEARCH_TIMEOUT');
  const { budgetMs, maxBudgetMs } = refused?.extensions ?? {};
  return budgetMs !== undefined && maxBudgetMs !== undefined && maxBudgetMs > budgetMs
    ? maxBudgetMs
    : undefined;
}

/** Runs the form's search; `timeBudgetMs` when the person asked to let a refused one run longer. */
async function recommend(timeBudgetMs?: number): Promise<void> {
  clearErrors();
  const input = recommendInput();
  if (timeBudgetMs !== undefined) input.timeBudgetMs = timeBudgetMs;
  $('summary').textContent = 'Searching…';
  $('notes').replaceChildren();
  $<HTMLButtonElement>('recommend').disabled = true;
  try {
    const { recommend: r } = await graphql<{ recommend: Recommendation }>(
      `query ($input: RecommendInput!) { recommend(input: $input) {
        status predictor evaluated feasible
        plans { ${planFields()} }
        paretoFront { ${planFields()} }
        rejected { reason description count } notes } }`,
      { input },
    );
    lastPlans = r.plans;
    $('summary').textContent =
      `${r.evaluated.toLocaleString('en')} candidates evaluated, ${r.feasible.toLocaleString('en')} feasible; ` +
      `${r.plans.length} best shown (${r.status.toLowerCase()}, predictor ${r.predictor}).`;
    drawChart(r);
    const asked: Asked = {
      workload: input.workload,
      softwareStack: input.softwareStack,
      attention: input.attention,
    };
    // A plan clicked: how to time it, and its precisions compared (which asks the server again).
    const choose = (p: Plan) => {
      showHarness(p, asked);
      void comparePrecisions(p, asked);
    };
    drawTable(r, choose);
    drawRejections(r);
    drawNotes(r);
    const first = document.querySelector<HTMLTableRowElement>('#plans tbody tr');
    if (first) first.click();
    else $('precisions').replaceChildren('');
  } catch (e) {
    $('summary').textContent = 'The request was refused; see the form.';
    if (e instanceof RequestErrors) {
      showErrors(e.errors);
      // A search refused for time is not the form's fault: offer to let it run as long as this server allows.
      const longer = longerBudget(e.errors);
      if (longer !== undefined) {
        const again = document.createElement('button');
        again.type = 'button';
        again.id = 'search-longer';
        again.textContent = `Search again for up to ${longer / 1000} s`;
        again.addEventListener('click', () => void recommend(longer));
        $('form-error').append(again);
      }
    } else $('form-error').textContent = (e as Error).message;
  } finally {
    $<HTMLButtonElement>('recommend').disabled = false;
  }
}

$('plan-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void recommend();
});
$('csv').addEventListener('click', exportCsv);
$('model').addEventListener('change', showUnit);
document.querySelectorAll('input[name=source]').forEach((e) => e.addEventListener('change', showUnit));

loadCatalog()
  .then(() => recommend())
  .catch((e: unknown) => ($('summary').textContent = `Could not load the catalog: ${(e as Error).message}`));
