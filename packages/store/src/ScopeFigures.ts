import { Effect, Context, Layer } from "effect"
import type { ConnectionError, InvalidInput } from "./Errors.js"
import { SCOPE_STREAMS, type ScopeStreamName } from "./ScopeStreams.js"
import { decodeStreamGroups } from "./StreamGroups.js"
import { Valkey, type ValkeyService } from "./Valkey.js"
import { command } from "./RawDoor.js"

export interface GroupFigures {
  readonly stream: ScopeStreamName
  readonly scope: string
  readonly group: string
  readonly lag: number | undefined
  readonly pending: number
}

export interface ScopeFigures {
  readonly scope: string
  /** XLEN of each scope stream (`changes:{scope}`, `sfc:work:{scope}`, `dag:commits:{scope}`), by kind. */
  readonly streamLength: Readonly<Record<ScopeStreamName, number>>
  /** XLEN of each kind's `dlq:{kind}:{scope}`. */
  readonly deadLetters: Readonly<Record<ScopeStreamName, number>>
  readonly groups: ReadonlyArray<GroupFigures>
  /** Job orders in the scope's list (stored and not yet cleared or cancelled). */
  readonly jobOrders: number
  /** Executions not yet terminal (Running, Interrupted). */
  readonly activeExecutions: number
  /** Job responses by state, from the by-state sets; states without responses are left out. */
  readonly responsesByState: Readonly<Record<string, number>>
}

/** Scopes per pipelined round trip. */
const SCOPES_PER_ROUND_TRIP = 50

type Reply = [Error | null, unknown]

/** The keys one scope's figures are read from. */
interface ScopeKeys {
  readonly scope: string
  readonly streams: ReadonlyArray<string>
  readonly dead: ReadonlyArray<string>
  readonly list: string
  readonly active: string
  readonly byState: ReadonlyArray<string>
}

const keysOf = (valkey: ValkeyService, scope: string, responseStates: ReadonlyArray<string>): Effect.Effect<ScopeKeys, InvalidInput> =>
  Effect.all({
    scope: Effect.succeed(scope),
    streams: Effect.forEach(SCOPE_STREAMS, ({ family }) => valkey.key(family, { scope })),
    dead: Effect.forEach(SCOPE_STREAMS, ({ kind }) => valkey.key("deadLetterStream", { kind, scope })),
    list: valkey.key("jobOrderList", { scope }),
    active: valkey.key("sfcActive", { scope }),
    byState: Effect.forEach(responseStates, (state) => valkey.key("jobResponseByState", { scope, state }))
  })

/** One pipeline of sizes for every scope of a batch, in the order {@link decodeScope} takes them. */
const readSizes = (valkey: ValkeyService, keyed: ReadonlyArray<ScopeKeys>): Effect.Effect<ReadonlyArray<Reply>, ConnectionError> =>
  command(valkey, "metrics figures", async (c) => {
    const pipeline = c.pipeline()
    for (const k of keyed) {
      for (const stream of k.streams) pipeline.xlen(stream).xinfo("GROUPS", stream)
      for (const dead of k.dead) pipeline.xlen(dead)
      pipeline.zcard(k.list).scard(k.active)
      for (const set of k.byState) pipeline.scard(set)
    }
    return ((await pipeline.exec()) ?? []) as Array<Reply>
  })

const count = (reply: Reply | undefined) => (reply && reply[0] === null ? Number(reply[1]) : 0)
// A stream that does not exist yet has no groups: XINFO answers an error, which is no problem.
const groupsOf = (reply: Reply | undefined) => (reply && reply[0] === null ? decodeStreamGroups(reply[1]) : [])

/** One scope's figures from the next replies of a batch's pipeline. */
const decodeScope = (scope: string, next: () => Reply | undefined, responseStates: ReadonlyArray<string>): ScopeFigures => {
  const streamLength = {} as Record<ScopeStreamName, number>
  const deadLetters = {} as Record<ScopeStreamName, number>
  const groups: Array<GroupFigures> = []
  for (const { kind: name } of SCOPE_STREAMS) {
    streamLength[name] = count(next())
    for (const g of groupsOf(next())) groups.push({ stream: name, scope, group: g.group, lag: g.lag ?? undefined, pending: g.pending })
  }
  for (const { kind } of SCOPE_STREAMS) deadLetters[kind] = count(next())
  const jobOrders = count(next())
  const activeExecutions = count(next())
  const responsesByState: Record<string, number> = {}
  for (const state of responseStates) {
    const n = count(next())
    if (n > 0) responsesByState[state] = n
  }
  return { scope, streamLength, deadLetters, groups, jobOrders, activeExecutions, responsesByState }
}

/** The figures of one batch of scopes: one pipelined round trip. */
const batchFigures = (valkey: ValkeyService, batch: ReadonlyArray<string>, responseStates: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const keyed = yield* Effect.forEach(batch, (scope) => keysOf(valkey, scope, responseStates))
    const replies = yield* readSizes(valkey, keyed)
    let at = 0
    const next = () => replies[at++]
    return keyed.map((k) => decodeScope(k.scope, next, responseStates))
  })

/**
 * The figures of `/metrics`, read from index and stream sizes only (XLEN, XINFO
 * GROUPS, ZCARD, SCARD): no document is read, so a scrape costs the same on a scope with 20 job
 * orders as on one with 20,000. A key that is missing or of another type counts 0: a scrape
 * must not fail over one corrupted key (the index check names it).
 */
export class ScopeFiguresReader extends Context.Service<ScopeFiguresReader>()("@microdcs/store/ScopeFiguresReader", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey

    /**
     * Every scope's figures, one pipelined round trip per batch of scopes. `responseStates` are
     * the job response states to count (the store does not know the state machine).
     */
    const figures = (
      scopes: ReadonlyArray<string>,
      responseStates: ReadonlyArray<string>
    ): Effect.Effect<ReadonlyArray<ScopeFigures>, InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const out: Array<ScopeFigures> = []
        for (let i = 0; i < scopes.length; i += SCOPES_PER_ROUND_TRIP) {
          out.push(...(yield* batchFigures(valkey, scopes.slice(i, i + SCOPES_PER_ROUND_TRIP), responseStates)))
        }
        return out
      })

    return { figures } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
