// A bounded LRU cache of recommend answers, keyed by the normalized input: the values after
// validation with every default filled in, as JSON with sorted keys (list order kept: the order
// of `gpus` breaks exact ties). Bounded both by entries and by the plans held in all, so its
// memory stays bounded whatever the limit of each request. Every answer is COMPLETE (a search
// that cannot finish is refused), so every answer can be kept.
import type { PlannedRecommendation } from './harness-commands.js';
import { runtimeConfig } from './config.js';

export class LruCache<V> {
  private readonly map = new Map<string, { value: V; weight: number }>();
  private weight = 0;
  hits = 0;
  misses = 0;
  constructor(
    private readonly maxEntries: () => number,
    private readonly maxWeight: () => number,
  ) {}

  get(key: string): V | undefined {
    const e = this.map.get(key);
    if (!e) {
      this.misses++;
      return undefined;
    }
    this.map.delete(key);
    this.map.set(key, e); // most recently used last
    this.hits++;
    return e.value;
  }

  set(key: string, value: V, weight = 1): void {
    const maxEntries = this.maxEntries(),
      maxWeight = this.maxWeight();
    if (maxEntries <= 0 || weight > maxWeight) return;
    const old = this.map.get(key);
    if (old) {
      this.weight -= old.weight;
      this.map.delete(key);
    }
    this.map.set(key, { value, weight });
    this.weight += weight;
    for (const [k, e] of this.map) {
      if (this.map.size <= maxEntries && this.weight <= maxWeight) break;
      this.map.delete(k);
      this.weight -= e.weight;
    }
  }

  /** A miss counted earlier was answered after all, by an identical search already running: count it as a hit. */
  missWasHit(): void {
    this.misses--;
    this.hits++;
  }

  clear(): void {
    this.map.clear();
    this.weight = 0;
    this.hits = 0;
    this.misses = 0;
  }
  get size(): number {
    return this.map.size;
  }
  stats() {
    return { entries: this.map.size, plans: this.weight, hits: this.hits, misses: this.misses };
  }
}

/** JSON with object keys sorted and undefined members left out: equal inputs give equal keys. */
export function normalizedKey(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v as object)
            .sort()
            .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
            .map((k) => [k, (v as Record<string, unknown>)[k]]),
        )
      : v,
  );
}

/** recommend's cache (service/planning.ts); sized by TRAINPLAN_CACHE_ENTRIES / TRAINPLAN_CACHE_PLANS. */
export const recommendCache = new LruCache<PlannedRecommendation>(
  () => runtimeConfig().cacheEntries,
  () => runtimeConfig().cachePlans,
);
