import { Effect, Option, Stream, Context, Layer } from "effect"
import type { ConnectionError, InvalidInput } from "./Errors.js"
import { Valkey } from "./Valkey.js"
import { command } from "./RawDoor.js"

/** A job order document as the retention scan finds it. */
export interface RetainedJobOrder {
  readonly id: string
  readonly version: number
  /** The document text (JSON), as stored. */
  readonly doc: string
  /** Remaining retention of a retired job order (it has a TTL), or null while it does not expire. */
  readonly expiresInMs: number | null
}

/** Keys per SCAN step, and so documents per page. */
const SCAN_COUNT = 500

/**
 * How long job orders are kept: a retired job order expires (its hash has a TTL), a live one
 * does not. The admin CLI's `purge` and `joborders show` read it.
 */
export class JobOrderRetention extends Context.Service<JobOrderRetention>()("@microdcs/store/JobOrderRetention", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const pattern = valkey.keys.pattern("jobOrder")

    /** Milliseconds until the job order expires; none while it is live or when it does not exist. */
    const expiresIn = (id: string): Effect.Effect<Option.Option<number>, InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("jobOrder", { id })
        // PTTL is -2 for a missing key and -1 for one without TTL.
        const ms = yield* command(valkey, "joborder ttl", (c) => c.pttl(key))
        return ms > 0 ? Option.some(ms) : Option.none()
      })

    /** One SCAN step and the documents of `scope` among its keys, in one command (retried as a whole). */
    const page = (scope: string, cursor: string) =>
      command(valkey, "scan job orders", async (c) => {
        const [next, keys] = await c.scan(cursor, "MATCH", pattern, "COUNT", SCAN_COUNT, "TYPE", "hash")
        const documents = keys.flatMap((key) => {
          const parsed = valkey.keys.parse(key)
          return parsed?.family === "jobOrder" ? [{ key, id: (parsed.parts as { id: string }).id }] : []
        })
        const found: Array<RetainedJobOrder> = []
        if (documents.length > 0) {
          const pipeline = c.pipeline()
          for (const d of documents) pipeline.hmget(d.key, "scope", "v", "doc").pttl(d.key)
          const replies = (await pipeline.exec()) ?? []
          documents.forEach((d, i) => {
            const fields = replies[i * 2]?.[1] as Array<string | null> | undefined
            const ttl = Number(replies[i * 2 + 1]?.[1] ?? -2)
            // A document deleted since the SCAN step, or of another scope, is not this scope's.
            if (!fields || fields[0] !== scope || fields[2] == null) return
            found.push({ id: d.id, version: Number(fields[1]), doc: fields[2], expiresInMs: ttl > 0 ? ttl : null })
          })
        }
        return { next, found }
      })

    /**
     * Every job order document of `scope`, found by a SCAN over the documents (never KEYS, so a
     * large island is not blocked), a page at a time. Unordered; a document written during the
     * scan may be missed or found, as SCAN guarantees.
     */
    const scan = (scope: string): Stream.Stream<RetainedJobOrder, InvalidInput | ConnectionError> =>
      Stream.unwrap(
        // A scope no key can be built for is bad input, before the scan.
        Effect.as(
          valkey.key("jobOrderList", { scope }),
          Stream.paginate("0", (cursor: string) =>
            page(scope, cursor).pipe(Effect.map(({ next, found }) => [found, next === "0" ? Option.none() : Option.some(next)] as const))
          )
        )
      )

    return { expiresIn, scan } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
