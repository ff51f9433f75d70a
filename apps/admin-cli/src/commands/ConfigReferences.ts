import { Argument, Command, Flag } from "effect/cli"
import { Effect, Option } from "effect"
import { type ReferenceKind, referenceKinds } from "@microdcs/keyschema"
import { ReferenceListDao } from "@microdcs/store"
import { confirmDestructive } from "../Confirm.js"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { renderTable } from "../Table.js"
import { yesOption } from "../Yes.js"

const kindOption = Flag.Literals("kind", referenceKinds).pipe(Flag.withDescription("the ISA-95 reference list"))
const scopeOption = Flag.String("scope")
const idsArg = Argument.String("id").pipe(Argument.atLeast(1))

const list = Command.make("list", { kind: kindOption.pipe(Flag.optional), scope: scopeOption }, (o) =>
  island(
    Effect.gen(function* () {
      const dao = yield* ReferenceListDao
      const kinds: ReadonlyArray<ReferenceKind> = Option.match(o.kind, { onNone: () => referenceKinds, onSome: (k) => [k] })
      const lists = yield* Effect.forEach(kinds, (kind) => Effect.map(dao.members(kind, o.scope), (ids) => [kind, ids] as const))
      const rows = lists.flatMap(([kind, ids]) => ids.map((id) => ({ kind, id })))
      yield* emit({ scope: o.scope, references: Object.fromEntries(lists) }, () =>
        renderTable(
          [
            { header: "KIND", value: (r: (typeof rows)[number]) => r.kind },
            { header: "ID", value: (r) => r.id }
          ],
          rows,
          `(no references in scope ${o.scope})`
        )
      )
    })
  )
).pipe(Command.withDescription("the reference lists of a scope (all five kinds unless --kind)"))

const add = Command.make("add", { kind: kindOption, scope: scopeOption, ids: idsArg }, (o) =>
  island(
    Effect.gen(function* () {
      const added = yield* (yield* ReferenceListDao).add(o.kind, o.scope, o.ids)
      yield* emit({ kind: o.kind, scope: o.scope, ids: o.ids, added }, () => `added ${added} of ${o.ids.length} ids to ${o.kind} in ${o.scope}`)
    })
  )
).pipe(Command.withDescription("add ids to a reference list (registers the scope)"))

const remove = Command.make("remove", { kind: kindOption, scope: scopeOption, ids: idsArg, yes: yesOption }, (o) =>
  island(
    Effect.gen(function* () {
      const dao = yield* ReferenceListDao
      // Validate the ids before asking: a question about bad input would only be refused later.
      yield* dao.missing(o.kind, o.scope, o.ids)
      yield* confirmDestructive(o.yes, `Remove ${o.ids.length} id(s) from the ${o.kind} list of scope ${o.scope}?`)
      const removed = yield* dao.remove(o.kind, o.scope, o.ids)
      yield* emit({ kind: o.kind, scope: o.scope, ids: o.ids, removed }, () => `removed ${removed} of ${o.ids.length} ids from ${o.kind} in ${o.scope}`)
    })
  )
).pipe(Command.withDescription("remove ids from a reference list (destructive: job orders naming them are no longer accepted)"))

export const referencesCommand = Command.make("references").pipe(
  Command.withDescription("the ISA-95 reference lists (equipment, material classes and definitions, personnel, physical assets)"),
  Command.withSubcommands([list, add, remove])
)
