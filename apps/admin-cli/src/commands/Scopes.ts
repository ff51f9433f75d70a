import { Command } from "@effect/cli"
import { Effect } from "effect"
import { ScopeRegistry, Valkey } from "@microdcs/store"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { renderTable } from "../Table.js"

interface ScopeRow {
  readonly scope: string
  /** `null` where the key holds another type (the index check names it). */
  readonly jobOrders: number | null
  readonly jobResponses: number | null
  readonly workMasters: number | null
  readonly activeExecutions: number | null
  readonly changes: number | null
  readonly sfcWork: number | null
}

/** The sizes of a scope's lists in one pipelined round trip for all scopes. */
const scopeSizes = (scopes: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
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
    const replies = yield* valkey.command("scope sizes", async (c) => {
      const pipeline = c.pipeline()
      for (const k of keys) {
        pipeline.zcard(k.jobOrders).zcard(k.jobResponses).scard(k.workMasters).scard(k.active).xlen(k.changes).xlen(k.work)
      }
      return (await pipeline.exec()) ?? []
    })
    // A WRONGTYPE reply of one key must not hide the other counts: it shows as null.
    const count = (i: number): number | null => {
      const [error, value] = replies[i] ?? [null, null]
      return error ? null : Number(value)
    }
    return scopes.map(
      (scope, s): ScopeRow => ({
        scope,
        jobOrders: count(s * 6),
        jobResponses: count(s * 6 + 1),
        workMasters: count(s * 6 + 2),
        activeExecutions: count(s * 6 + 3),
        changes: count(s * 6 + 4),
        sfcWork: count(s * 6 + 5)
      })
    )
  })

const list = Command.make("list", {}, () =>
  island(
    Effect.gen(function* () {
      const scopes = yield* (yield* ScopeRegistry).list
      const rows = yield* scopeSizes(scopes)
      yield* emit({ scopes: rows }, () =>
        renderTable(
          [
            { header: "SCOPE", value: (r: ScopeRow) => r.scope },
            { header: "JOB ORDERS", value: (r) => r.jobOrders ?? "?", align: "right" },
            { header: "RESPONSES", value: (r) => r.jobResponses ?? "?", align: "right" },
            { header: "WORK MASTERS", value: (r) => r.workMasters ?? "?", align: "right" },
            { header: "ACTIVE", value: (r) => r.activeExecutions ?? "?", align: "right" },
            { header: "CHANGES", value: (r) => r.changes ?? "?", align: "right" },
            { header: "SFC WORK", value: (r) => r.sfcWork ?? "?", align: "right" }
          ],
          rows,
          "(no scopes registered)"
        )
      )
    })
  )
).pipe(Command.withDescription("every registered scope with the sizes of its lists and streams"))

export const scopesCommand = Command.make("scopes").pipe(
  Command.withDescription("the scopes of the island"),
  Command.withSubcommands([list])
)
