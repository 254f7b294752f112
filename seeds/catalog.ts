// Loads the product's data files (this folder) into typed records (types.ts). Figures are taken as
// they stand in the CSVs; an empty cell stays null. The only derived figure is a missing intra-node
// bandwidth, filled from links.json and marked as derived. Records are frozen: a server-wide price
// override builds new catalog entries and never touches the hardware facts the predictor reads.
import { readFileSync } from 'node:fs';
import {
  NETWORK_TRANSPORTS,
  PRECISIONS,
  type NetworkTransport,
  type CatalogGpu,
  type Efficiency,
  type FrameworkStates,
  type OptimizerState,
  type SourceRecipe,
  type RecomputeModule,
  RECOMPUTE,
  RECOMPUTE_MODULES,
  type Recompute,
  type MemoryConstants,
  type SavedRule,
  type Generation,
  type GpuPrice,
  type GpuSpec,
  type MathMode,
  type Precision,
  type UnitRule,
  type PublishedZooModel,
  type ZooEntry,
  type AsRunRule,
} from './types.js';
import { longerButFasterPerToken, type ExcludedMeasurement } from './measurement-checks.js';

const here = (file: string) => new URL(file, import.meta.url);

/** RFC 4180 CSV: quoted fields may hold commas, quotes ("") and newlines. */
export function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      field = '';
      if (row.length > 1 || row[0] !== '') rows.push(row);
      row = [];
    } else field += c;
  }
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  const [header, ...body] = rows;
  if (!header) return [];
  return body.map((cells) => Object.fromEntries(header.map((h, j) => [h, cells[j] ?? ''])));
}

