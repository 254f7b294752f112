// What a request rents from, resolved once for every planner that prices (recommend, a fleet's
// on-demand GPUs, a procurement's rentals): the catalog's offers (seeds/instances.csv) unless the
// request turns them off, its own price sheet, per-GPU prices (the request's, then the server's
// price file) that replace every offer for their GPU, and a providers filter.
import { catalogOffers, perGpuOffer, selectOffers, type Offer } from '../optimizer/offers.js';
import { serverPriceOverrides } from '../seeds/catalog.js';
import { gpuById } from './lookup.js';
import { FLOORS, inRange, InputError, integer, LIMITS, nonEmpty, priceList } from './validate.js';
import type { GpuSpec, NetworkTransport } from '../seeds/types.js';

/** An offer of a user's own price sheet, as a request gives it (the GraphQL OfferInput). */
export interface OfferQuery {
  provider: string;
  instance: string;
  gpu: string;
  gpusPerInstance: number;
  usdPerHour: number;
  interNodeGbps?: number | null;
  /** How NCCL crosses that network; absent = RDMA. */
  interNodeTransport?: NetworkTransport | null;
  region?: string | null;
  priceDate?: string | null;
}

/** The request's own offers, checked; an undated one is dated `today`. */
function ownOffers(offers: OfferQuery[] | null | undefined, today: Date): Offer[] {
  return (nonEmpty('offers', offers, LIMITS.listLength) ?? []).map((o, i) => {
    const gpu = gpuById(`offers[${i}].gpu`, o.gpu);
    const gpusPerInstance = integer(`offers[${i}].gpusPerInstance`, o.gpusPerInstance, 1, LIMITS.gpusPerNode);
    if (!o.provider.trim()) throw new InputError(`offers[${i}].provider`, 'must not be empty');
    if (!o.instance.trim()) throw new InputError(`offers[${i}].instance`, 'must not be empty');
    if (o.priceDate != null && !/^\d{4}-\d{2}-\d{2}$/.test(o.priceDate))
      throw new InputError(
        `offers[${i}].priceDate`,
        `must be a date YYYY-MM-DD (got "${o.priceDate.slice(0, 40)}")`,
      );
    return {
      provider: o.provider,
      instance: o.instance,
      gpuId: gpu.id,
      gpusPerInstance,
      usdPerHour: inRange(
        `offers[${i}].usdPerHour`,
        o.usdPerHour,
        FLOORS.price,
        LIMITS.price * LIMITS.gpusPerNode,
        { orZero: true },
      ),
      region: o.region ?? '-',
      priceDate: o.priceDate ?? today.toISOString().slice(0, 10),
      source: 'the request (offers)',
      interNodeGbps:
        o.interNodeGbps == null
          ? null
          : inRange(`offers[${i}].interNodeGbps`, o.interNodeGbps, FLOORS.gbps, LIMITS.gbps, {
              unit: 'Gbps',
            }),
      interNodeNetwork: '',
      interNodeTransport: o.interNodeTransport ?? 'RDMA',
      billing: 'instance' as const,
    };
  });
}

/** The pricing fields a request gives (RecommendInput's; FleetInput's and ProcurementInput's alike). */
export interface PricingQuery {
  prices?: { gpu: string; usdPerGpuHour: number }[] | null;
  offers?: OfferQuery[] | null;
  /** Absent: true (the catalog's offers count). */
  catalogOffers?: boolean | null;
  providers?: string[] | null;
}

/** The request's per-GPU prices (checked) and every offer it may rent, as recommend prices them. */
export function requestOffers(
  q: PricingQuery,
  today: Date,
): { prices: Record<string, number>; offers: Offer[] } {
  const prices = priceList('prices', q.prices, (field, id) => gpuById(field, id));
  const own = ownOffers(q.offers, today);
  const providers = nonEmpty('providers', q.providers, LIMITS.listLength);
  providers?.forEach((p, i) => {
    if (!p.trim()) throw new InputError(`providers[${i}]`, 'must not be empty');
  });
  const server = serverPriceOverrides();
  const offers = selectOffers({
    catalog: q.catalogOffers ?? true,
    own,
    perGpuPrices: [
      ...Object.entries(server.prices)
        .filter(([gpuId]) => prices[gpuId] === undefined)
        .map(([gpuId, usdPerGpuHour]) => ({ gpuId, usdPerGpuHour, source: server.source })),
      ...Object.entries(prices).map(([gpuId, usdPerGpuHour]) => ({
        gpuId,
        usdPerGpuHour,
        source: 'the request (prices)',
      })),
    ],
    providers,
  });
  return { prices, offers };
}

/**
 * What one configuration (`predict`) may rent: a per-GPU price the request gives, else the server's
 * price file's, else the catalog offers (seeds/instances.csv) whose instance holds `gpusPerNode` GPUs,
 * paid whole (`nodes` instances). On one node, or with the request's network, the network plays no
 * part in the choice: the cheapest instance. Across instances the run is timed on its offer's
 * network, as recommend ranks it, so the candidates are the cheapest offer of each network that
 * offers state (all of them if none states one), and the caller keeps the cheapest run. Empty when
 * nothing prices the GPU at that node size.
 */
export function configurationOffers(
  gpu: GpuSpec,
  layout: { gpusPerNode: number; nodes: number; networkGiven: boolean },
  given: number | undefined,
): Offer[] {
  if (given !== undefined) return [perGpuOffer(gpu.id, given, 'the request (priceUsdPerGpuHour)')];
  const server = serverPriceOverrides();
  const filed = server.prices[gpu.id];
  if (filed !== undefined) return [perGpuOffer(gpu.id, filed, server.source)];
  const fitting = catalogOffers().filter(
    (o) => o.gpuId === gpu.id && o.gpusPerInstance >= layout.gpusPerNode,
  );
  const cheapest = (os: Offer[]) => os.reduce((best, o) => (o.usdPerHour < best.usdPerHour ? o : best));
  if (!fitting.length) return [];
  if (layout.nodes === 1 || layout.networkGiven) return [cheapest(fitting)];
  const networked = fitting.filter((o) => o.interNodeGbps !== null);
  if (!networked.length) return [cheapest(fitting)];
  const byNetwork = new Map<string, Offer[]>();
  for (const o of networked) {
    const k = `${o.interNodeGbps} ${o.interNodeTransport}`;
    byNetwork.set(k, [...(byNetwork.get(k) ?? []), o]);
  }
  return [...byNetwork.values()].map(cheapest);
}
