/** A keyed wait as the SFC scripts take it (`lib/sfc-keyed-waits.lua`): its zset, its type's places hash and the place (the hash's field). */
export interface SfcKeyedWaitArgs {
  readonly key: string
  readonly places: string
  readonly place: string
}

/** The keys of keyed waits, two per wait (its zset, then the places hash), in order. */
export const keyedWaitKeys = (waits: ReadonlyArray<SfcKeyedWaitArgs> | undefined): ReadonlyArray<string> => (waits ?? []).flatMap((w) => [w.key, w.places])
