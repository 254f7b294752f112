// What a plan rents: N whole instances of one offer (seeds/instances.csv, a user's own price sheet,
// or a per-GPU price). An instance is paid for whole, whatever share of its GPUs a plan uses, and
// its inter-node network is the one the offer states. Offers are resolved once per request into
// per-GPU pricing options the search enumerates.
import { InputError } from '../predictor/input-error.js';
import { interNodeRate } from '../predictor/step.js';
import {
  defaultInterNodeGbps,
  loadEfficiency,
  listingDate,
  loadInstances,
  networkDefaults,
  type Instance,
} from '../seeds/catalog.js';
import type { GpuSpec, NetworkTransport } from '../seeds/types.js';

/**
 * A price older than this many days is flagged stale: cloud list prices moved by up to 2x within
 * a year in the seeds' own history (AWS p5.48xlarge: $98.32 on 2025-03-14, $55.04 on 2026-11-09).
 */
export const STALE_PRICE_DAYS = 180;

export interface Offer {
  provider: string;
  instance: string;
  gpuId: string;
  gpusPerInstance: number;
  /** USD per instance-hour. */
  usdPerHour: number;
  region: string;
  /** As the source gives it: an ISO date, or words such as "undated". */
  priceDate: string;
  source: string;
  /** Inter-node network per instance as the offer states it, Gbps; null when the offer does not say. */
  interNodeGbps: number | null;
  interNodeNetwork: string;
  /** How NCCL crosses that network (RDMA unless the offer says TCP: an Ethernet-only instance). */
  interNodeTransport: NetworkTransport;
  /**
   * 'instance': billed per whole instance. 'perGpu': a per-GPU-hour price (the `prices` input or the
   * server's price file), billed for the GPUs a plan uses, on any node size the GPU comes in.
   */
  billing: 'instance' | 'perGpu';
}

/** The offer a plan rents, with the age of its price. */
export interface PlanOffer extends Offer {
  usdPerGpuHour: number;
  priceAgeDays: number | null;
  priceStale: boolean;
}

/** An offer's price per GPU-hour with a whole instance used (a per-GPU price: itself). */
export const usdPerGpuHourOf = (offer: Offer): number => offer.usdPerHour / offer.gpusPerInstance;

/** An offer as a plan or a prediction shows it: its price per GPU-hour and how old the price is on `today`. */
export const datedOffer = (offer: Offer, today: Date): PlanOffer => ({
  ...offer,
  usdPerGpuHour: usdPerGpuHourOf(offer),
  priceAgeDays: priceAgeDays(offer.priceDate, today),
  priceStale: isStale(offer.priceDate, today),
});

/** Which price a stale-price warning names, and its age: "(AWS p5.48xlarge, 2025-03-14) is 630 days old". */
export const priceAgeText = (o: PlanOffer): string =>
  `(${o.provider} ${o.instance}, ${o.priceDate}) is ${o.priceAgeDays === null ? 'undated' : `${o.priceAgeDays} days old`}`;

/** What one node of `gpusPerNode` GPUs costs an hour on `offer`: the whole instance, or the GPUs used at a per-GPU price. */
export const instanceUsdPerHour = (offer: Offer, gpusPerNode: number): number =>
  offer.billing === 'perGpu' ? gpusPerNode * offer.usdPerHour : offer.usdPerHour;

/** Days from the price's date to `today`; null when the price carries no date. */
export function priceAgeDays(priceDate: string, today: Date): number | null {
  const date = listingDate(priceDate);
  if (!date) return null;
  return Math.floor((today.getTime() - Date.parse(`${date}T00:00:00Z`)) / 86_400_000);
}

/** Stale: older than STALE_PRICE_DAYS, or undated (its age cannot be told). */
export function isStale(priceDate: string, today: Date): boolean {
  const age = priceAgeDays(priceDate, today);
  return age === null || age > STALE_PRICE_DAYS;
}

const fromInstance = (i: Instance): Offer | null =>
  i.onDemandUsdPerHour === null
    ? null
    : {
        provider: i.provider,
        instance: i.instance,
        gpuId: i.gpuId,
        gpusPerInstance: i.gpusPerInstance,
        usdPerHour: i.onDemandUsdPerHour,
        region: i.region,
        priceDate: i.priceDate,
        source: i.priceSource,
        interNodeGbps: i.internodeNetworkGbps,
        interNodeNetwork: i.internodeNetworkDetail,
        interNodeTransport: i.internodeTransport ?? 'RDMA',
        billing: 'instance',
      };

