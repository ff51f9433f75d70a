import { Argument, Command, Flag } from "effect/cli"
import { Effect, Option } from "effect"
import { JobAcceptanceDao } from "@microdcs/store"
import { confirmDestructive } from "../Confirm.js"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { yesOption } from "../Yes.js"

const scopeOption = Flag.String("scope")

const get = Command.make("get", { scope: scopeOption }, ({ scope }) =>
  island(
    Effect.gen(function* () {
      const limit = yield* (yield* JobAcceptanceDao).get(scope)
      yield* emit({ scope, limit: Option.getOrNull(limit) }, () =>
        Option.match(limit, {
          onNone: () => `${scope}: no limit of its own (the daemon's configured default applies)`,
          onSome: (n) => `${scope}: ${n === 0 ? "unlimited (0)" : `${n} job orders`}`
        })
      )
    })
  )
).pipe(Command.withDescription("the acceptance limit of a scope"))

const set = Command.make("set", { scope: scopeOption, limit: Argument.Int("limit") }, ({ scope, limit }) =>
  island(
    Effect.gen(function* () {
      yield* (yield* JobAcceptanceDao).set(scope, limit)
      yield* emit({ scope, limit }, () => `${scope}: acceptance limit set to ${limit}${limit === 0 ? " (unlimited)" : ""}`)
    })
  )
).pipe(Command.withDescription("set the acceptance limit of a scope (0 = unlimited)"))

const clear = Command.make("clear", { scope: scopeOption, yes: yesOption }, ({ scope, yes }) =>
  island(
    Effect.gen(function* () {
      const dao = yield* JobAcceptanceDao
      const current = yield* dao.get(scope)
      if (Option.isSome(current)) yield* confirmDestructive(yes, `Clear the acceptance limit ${current.value} of scope ${scope}?`)
      const cleared = yield* dao.clear(scope)
      yield* emit({ scope, cleared }, () => (cleared ? `${scope}: limit cleared (the default applies)` : `${scope}: had no limit`))
    })
  )
).pipe(Command.withDescription("remove the scope's own limit, so the configured default applies"))

export const acceptanceCommand = Command.make("acceptance").pipe(
  Command.withDescription("the per-scope job acceptance limit"),
  Command.withSubcommands([get, set, clear])
)
