import { LRUCache } from "lru-cache"

/** What the cache holds per entry: the decoded event (shared between hits: read only), and its encoded size. */
export interface CachedEntry {
  readonly event: unknown
  readonly encodedBytes: number
}

/** A fixed allowance per entry for the key, the map node and the record, on top of the bytes. */
export const ENTRY_OVERHEAD_BYTES = 96

/**
 * The process-local cache of journal entries, bounded by bytes: the encoded size
 * of the entries it holds plus {@link ENTRY_OVERHEAD_BYTES} each, so the bound an operator sets
 * (`JOURNAL_CACHE_BYTES`) is in payload bytes (docs/design/journal-and-counters.md). It holds
 * them decoded, so a hit costs no decode (decoding 20 entries costs more than the round trip of
 * the recall); the heap a decoded event takes is a small multiple of its encoded size, so choose
 * the bound with that in mind.
 * `lru-cache` evicts the least recently used on a normal `set`; warming uses `fits` instead, so
 * it stops when the cache is full rather than evicting what it loaded first.
 */
export class JournalCache {
  private readonly cache: LRUCache<string, CachedEntry> | undefined

  constructor(readonly maxBytes: number) {
    this.cache =
      maxBytes > 0 ? new LRUCache<string, CachedEntry>({ maxSize: maxBytes, sizeCalculation: (entry) => JournalCache.sizeOf(entry.encodedBytes) }) : undefined
  }

  static sizeOf(encodedBytes: number): number {
    return encodedBytes + ENTRY_OVERHEAD_BYTES
  }

  static keyOf(scope: string, journal: string, id: string): string {
    return `${scope}\u0000${journal}\u0000${id}`
  }

  get enabled(): boolean {
    return this.cache !== undefined
  }

  get bytes(): number {
    return this.cache?.calculatedSize ?? 0
  }

  get entries(): number {
    return this.cache?.size ?? 0
  }

  get(key: string): CachedEntry | undefined {
    return this.cache?.get(key)
  }

  has(key: string): boolean {
    return this.cache?.has(key) ?? false
  }

  set(key: string, entry: CachedEntry): void {
    this.cache?.set(key, entry)
  }

  /** Whether an entry of `encodedBytes` still fits without evicting anything. */
  fits(encodedBytes: number): boolean {
    return this.cache !== undefined && this.bytes + JournalCache.sizeOf(encodedBytes) <= this.maxBytes
  }

  clear(): void {
    this.cache?.clear()
  }
}