/** Every priced row of seeds/instances.csv (rows without an on-demand price are not offers). */
export function catalogOffers(): Offer[] {
  return loadInstances()
    .map(fromInstance)
    .filter((o): o is Offer => o !== null);
}

/** A per-GPU-hour price as an offer (the legacy `prices` input and the server's price file). */
export function perGpuOffer(gpuId: string, usdPerGpuHour: number, source: string): Offer {
  return {
    provider: source,
    instance: `${gpuId}, per GPU-hour`,
    gpuId,
    gpusPerInstance: 1,
    usdPerHour: usdPerGpuHour,
    region: '-',
    priceDate: '-',
    source,
    interNodeGbps: null,
    interNodeNetwork: '',
    interNodeTransport: 'RDMA',
    billing: 'perGpu',
  };
}

export interface OfferSelection {
  /** The catalog's offers (default: seeds/instances.csv); false: only the request's own. */
  catalog: boolean;
  /** The request's own offers: one with the catalog's provider and instance replaces it, others add. */
  own: Offer[];
  /** Per-GPU prices that replace every offer for their GPU (server price file, then `prices`). */
  perGpuPrices: { gpuId: string; usdPerGpuHour: number; source: string }[];
  /**
   * Keep only these providers (case-insensitive, surrounding spaces ignored); undefined: all. One
   * that no offer comes from is refused (InputError on `providers[i]`, naming those there are).
   */
  providers?: string[];
}

const sameOffer = (a: Offer, b: Offer) =>
  a.provider.toLowerCase() === b.provider.toLowerCase() && a.instance === b.instance && a.gpuId === b.gpuId;

/** The offers a request prices plans from, in a fixed order (GPU, then cheapest per GPU-hour, provider, instance). */
export function selectOffers(s: OfferSelection): Offer[] {
  let offers = s.catalog ? catalogOffers().filter((c) => !s.own.some((o) => sameOffer(o, c))) : [];
  offers.push(...s.own);
  const perGpu = new Map<string, Offer>();
  for (const p of s.perGpuPrices) perGpu.set(p.gpuId, perGpuOffer(p.gpuId, p.usdPerGpuHour, p.source));
  offers = offers.filter((o) => !perGpu.has(o.gpuId)).concat([...perGpu.values()]);
  if (s.providers) {
    // A provider no offer comes from (a typo, a provider the catalog lacks) would filter every offer
    // away and leave an answer with no priced plan that never says why: refuse it, naming the choices.
    const known = new Map(offers.map((o) => [o.provider.toLowerCase(), o.provider]));
    const allowed = s.providers.map((p) => p.trim().toLowerCase());
    allowed.forEach((p, i) => {
      if (!known.has(p))
        throw new InputError(
          `providers[${i}]`,
          `no offer is from "${s.providers![i]}": the offers here come from ${[...known.values()].sort().join(', ')} (give your own in offers)`,
        );
    });
    offers = offers.filter((o) => allowed.includes(o.provider.toLowerCase()));
  }
  return offers.sort(
    (a, b) =>
      a.gpuId.localeCompare(b.gpuId) ||
      usdPerGpuHourOf(a) - usdPerGpuHourOf(b) ||
      a.provider.localeCompare(b.provider) ||
      a.instance.localeCompare(b.instance),
  );
}

/**
 * One way to pay for a GPU type in the search: an offer, or nothing (the GPU is predicted but
 * not priced). `nodeUsdPerHour(g)` is what one node using g GPUs costs an hour.
 */
export interface PricingOption {
  /** Index into the request's offers; -1 for no offer. */
  offerIndex: number;
  offer: Offer | null;
  /** Most GPUs a node (instance) of this option holds. */
  maxPerNode: number;
  /** Inter-node network the plan runs on, Gbps. */
  interNodeGbps: number;
  /** How NCCL crosses it: the request's interNodeTransport, else the offer's (interNodeGbps alone changes the rate, not the fabric). */
  interNodeTransport: NetworkTransport;
  /** Where that figure comes from. */
  networkSource: string;
  /** True when nothing states the figure (an instance offer that names no network): the default is assumed. */
  networkAssumed: boolean;
  nodeUsdPerHour: (gpusPerNode: number) => number | null;
}

