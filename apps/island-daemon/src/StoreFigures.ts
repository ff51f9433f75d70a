import { Effect } from "effect"
import { JobStates } from "@microdcs/job-state"
import { ScopeRegistry, Valkey } from "@microdcs/store"

/**
 * The Valkey-side figures of `/metrics`, read from index and stream sizes only (XLEN, XINFO
 * GROUPS, ZCARD, SCARD): no document is read, so a scrape costs the same on a scope with 20
 * job orders as on one with 20,000. One pipelined round trip per batch of scopes.
 */

export interface GroupFigures {
  readonly stream: string
  readonly scope: string
  readonly group: string
  readonly lag: number | undefined
  readonly pending: number
}

export interface ScopeFigures {
  readonly scope: string
  /** XLEN of `changes:{scope}` and `sfc:work:{scope}`. */
  readonly streamLength: Readonly<Record<StreamName, number>>
  readonly deadLetters: Readonly<Record<StreamName, number>>
  readonly groups: ReadonlyArray<GroupFigures>
  /** Job orders in the scope's list (stored and not yet cleared or cancelled). */
  readonly jobOrders: number
  /** Executions not yet terminal (Running, Interrupted). */
  readonly activeExecutions: number
  /** Job responses by state (Ended_Completed, Aborted, ...), from the by-state sets. */
  readonly responsesByState: Readonly<Record<string, number>>
}

type StreamName = "changes" | "sfc"
const STREAMS: ReadonlyArray<readonly [StreamName, "changes" | "sfcWork"]> = [["changes", "changes"], ["sfc", "sfcWork"]]
const STATES = Object.keys(JobStates)
/** Scopes per pipelined round trip. */
const SCOPES_PER_ROUND_TRIP = 50

type Reply = [Error | null, unknown]

const groupFigures = (stream: string, scope: string, reply: Reply | undefined): ReadonlyArray<GroupFigures> => {
  // A stream that does not exist yet has no groups: XINFO answers an error, which is no problem.
  if (!reply || reply[0] !== null || !Array.isArray(reply[1])) return []
  return (reply[1] as Array<Array<unknown>>).map((group) => {
    const fields = new Map<string, unknown>()
    for (let i = 0; i + 1 < group.length; i += 2) fields.set(String(group[i]), group[i + 1])
    const lag = fields.get("lag")
    return {
      stream,
      scope,
      group: String(fields.get("name")),
      lag: lag === null || lag === undefined ? undefined : Number(lag),
      pending: Number(fields.get("pending") ?? 0)
    }
  })
}

/** Every scope's figures. */
export const readStoreFigures = Effect.gen(function* () {
  const valkey = yield* Valkey
  const scopes = yield* Effect.flatMap(ScopeRegistry, (r) => r.list)
  const figures: Array<ScopeFigures> = []
  for (let i = 0; i < scopes.length; i += SCOPES_PER_ROUND_TRIP) {
    const batch = scopes.slice(i, i + SCOPES_PER_ROUND_TRIP)
    const keyed = yield* Effect.forEach(batch, (scope) =>
      Effect.all({
        scope: Effect.succeed(scope),
        streams: Effect.forEach(STREAMS, ([, family]) => valkey.key(family, { scope })),
        dead: Effect.forEach(STREAMS, ([kind]) => valkey.key("deadLetterStream", { kind, scope })),
        list: valkey.key("jobOrderList", { scope }),
        active: valkey.key("sfcActive", { scope }),
        byState: Effect.forEach(STATES, (state) => valkey.key("jobResponseByState", { scope, state }))
      })
    )
    const replies = yield* valkey.command("metrics figures", async (c) => {
      const pipeline = c.pipeline()
      for (const k of keyed) {
        for (const stream of k.streams) pipeline.xlen(stream).xinfo("GROUPS", stream)
        for (const dead of k.dead) pipeline.xlen(dead)
        pipeline.zcard(k.list).scard(k.active)
        for (const set of k.byState) pipeline.scard(set)
      }
      return ((await pipeline.exec()) ?? []) as Array<Reply>
    })
    let at = 0
    const next = () => replies[at++]
    const count = (reply: Reply | undefined) => (reply && reply[0] === null ? Number(reply[1]) : 0)
    for (const k of keyed) {
      const streamLength = {} as Record<StreamName, number>
      const deadLetters = {} as Record<StreamName, number>
      const groups: Array<GroupFigures> = []
      for (const [name] of STREAMS) {
        streamLength[name] = count(next())
        groups.push(...groupFigures(name, k.scope, next()))
      }
      for (const [name] of STREAMS) deadLetters[name] = count(next())
      const jobOrders = count(next())
      const activeExecutions = count(next())
      const responsesByState: Record<string, number> = {}
      for (const state of STATES) {
        const n = count(next())
        if (n > 0) responsesByState[state] = n
      }
      figures.push({ scope: k.scope, streamLength, deadLetters, groups, jobOrders, activeExecutions, responsesByState })
    }
  }
  return figures
})