/** Quote a value for CSV output where needed. */
export function csvCell(value: unknown): string {
  const s = value === null || value === undefined ? '' : String(value);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * A CSV cell that says true or false (any case): empty says nothing (undefined); anything else is
 * refused, naming the column. One reader for every such column (predict-csv, calibrate import).
 */
export function booleanCell(column: string, cell: string | undefined): boolean | undefined {
  const v = (cell ?? '').trim();
  if (v === '') return undefined;
  if (!/^(true|false)$/i.test(v)) throw new Error(`${column}: "${v}" is not true or false`);
  return v.toLowerCase() === 'true';
}

const num = (s: string | undefined): number | null => {
  if (s === undefined || s.trim() === '') return null;
  const v = Number(s);
  return Number.isFinite(v) ? v : null;
};

export function generationOf(architecture: string): Generation {
  const a = architecture.toLowerCase();
  for (const g of ['pascal', 'volta', 'turing', 'ampere', 'hopper', 'blackwell'] as const)
    if (a.includes(g)) return g;
  if (a.includes('ada')) return 'ada';
  if (a.includes('cdna3')) return 'cdna3';
  if (a.includes('cdna2')) return 'cdna2';
  if (a.includes('cdna')) return 'cdna';
  if (a.includes('tpu')) return 'tpu';
  return 'unknown';
}

interface LinkRule {
  match: string;
  bidirGbps: number;
  fabric: boolean;
}
interface LinksFile {
  rules: LinkRule[];
  fabricPatterns: string[];
}

interface NodeSizes {
  defaultMaxGpusPerNode: number;
  maxGpusPerNode: Record<string, number>;
}

/** A GPU's usable memory where seeds/gpu-memory.csv gives one: GiB and where it comes from. */
interface UsableMemory {
  gb: number;
  source: string;
}

function usableMemoryRows(): Map<string, UsableMemory> {
  return new Map(
    parseCsv(readFileSync(here('./gpu-memory.csv'), 'utf8')).map((r) => {
      const mib = num(r.usable_mib);
      if (mib === null || !(mib > 0)) throw new Error(`seeds/gpu-memory.csv: ${r.gpu} has no usable_mib`);
      return [r.gpu, { gb: mib / 1024, source: `${r.reported_by} (${r.source}): ${r.derivation}` }];
    }),
  );
}

function hardwareFromRow(
  r: Record<string, string>,
  links: LinksFile,
  nodes: NodeSizes,
  usable: ReadonlyMap<string, UsableMemory>,
): GpuSpec {
  const link = r.intra_node_interconnect;
  const label = num(r.memory_gb) ?? 0;
  const sourced = usable.get(r.id);
  const catalogBw = num(r.intra_node_bw_gbps_bidir_per_gpu);
  const rule = links.rules.find((x) => link.includes(x.match));
  const peakTflops: Record<MathMode, number | null> = {
    fp32: num(r.fp32_tflops),
    tf32: num(r.tf32_tensor_tflops),
    fp16: num(r.fp16_tensor_tflops),
    bf16: num(r.bf16_tensor_tflops),
    fp8: num(r.fp8_tensor_tflops),
    fp4: num(r.fp4_tensor_tflops),
  };
  return {
    id: r.id,
    vendor: r.vendor,
    architecture: r.architecture,
    generation: generationOf(r.architecture),
    releaseYear: num(r.release_year),
    formFactor: r.form_factor,
    memoryGb: label,
    usableMemoryGb: sourced?.gb ?? label,
    usableMemorySource:
      sourced?.source ?? 'the vendor label: no source here gives the total CUDA reports for it',
    memoryType: r.memory_type,
    memoryBwGbps: num(r.memory_bw_gbps) ?? 0,
    l2CacheMb: num(r.l2_cache_mb),
    smCount: num(r.sm_or_cu_count),
    boostClockMhz: num(r.boost_clock_mhz),
    peakTflops,
    fp64Tflops: num(r.fp64_tflops),
    int8Tops: num(r.int8_tensor_tops),
    intraNodeLink: link,
    intraNodeBwGbpsBidir: catalogBw ?? rule?.bidirGbps ?? 0,
    intraNodeBwSource:
      catalogBw !== null
        ? 'gpus.csv'
        : rule
          ? `derived from link name "${rule.match}" (seeds/links.json)`
          : 'unknown',
    pcieBwGbpsBidir: pcieBandwidth(link),
    hasNvlinkFabric: links.fabricPatterns.some((p) => link.includes(p)),
    maxGpusPerNode: nodes.maxGpusPerNode[r.id] ?? nodes.defaultMaxGpusPerNode,
    tdpW: num(r.tdp_w),
    typicalInternodeNetwork: r.typical_internode_network,
    source: r.source,
    notes: r.notes,
  };
}

const priceFromRow = (r: Record<string, string>): GpuPrice => ({
  priceUsdPerGpuHour: num(r.price_usd_per_gpu_hr_min),
  priceUsdPerGpuHourMax: num(r.price_usd_per_gpu_hr_max),
  pricePoints: r.price_points,
  priceSource: r.price_source,
});

const readJson = <T>(file: string): T => JSON.parse(readFileSync(here(file), 'utf8')) as T;

let linksCache: LinksFile | undefined;
const links = () => (linksCache ??= readJson<LinksFile>('./links.json'));

/**
 * Bidirectional GB/s of the PCIe link a link description names (seeds/links.json); the generic
 * PCIe rule (Gen3 x16) when it names none, e.g. for a fabric with no per-GPU figure.
 */
export function pcieBandwidth(link: string): number {
  const pcie = links().rules.filter((r) => r.match.startsWith('PCIe'));
  return (pcie.find((r) => link.includes(r.match)) ?? pcie.find((r) => r.match === 'PCIe')!).bidirGbps;
}

/** The search the server runs once before it opens its port (seeds/warm-up.json, server/warm-up.ts). */
export interface WarmUpSearch {
  gpu: string;
  seqLen: number;
  softwareStack: string;
  huggingFaceConfig: Record<string, unknown>;
}
export const loadWarmUp = (): WarmUpSearch => readJson<WarmUpSearch>('./warm-up.json');

interface CatalogRows {
  hardware: readonly GpuSpec[];
  prices: ReadonlyMap<string, GpuPrice>;
}
let rowsCache: CatalogRows | undefined;
function catalogRows(): CatalogRows {
  if (!rowsCache) {
    const rows = parseCsv(readFileSync(here('./gpus.csv'), 'utf8'));
    const nodes = readJson<NodeSizes>('./node-sizes.json');
    const usable = usableMemoryRows();
    for (const [id, u] of usable) {
      const row = rows.find((r) => r.id === id);
      // A usable figure is the label less what the driver keeps: never above it, never far below.
      const label = row ? num(row.memory_gb) : null;
      if (label === null || !(u.gb <= label && u.gb >= 0.85 * label))
        throw new Error(`seeds/gpu-memory.csv: ${id} ${u.gb.toFixed(2)} GiB against gpus.csv's ${label} GB`);
    }
    rowsCache = {
      hardware: rows.map((r) => deepFreeze(hardwareFromRow(r, links(), nodes, usable))),
      prices: new Map(rows.map((r) => [r.id, Object.freeze(priceFromRow(r))])),
    };
  }
  return rowsCache;
}

function deepFreeze<T extends object>(o: T): T {
  for (const v of Object.values(o)) if (v && typeof v === 'object') Object.freeze(v);
  return Object.freeze(o);
}

/** Every GPU's hardware facts (gpus.csv), in file order: what the predictor reads; never changes. */
export function loadGpuHardware(): readonly GpuSpec[] {
  return catalogRows().hardware;
}

let priceOverrides: { prices: Record<string, number>; source: string } | undefined;
let catalogCache: CatalogGpu[] | undefined;

/** The server-wide per-GPU prices set by setPriceOverrides (empty when none), and where they come from. */
export function serverPriceOverrides(): { prices: Readonly<Record<string, number>>; source: string } {
  return priceOverrides ?? { prices: {}, source: '' };
}

/** The catalog price of a GPU, after any server-wide override (setPriceOverrides). */
function currentPrice(id: string): GpuPrice {
  const catalog = catalogRows().prices.get(id)!;
  const p = priceOverrides?.prices[id];
  if (p === undefined) return catalog;
  return {
    ...catalog,
    priceUsdPerGpuHour: p,
    priceSource: `${priceOverrides!.source} (catalog: ${catalog.priceUsdPerGpuHour ?? 'no price'}; ${catalog.priceSource})`,
  };
}

/** Every row of gpus.csv, in file order: hardware facts and the current price. */
export function loadGpus(): CatalogGpu[] {
  catalogCache ??= loadGpuHardware().map((h) => Object.freeze({ ...h, ...currentPrice(h.id) }));
  return catalogCache;
}

export function getGpu(id: string): CatalogGpu | undefined {
  return loadGpus().find((g) => g.id === id);
}

/**
 * Server-wide default prices (trainplan serve --prices FILE): the GPUs named get this price
 * wherever the catalog's would apply (a request's own prices still win); undefined restores the
 * catalog. Called once at startup, before any request. Builds new catalog entries: hardware
 * records, and entries handed out before, are never changed.
 */
export function setPriceOverrides(
  prices: Record<string, number> | undefined,
  source = 'price override file',
): void {
  priceOverrides = prices ? { prices: { ...prices }, source } : undefined;
  catalogCache = undefined;
}

/** The server-wide prices now in force (what setPriceOverrides was given), for a thread that must see the same. */
export function currentPriceOverrides(): { prices: Record<string, number>; source: string } | undefined {
  return priceOverrides && { prices: { ...priceOverrides.prices }, source: priceOverrides.source };
}

let efficiencyCache: Efficiency | undefined;
/**
 * The analytical predictor's fitted constants (efficiency.json, written by `npm run calibrate`) and,
 * under `memory`, the memory model's (memory.json).
 */
export function loadEfficiency(): Efficiency {
  efficiencyCache ??= deepFreeze({
    ...readJson<Omit<Efficiency, 'memory'>>('./efficiency.json'),
    memory: parseMemoryConstants(readFileSync(MEMORY_FILE, 'utf8')),
  });
  return efficiencyCache;
}
export const EFFICIENCY_FILE = here('./efficiency.json');
export const MEMORY_FILE = here('./memory.json');

/** A recipe's recomputation, one the memory and step-time models know (a typo would silently read as none). */
function recomputeOf(recipe: string, recompute: unknown): Recompute {
  if (!(RECOMPUTE as readonly unknown[]).includes(recompute))
    throw new Error(
      `seeds/memory.json sourceRecipes.${recipe}: recompute "${String(recompute)}" is not one of ${RECOMPUTE.join(', ')}`,
    );
  return recompute as Recompute;
}

/** A recipe's stated tensor and pipeline parallel degrees: whole numbers of at least 1. */
function layoutOf(recipe: string, layout: unknown): { tensorParallel: number; pipelineParallel: number } {
  const l = layout as Record<string, unknown>;
  for (const k of ['tensorParallel', 'pipelineParallel'])
    if (!Number.isInteger(l[k]) || (l[k] as number) < 1)
      throw new Error(`seeds/memory.json sourceRecipes.${recipe}: layout.${k} must be a whole number >= 1`);
  return { tensorParallel: l.tensorParallel as number, pipelineParallel: l.pipelineParallel as number };
}

/** A recipe's recompute_modules, each one the memory and step-time models know (an unknown one would silently count as nothing). */
function recomputeModulesOf(recipe: string, modules: unknown): RecomputeModule[] {
  const list = modules as string[];
  for (const m of list)
    if (!(RECOMPUTE_MODULES as readonly string[]).includes(m))
      throw new Error(
        `seeds/memory.json sourceRecipes.${recipe}: recompute module "${m}" is not one of ${RECOMPUTE_MODULES.join(', ')}`,
      );
  return list as RecomputeModule[];
}

export function parseMemoryConstants(text: string): MemoryConstants {
  const file = JSON.parse(text) as Record<string, unknown>;
  const value = <T>(key: string): T => {
    const entry = file[key] as { value?: T } | undefined;
    if (entry?.value === undefined) throw new Error(`seeds/memory.json: ${key} has no value`);
    return entry.value;
  };
  const rulesOf = (table: Record<string, SavedRule>) =>
    Object.fromEntries(Object.entries(table).filter(([key]) => !key.startsWith('_')));
  const frameworks = file.frameworkRules as Record<string, Record<string, SavedRule>>;
  const recipes = file.sourceRecipes as Record<string, Record<string, unknown>>;
  return {
    sourceRecipes: Object.entries(recipes)
      .filter(([key]) => !key.startsWith('_'))
      .map(([name, r]) => ({
        name,
        rows: new RegExp(r.rows as string),
        ...(r.software ? { software: new RegExp(r.software as string) } : {}),
        ...(r.models ? { models: r.models as string[] } : {}),
        ...(r.tasks ? { tasks: r.tasks as string[] } : {}),
        ...(r.family ? { family: r.family as string } : {}),
        ...(r.fp8Parameters !== undefined ? { fp8Parameters: r.fp8Parameters as boolean } : {}),
        ...(r.masterWeights ? { masterWeights: r.masterWeights as SourceRecipe['masterWeights'] } : {}),
        ...(r.optimizerState ? { optimizerState: r.optimizerState as OptimizerState } : {}),
        ...(r.virtualStages ? { virtualStages: r.virtualStages as SourceRecipe['virtualStages'] } : {}),
        ...(r.gpus ? { gpus: r.gpus as string[] } : {}),
        ...(r.recompute ? { recompute: recomputeOf(name, r.recompute) } : {}),
        ...(r.recomputeModules ? { recomputeModules: recomputeModulesOf(name, r.recomputeModules) } : {}),
        ...(r.layout ? { layout: layoutOf(name, r.layout) } : {}),
      })),
    cudaContextGb: value('cudaContextGb'),
    ncclBuffersGb: value('ncclBuffersGb'),
    cublasWorkspaceGb: value('cublasWorkspaceGb'),
    convWorkspaceFactor: value('convWorkspaceFactor'),
    backwardGradientTensors: value('backwardGradientTensors'),
    lossParallelBackwardTensors: value('lossParallelBackwardTensors'),
    allocatorFragmentation: value('allocatorFragmentation'),
    frameworkAllocatorFragmentation: value('frameworkAllocatorFragmentation'),
    defaultMemoryHeadroomGb: value('defaultMemoryHeadroomGb'),
    defaultAttention: value('defaultAttention'),
    softmaxStatsBytes: value('softmaxStatsBytes'),
    savedForBackward: rulesOf(file.savedForBackward as Record<string, SavedRule>),
    frameworkStates: Object.fromEntries(
      Object.entries(file.frameworkStates as Record<string, Record<string, { value: unknown }>>)
        .filter(([key]) => !key.startsWith('_'))
        .map(([key, entry]) => [
          key,
          {
            gradients: entry.gradients.value,
            fp8Parameters: entry.fp8Parameters.value,
            masterWeights: entry.masterWeights.value,
            masterRemaindersFor: entry.masterRemaindersFor.value,
            recomputeWhenUnstated: entry.recomputeWhenUnstated.value,
          } as FrameworkStates,
        ]),
    ),
    frameworkRules: Object.fromEntries(
      Object.entries(frameworks)
        .filter(([key]) => !key.startsWith('_'))
        .map(([key, table]) => [key, rulesOf(table)]),
    ),
  };
}

export interface Instance {
  provider: string;
  instance: string;
  gpuId: string;
  gpusPerInstance: number;
  onDemandUsdPerHour: number | null;
  usdPerGpuHour: number | null;
  region: string;
  priceDate: string;
  priceSource: string;
  internodeNetworkGbps: number | null;
  internodeNetworkDetail: string;
  /** How NCCL crosses that network; null when no network is stated. */
  internodeTransport: NetworkTransport | null;
  intraNodeLink: string;
}

/**
 * The networks instances.csv states itself are all EFA, InfiniBand or GCP's GPUDirect-TCPX/O fabrics,
 * costed as RDMA: a row stating another network would be costed as one too, so it is refused until its
 * transport is written down (a row of instance-networks.csv, whose transport column says it).
 */
const RDMA_NETWORK = /EFA|InfiniBand|GPUDirect/;

/** The date a price's date cell starts with (`2025-03-14 (same in ...)`), or null for an undated one. */
export function listingDate(priceDate: string): string | null {
  return /^\d{4}-\d{2}-\d{2}/.exec(priceDate.trim())?.[0] ?? null;
}

/** A `region` cell's regions: `us-east-1 / us-west-2` and `us-east-1/us-west-2` are the same two. */
const regionsOf = (cell: string) => new Set(cell.split('/').map((x) => x.trim()));

/**
 * The rows of instances.csv that are an instance's current list price: a row is dropped where a later
 * dated row of the same provider's instance lists every region it lists (an undated row is older than
 * any dated one). The CSV keeps the older rows as published (AWS p5.48xlarge in us-east-1 at $98.32 on
 * 2025-03-14 and $55.04 on 2026-11-09; p5en at $84.80 in "us-east-1 / us-west-2" and $63.30 in
 * "us-east-1/us-east-2/us-west-2" later): the older price can no longer be rented, so no plan may
 * charge it and no listing of offers shows it.
 */
export function currentListings(rows: readonly Record<string, string>[]): Record<string, string>[] {
  const dated = rows.map((r) => ({ r, date: listingDate(r.price_date) ?? '', regions: regionsOf(r.region) }));
  return dated
    .filter(
      (a) =>
        !dated.some(
          (b) =>
            b.r.provider === a.r.provider &&
            b.r.instance === a.r.instance &&
            b.date > a.date &&
            [...a.regions].every((x) => b.regions.has(x)),
        ),
    )
    .map((a) => a.r);
}

let instanceCache: Instance[] | undefined;
/**
 * seeds/instances.csv's offers, each with its network between instances: the row's own, or where its
 * cell is empty the figure seeds/instance-networks.csv states for the instance type, with its source.
 */
export function loadInstances(): Instance[] {
  if (instanceCache) return instanceCache;
  const networks = new Map(
    parseCsv(readFileSync(here('./instance-networks.csv'), 'utf8')).map((r) => [
      `${r.provider}/${r.instance}`,
      r,
    ]),
  );
  instanceCache = currentListings(parseCsv(readFileSync(here('./instances.csv'), 'utf8'))).map((r) => {
    const overlay =
      num(r.internode_network_gbps) === null ? networks.get(`${r.provider}/${r.instance}`) : undefined;
    const gbps = num((overlay ?? r).internode_network_gbps);
    let transport: NetworkTransport | null = null;
    if (overlay) {
      if (!(NETWORK_TRANSPORTS as readonly string[]).includes(overlay.transport))
        throw new Error(
          `seeds/instance-networks.csv ${r.provider} ${r.instance}: transport "${overlay.transport}" is not one of ${NETWORK_TRANSPORTS.join(', ')}`,
        );
      transport = overlay.transport as NetworkTransport;
    } else if (gbps !== null) {
      if (!RDMA_NETWORK.test(r.internode_network_detail))
        throw new Error(
          `seeds/instances.csv ${r.provider} ${r.instance}: its network "${r.internode_network_detail}" names no RDMA fabric; give its transport in seeds/instance-networks.csv`,
        );
      transport = 'RDMA';
    }
    return {
      provider: r.provider,
      instance: r.instance,
      gpuId: r.gpu_id,
      gpusPerInstance: num(r.gpus_per_instance) ?? 1,
      onDemandUsdPerHour: num(r.on_demand_usd_per_hr),
      usdPerGpuHour: num(r.usd_per_gpu_hr),
      region: r.region,
      priceDate: r.price_date,
      priceSource: r.price_source,
      internodeNetworkGbps: gbps,
      internodeNetworkDetail: overlay
        ? `${overlay.internode_network_detail}; ${overlay.network_source}`
        : r.internode_network_detail,
      internodeTransport: transport,
      intraNodeLink: r.intra_node_link,
    };
  });
  return instanceCache;
}

export interface NetworkDefaults {
  defaultGbps: number;
  perGpu: Record<string, number>;
  choices: number[];
}
let networkCache: NetworkDefaults | undefined;
export function networkDefaults(): NetworkDefaults {
  networkCache ??= JSON.parse(readFileSync(here('./network.json'), 'utf8')) as NetworkDefaults;
  return networkCache;
}
/** Inter-node Gbps per node for a GPU type when the query does not say. */
export function defaultInterNodeGbps(gpuId: string): number {
  const n = networkDefaults();
  return n.perGpu[gpuId] ?? n.defaultGbps;
}

/** One measured training configuration (measurements/train.csv), typed. */
export interface Measurement {
  id: string;
  source: string;
  framework: string;
  model: string;
  variant: string;
  gpu: string;
  system: string;
  numGpus: number;
  numNodes: number;
  gpusPerNode: number;
  batchSizePerGpu: number | null;
  globalBatchSize: number | null;
  gradAccumSteps: number | null;
  seqLenOrImageSize: number | null;
  precision: Precision;
  precisionRaw: string;
  throughput: number | null;
  throughputUnit: string;
  software: string;
  confidence: string;
  flags: string;
  provenance: string;
  /** The row as read, for tools that write every input column back out. */
  raw: Record<string, string>;
  /** The shipped row's model as its source's scripts ran it, where that differs from the zoo entry. */
  asRun?: AsRunRule;
}

export function measurementFromRow(r: Record<string, string>): Measurement {
  const numGpus = num(r.num_gpus) ?? 1;
  const numNodes = num(r.num_nodes) ?? 1;
  return {
    id: r.id,
    source: r.source,
    framework: r.framework,
    model: r.model,
    variant: r.variant,
    gpu: r.gpu,
    system: r.system,
    numGpus,
    numNodes,
    // The per-node count a row was measured with is the GPUs actually used on each node.
    gpusPerNode: Math.max(1, Math.round(numGpus / numNodes)),
    batchSizePerGpu: num(r.batch_size_per_gpu),
    globalBatchSize: num(r.global_batch_size),
    gradAccumSteps: num(r.grad_accum_steps),
    seqLenOrImageSize: num(r.seq_len_or_image_size),
    precision: (PRECISIONS as readonly string[]).includes(r.precision) ? (r.precision as Precision) : 'FP32',
    precisionRaw: r.precision_raw,
    throughput: num(r.throughput),
    throughputUnit: r.throughput_unit,
    software: r.software,
    confidence: r.confidence,
    flags: r.flags,
    provenance: r.provenance,
    raw: r,
  };
}

export function readMeasurements(path: string | URL): Measurement[] {
  return parseCsv(readFileSync(path, 'utf8')).map(measurementFromRow);
}

let measurementCache: { usable: Measurement[]; excluded: ExcludedMeasurement<Measurement>[] } | undefined;
function measurements() {
  if (!measurementCache) {
    const rules = loadAsRunRules();
    const all = readMeasurements(here('./measurements/train.csv')).map((r) => {
      const asRun = rules.find(
        (a) => a.source === r.source && a.model === r.model && (!a.framework || a.framework === r.framework),
      );
      return asRun ? { ...r, asRun } : r;
    });
    const excluded = longerButFasterPerToken(all);
    const out = new Set(excluded.map((e) => e.row));
    measurementCache = { usable: all.filter((r) => !out.has(r)), excluded };
  }
  return measurementCache;
}
/** The seeds' measured training throughputs (train.csv), less the rows that contradict their own configuration. */
export function loadMeasurements(): Measurement[] {
  return measurements().usable;
}
/** train.csv's rows that contradict the configuration they state, each with why (seeds/measurement-checks.ts). */
export function loadExcludedMeasurements(): ExcludedMeasurement<Measurement>[] {
  return measurements().excluded;
}

let zooCache: { models: ZooEntry[]; published: PublishedZooModel[] } | undefined;
function zooFile() {
  if (!zooCache) {
    const file = readJson<{ models: ZooEntry[]; published: { models: PublishedZooModel[] } }>(
      './models.json',
    );
    const ids = new Set<string>();
    for (const e of [...file.models, ...file.published.models]) {
      if (ids.has(e.id)) throw new Error(`models.json: duplicate id ${e.id}`);
      ids.add(e.id);
    }
    zooCache = { models: file.models, published: file.published.models };
  }
  return zooCache;
}
/** The model zoo's entries that state their shapes in models.json (predictor/zoo/ builds the layers). */
export const loadZooEntries = (): ZooEntry[] => zooFile().models;
/**
 * The published decoders the zoo lists by id (models.json `published`; predictor/zoo/published.ts
 * reads their shapes from llm_models.csv); no id is also one of loadZooEntries'.
 */
export const loadPublishedZooModels = (): PublishedZooModel[] => zooFile().published;

let asRunCache: AsRunRule[] | undefined;
/** What a source's scripts changed of a zoo model (seeds/measurements/as-run.json); the shipped rows carry theirs. */
export function loadAsRunRules(): AsRunRule[] {
  asRunCache ??= readJson<{ rules: AsRunRule[] }>('./measurements/as-run.json').rules;
  return asRunCache;
}

let unitRulesCache: UnitRule[] | undefined;
/** Conversions between a model's throughput unit and the units measurements were published in. */
export function loadUnitRules(): UnitRule[] {
  unitRulesCache ??= readJson<{ rules: UnitRule[] }>('./units.json').rules;
  return unitRulesCache;
}

/** The learned correction (written by `npm run train:predictor`): the ONNX model and its metadata. */
export const LEARNED_MODEL_FILE = here('./predictor.onnx');
export const LEARNED_META_FILE = here('./predictor.json');
/** The learned model's card, written with it. */
export const PREDICTOR_CARD_FILE = here('./PREDICTOR_CARD.md');
