import { Data, Effect, Context, Layer } from "effect"
import { dedupeHash } from "@microdcs/keyschema"
import { type ConnectionError, type InvalidInput, WrongType } from "./Errors.js"
import { validateText } from "./Input.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey } from "./Valkey.js"
import { command } from "./RawDoor.js"

/**
 * What the dedupe key of an event holds (the values {@link DedupeStore} writes):
 * `processing:{token}` while a consumer holds the lease, `done` or `done:{reply}` after.
 */
export type DedupeState = Data.TaggedEnum<{
  // biome-ignore lint/complexity/noBannedTypes: a case without fields, as Data.TaggedEnum spells it
  Absent: {}
  Processing: { readonly token: string }
  /** `reply`: the reply kept with the done mark, if any. */
  Done: { readonly reply: string | undefined }
  /** A value no consumer writes (set by hand, or garbled); `value` is what is stored. */
  Unknown: { readonly value: string }
}>
export const DedupeState = Data.taggedEnum<DedupeState>()

export interface DedupeEntry {
  readonly key: string
  readonly state: DedupeState
  /** How long the lease or done mark still holds, floored at 0 (0 when absent or without TTL). */
  readonly remainingMs: number
}

const PROCESSING = "processing:"
const DONE = "done"

/** Decodes a stored dedupe value; the one place that knows the format besides the scripts. */
export const decodeDedupeValue = (value: string | null): DedupeState => {
  if (value === null) return DedupeState.Absent()
  if (value === DONE) return DedupeState.Done({ reply: undefined })
  if (value.startsWith(`${DONE}:`)) return DedupeState.Done({ reply: value.slice(DONE.length + 1) })
  if (value.startsWith(PROCESSING)) return DedupeState.Processing({ token: value.slice(PROCESSING.length) })
  return DedupeState.Unknown({ value })
}

/**
 * The operator's view of CloudEvent deduplication (admin CLI `dedupe check` / `forget`): what
 * an event's entry holds, and forgetting it so a redelivery is processed again.
 */
export class DedupeEntries extends Context.Service<DedupeEntries>()("@microdcs/store/DedupeEntries", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey

    /** Validated as a claim validates them, before any key is read. */
    const entryKey = (source: string, id: string): Effect.Effect<string, InvalidInput> =>
      Effect.gen(function* () {
        yield* validateText("source", source)
        yield* validateText("id", id)
        return yield* valkey.key("dedupe", { hash: dedupeHash(source, id) })
      })

    /** The entry of the event (source, id), in one round trip. */
    const inspect = (source: string, id: string): Effect.Effect<DedupeEntry, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* entryKey(source, id)
        const [value, ttl] = yield* typedCommand(valkey, "inspect dedupe entry", key, "string", (c) => Promise.all([c.get(key), c.pttl(key)]))
        // PTTL is -2 for a missing key and -1 for one without TTL; both mean "nothing to wait for".
        return { key, state: decodeDedupeValue(value), remainingMs: Math.max(0, ttl) }
      })

    /**
     * Deletes the entry of (source, id), whatever state it is in; `false` when there was none
     * (it expired). A key of another type is a `WrongType` and stays: it is no dedupe entry.
     */
    const forget = (source: string, id: string): Effect.Effect<boolean, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* entryKey(source, id)
        // Only the dedupe scripts write this key, always as a string: the type cannot change
        // between the check and the delete unless an operator replaces it meanwhile.
        const type = yield* command(valkey, "dedupe entry type", (c) => c.type(key))
        if (type === "none") return false
        if (type !== "string") return yield* new WrongType({ key, expected: "string", actual: type })
        return (yield* command(valkey, "forget dedupe entry", (c) => c.del(key))) === 1
      })

    return { inspect, forget } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
