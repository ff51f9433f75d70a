import { Effect, Option, Context, Layer } from "effect"
import { type ConnectionError, InvalidInput, type WrongType } from "./Errors.js"
import { validateStreamId } from "./Input.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey } from "./Valkey.js"

/** One change entry of `changes:{scope}`, as the put and delete scripts write it. */
export interface ChangeEntry {
  readonly streamId: string
  /** `joborder`, `jobresponse`, `workmaster`. */
  readonly kind: string
  readonly id: string
  /** The method that caused it (`Store`, `Start`, ...) or `put`/`delete`. */
  readonly change: string
  readonly version: number
  readonly op: string
  /** Server time of the write, epoch ms. */
  readonly ts: number
  /** Who caused the write, as its writer encoded it (job-state's `decodeOrigin` reads it); absent on older entries. */
  readonly origin?: string
}

export interface ChangePage {
  readonly entries: ReadonlyArray<ChangeEntry>
  /**
   * The cursor for the next read: the last stream id read, or the given cursor when nothing
   * came. It moves past undecodable entries too (they are logged and skipped), so one bad entry
   * cannot stall a reader.
   */
  readonly next: string
}

export interface ReadChanges {
  /** Exclusive cursor: entries after this stream id; `"0"` (default) reads from the start. */
  readonly after?: string | undefined
  /** Largest number of entries to read (default 100, at most 10 000). */
  readonly count?: number | undefined
}

const MAX_COUNT = 10_000

type RawEntry = [id: string, fields: Array<string>]

const integerField = (value: string | undefined): number | undefined =>
  value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined

/** Decodes one entry; `undefined` when a field is missing or not a number (never parse null as 0). */
const decodeEntry = ([streamId, flat]: RawEntry): ChangeEntry | undefined => {
  const fields = new Map<string, string>()
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i]!, flat[i + 1]!)
  const kind = fields.get("kind")
  const id = fields.get("id")
  const change = fields.get("change")
  const op = fields.get("op")
  const version = integerField(fields.get("v"))
  const ts = integerField(fields.get("ts"))
  if (kind === undefined || id === undefined || change === undefined || op === undefined || version === undefined || ts === undefined) {
    return undefined
  }
  const origin = fields.get("origin")
  return origin === undefined ? { streamId, kind, id, change, version, op, ts } : { streamId, kind, id, change, version, op, ts, origin }
}

/** Reads a scope's change stream (`changes:{scope}`), as the publisher does. */
export class ChangeStream extends Context.Service<ChangeStream>()("@microdcs/store/ChangeStream", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey

    /** Change entries after a cursor, oldest first. */
    const read = (scope: string, options: ReadChanges = {}): Effect.Effect<ChangePage, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("changes", { scope })
        const after = options.after ?? "0"
        if (after !== "0") yield* validateStreamId("after", after)
        const count = options.count ?? 100
        if (!Number.isSafeInteger(count) || count < 1 || count > MAX_COUNT) {
          return yield* new InvalidInput({ field: "count", message: `count must be an integer from 1 to ${MAX_COUNT}, got ${count}` })
        }
        // "(" makes the start exclusive (Redis 6.2+); "0" reads from the very first entry.
        const start = after === "0" ? "-" : `(${after}`
        const raw = (yield* typedCommand(valkey, "read changes", key, "stream", (c) => c.xrange(key, start, "+", "COUNT", count))) as Array<RawEntry>
        const entries: Array<ChangeEntry> = []
        for (const item of raw) {
          const entry = decodeEntry(item)
          if (entry) entries.push(entry)
          else yield* Effect.logWarning("skipping an undecodable change entry").pipe(Effect.annotateLogs({ key, streamId: item[0] }))
        }
        return { entries, next: raw.length > 0 ? raw[raw.length - 1]![0] : after }
      })

    /** The id of the newest entry, or none when the stream is empty or absent. */
    const latestId = (scope: string): Effect.Effect<Option.Option<string>, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("changes", { scope })
        const newest = yield* typedCommand(valkey, "latest change", key, "stream", (c) => c.xrevrange(key, "+", "-", "COUNT", 1))
        return Option.fromNullishOr(newest[0]?.[0])
      })

    return { read, latestId } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
