import { Effect, Context, Layer } from "effect"
import type { ConnectionError, InvalidInput } from "./Errors.js"
import { Valkey } from "./Valkey.js"
import { command } from "./RawDoor.js"

/** The sizes of one scope's lists and streams; `null` where the key holds another type (the index check names it). */
export interface ScopeSize {
  readonly scope: string
  readonly jobOrders: number | null
  readonly jobResponses: number | null
  readonly workMasters: number | null
  readonly activeExecutions: number | null
  /** XLEN of `changes:{scope}`. */
  readonly changes: number | null
  /** XLEN of `sfc:work:{scope}`. */
  readonly sfcWork: number | null
}

type Reply = [Error | null, unknown]

/** Counts per scope, in the order of {@link ScopeSize}'s fields. */
const COUNTS_PER_SCOPE = 6

/**
 * How big each scope is (admin CLI `scopes list`): ZCARD, SCARD and XLEN of its index keys and
 * streams. No document is read, so it costs the same on a scope of any size.
 */
export class ScopeSizes extends Context.Service<ScopeSizes>()("@microdcs/store/ScopeSizes", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey

    /** The sizes of every scope given, in one pipelined round trip, in the order given. */
    const sizes = (scopes: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<ScopeSize>, InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        if (scopes.length === 0) return []
        const keys = yield* Effect.forEach(scopes, (scope) =>
          Effect.all({
            jobOrders: valkey.key("jobOrderList", { scope }),
            jobResponses: valkey.key("jobResponseList", { scope }),
            workMasters: valkey.key("workMasterList", { scope }),
            active: valkey.key("sfcActive", { scope }),
            changes: valkey.key("changes", { scope }),
            work: valkey.key("sfcWork", { scope })
          })
        )
        const replies = yield* command(valkey, "scope sizes", async (c) => {
          const pipeline = c.pipeline()
          for (const k of keys) {
            pipeline.zcard(k.jobOrders).zcard(k.jobResponses).scard(k.workMasters).scard(k.active).xlen(k.changes).xlen(k.work)
          }
          return ((await pipeline.exec()) ?? []) as Array<Reply>
        })
        // A WRONGTYPE reply of one key must not hide the other counts: it shows as null.
        const count = (i: number): number | null => {
          const [error, value] = replies[i] ?? [null, null]
          return error ? null : Number(value)
        }
        return scopes.map((scope, s) => {
          const at = s * COUNTS_PER_SCOPE
          return {
            scope,
            jobOrders: count(at),
            jobResponses: count(at + 1),
            workMasters: count(at + 2),
            activeExecutions: count(at + 3),
            changes: count(at + 4),
            sfcWork: count(at + 5)
          } satisfies ScopeSize
        })
      })

    return { sizes } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
