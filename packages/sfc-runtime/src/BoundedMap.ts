/**
 * A map that forgets its oldest entries beyond `capacity` (insertion order, refreshed on set):
 * the engine's in-memory caches stay bounded however many jobs pass through one process.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>()

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    return this.entries.get(key)
  }

  has(key: K): boolean {
    return this.entries.has(key)
  }

  set(key: K, value: V): void {
    this.entries.delete(key)
    this.entries.set(key, value)
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next()
      if (oldest.done !== true) this.entries.delete(oldest.value)
    }
  }

  delete(key: K): boolean {
    return this.entries.delete(key)
  }

  values(): Array<V> {
    return [...this.entries.values()]
  }

  get size(): number {
    return this.entries.size
  }
}
