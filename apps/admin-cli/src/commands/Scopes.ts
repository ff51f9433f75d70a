import { Command } from "effect/cli"
import { Effect } from "effect"
import { ScopeRegistry, type ScopeSize, ScopeSizes } from "@microdcs/store"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { renderTable } from "../Table.js"

type ScopeRow = ScopeSize

const list = Command.make("list", {}, () =>
  island(
    Effect.gen(function* () {
      const scopes = yield* (yield* ScopeRegistry).list
      const rows = yield* (yield* ScopeSizes).sizes(scopes)
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