/** What a network source adds when NCCL crosses it over TCP. */
const overTcp = (transport: NetworkTransport) =>
  transport === 'TCP'
    ? `; NCCL over TCP, costed at ${loadEfficiency().tcpNetworkEfficiency} of the line rate (seeds/efficiency.json tcpNetworkEfficiency)`
    : '';

/**
 * The pricing options of one GPU: its offers, or one unpriced option when it has none.
 * `networkOverride` (the request's interNodeGbps) replaces every offer's network, and
 * `transportOverride` (its interNodeTransport) how NCCL crosses it.
 */
export function pricingOptions(
  gpu: GpuSpec,
  offers: readonly Offer[],
  networkOverride?: (gpu: GpuSpec) => number | undefined,
  transportOverride?: NetworkTransport,
): PricingOption[] {
  const forced = networkOverride?.(gpu);
  const fallback = networkDefaults().defaultGbps;
  const options: PricingOption[] = [];
  offers.forEach((offer, offerIndex) => {
    if (offer.gpuId !== gpu.id) return;
    const perGpu = offer.billing === 'perGpu';
    const stated = perGpu ? defaultInterNodeGbps(gpu.id) : offer.interNodeGbps;
    const transport = transportOverride ?? offer.interNodeTransport;
    options.push({
      offerIndex,
      offer,
      maxPerNode: perGpu ? gpu.maxGpusPerNode : Math.min(offer.gpusPerInstance, gpu.maxGpusPerNode),
      interNodeGbps: forced ?? stated ?? fallback,
      interNodeTransport: transport,
      networkSource:
        (forced !== undefined
          ? 'the request (interNodeGbps)'
          : perGpu
            ? 'seeds/network.json for this GPU (a per-GPU price names no instance)'
            : stated !== null
              ? `the offer (${offer.interNodeNetwork || `${stated} Gbps`})`
              : `not stated by the offer: assumed ${fallback} Gbps (seeds/network.json defaultGbps)`) +
        overTcp(transport),
      networkAssumed: forced === undefined && !perGpu && stated === null,
      nodeUsdPerHour: (g) => instanceUsdPerHour(offer, g),
    });
  });
  if (options.length) return options;
  const net = forced ?? defaultInterNodeGbps(gpu.id);
  const transport = transportOverride ?? 'RDMA';
  return [
    {
      offerIndex: -1,
      offer: null,
      maxPerNode: gpu.maxGpusPerNode,
      interNodeGbps: net,
      interNodeTransport: transport,
      networkSource:
        (forced !== undefined
          ? 'the request (interNodeGbps)'
          : 'seeds/network.json (no offer for this GPU)') + overTcp(transport),
      networkAssumed: false,
      nodeUsdPerHour: () => null,
    },
  ];
}

/**
 * Per option, whether another option of the same GPU makes it pointless at g GPUs per node:
 * no dearer per node and, across nodes, no slower a network as NCCL runs on it (line rate times what
 * its transport reaches: 100 Gbps of Ethernet is slower than 100 of EFA; ties go to the earlier option). On a
 * single node the network does not matter, so only the cheapest option is kept there. Across nodes
 * an option on an assumed network makes pointless only another on an assumed network: its own
 * multi-node plans are not ranked, so it cannot stand in for an offer whose network is stated, but
 * the cheapest of those assumed alike is the one whose plans the notes name (NETWORK_UNSTATED), and
 * searching the dearer ones too cost the default request for a mixture-of-experts model 40% more time.
 */
export function dominated(options: PricingOption[], g: number, multiNode: boolean): boolean[] {
  // What each option's network moves for NCCL, bytes a second: its rate on its transport.
  const eff = loadEfficiency();
  const rate = options.map((o) => interNodeRate(o, eff));
  return options.map((o, i) => {
    if (o.maxPerNode < g) return false;
    const price = o.nodeUsdPerHour(g);
    if (price === null) return false;
    return options.some((p, j) => {
      if (j === i || p.maxPerNode < g || (multiNode && p.networkAssumed && !o.networkAssumed)) return false;
      const q = p.nodeUsdPerHour(g);
      if (q === null) return false;
      const netOk = !multiNode || rate[j] >= rate[i];
      const better = q < price || (multiNode && rate[j] > rate[i]);
      return netOk && q <= price && (better || j < i);
    });
  });
}
