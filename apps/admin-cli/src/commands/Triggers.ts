import { Argument, Command, Flag } from "effect/cli"
import { FileSystem } from "effect"
import { Effect, Option } from "effect"
import { type TriggerRow, TriggerStore } from "@microdcs/store"
import { confirmDestructive } from "../Confirm.js"
import { ProblemsFound, UsageError } from "../ExitCode.js"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { renderFields, renderTable, section, sections } from "../Table.js"
import { yesOption } from "../Yes.js"

/**
 * Triggers: "when this event appears, run that work master". Every edit
 * here is a compare-and-set in the `dag:triggers` hash that publishes the nudge `nudge:triggers`,
 * so every daemon reloads at once. The CLI has no MQTT connection: one of the running daemons
 * announces the edit as `dag.triggers.changed` for it (the nudge says nobody has); a daemon that
 * misses the nudge (reconnecting) has the edit at its next refresh (TRIGGER_REFRESH_INTERVAL_MS,
 * default 30 s).
 */

const idArg = Argument.String("id").pipe(Argument.withDescription("the trigger id"))
const versionOption = Flag.Int("expect-version").pipe(
  Flag.withDescription("write only if the stored version is this one (0: only if the trigger does not exist yet)"),
  Flag.optional
)

const rendered = (row: TriggerRow) => ({
  id: row.id,
  scope: row.scope,
  type: row.type,
  subject: row.subject ?? "",
  workMasterId: row.workMasterId,
  enabled: row.enabled ? "yes" : "no",
  version: row.version,
  updatedAt: row.updatedAt
})

const fields = (row: TriggerRow) =>
  renderFields([
    ["id", row.id],
    ["scope", row.scope],
    ["type", row.type],
    ["subject", row.subject ?? "(events of the trigger's scope)"],
    ["work master", row.workMasterId],
    ["priority", row.priority ?? "(none)"],
    ["enabled", row.enabled ? "yes" : "no"],
    ["version", row.version],
    ["updated at", row.updatedAt]
  ])

const list = Command.make("list", {}, () =>
  island(
    Effect.gen(function* () {
      const { triggers, unreadable } = yield* (yield* TriggerStore).list
      yield* emit({ triggers, unreadable }, () =>
        sections(
          renderTable(
            [
              { header: "ID", value: (r: ReturnType<typeof rendered>) => r.id },
              { header: "SCOPE", value: (r) => r.scope },
              { header: "TYPE", value: (r) => r.type },
              { header: "SUBJECT", value: (r) => r.subject },
              { header: "WORK MASTER", value: (r) => r.workMasterId },
              { header: "ENABLED", value: (r) => r.enabled },
              { header: "VERSION", value: (r) => r.version, align: "right" }
            ],
            triggers.map(rendered),
            "(no triggers)"
          ),
          ...(unreadable.length > 0 ? [section("Unreadable rows", unreadable.map((u) => `${u.id}: ${u.problems.join("; ")}`).join("\n"))] : [])
        )
      )
    })
  )
).pipe(Command.withDescription("every trigger of the island"))

const show = Command.make("show", { id: idArg }, ({ id }) =>
  island(
    Effect.gen(function* () {
      const row = yield* (yield* TriggerStore).get(id)
      yield* emit(row, () =>
        sections(fields(row), ...(row.requirements !== undefined ? [section("Requirements", JSON.stringify(row.requirements, null, 2))] : []))
      )
    })
  )
).pipe(Command.withDescription("one trigger"))

const readJsonFile = (path: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(path).pipe(Effect.mapError((e) => new UsageError({ message: `cannot read ${path}: ${e.message}` })))
    return yield* Effect.try({ try: () => JSON.parse(text) as unknown, catch: (e) => new UsageError({ message: `${path} is not JSON: ${(e as Error).message}` }) })
  })

const put = Command.make(
  "put",
  {
    file: Argument.File("file", { mustExist: true }).pipe(Argument.withDescription("a trigger as JSON (what `trigger show --json` prints)")),
    scope: Flag.String("scope").pipe(Flag.withDescription("the trigger's scope, when the file names none"), Flag.optional),
    version: versionOption
  },
  ({ file, scope, version }) =>
    island(
      Effect.gen(function* () {
        const parsed = yield* readJsonFile(file)
        const input =
          Option.isSome(scope) && typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? { scope: scope.value, ...parsed } : parsed
        const row = yield* (yield* TriggerStore).put(input, { expectedVersion: Option.getOrUndefined(version) }).pipe(
          Effect.catchTag("InvalidTrigger", (e) =>
            emit({ file, stored: false, problems: e.problems }, () => sections(`${file}: not stored, ${e.problems.length} problem(s)`, e.problems.map((p) => `  - ${p}`).join("\n"))).pipe(
              Effect.andThen(Effect.fail(new ProblemsFound({ message: `trigger not stored: ${e.problems.length} problem(s)` })))
            )
          )
        )
        yield* emit({ stored: true, trigger: row }, () => `stored trigger ${row.id} (scope ${row.scope}) as version ${row.version}`)
      })
    )
).pipe(Command.withDescription("store a trigger from a file; every problem is listed and nothing stored when it is invalid (exit 1)"))

const remove = Command.make("delete", { id: idArg, yes: yesOption }, ({ id, yes }) =>
  island(
    Effect.gen(function* () {
      const store = yield* TriggerStore
      const row = yield* store.get(id)
      yield* confirmDestructive(yes, `Delete trigger ${id} (scope ${row.scope}, ${row.type} → ${row.workMasterId})?`)
      // The version confirmed is the one deleted: an edit in between is a conflict, not a lost update.
      yield* store.remove(id, { expectedVersion: row.version })
      yield* emit({ id, deleted: true, version: row.version }, () => `deleted trigger ${id}`)
    })
  )
).pipe(Command.withDescription("delete a trigger (destructive)"))

const switchTo = (enabled: boolean) =>
  Command.make(enabled ? "enable" : "disable", { id: idArg }, ({ id }) =>
    island(
      Effect.gen(function* () {
        const row = yield* (yield* TriggerStore)[enabled ? "enable" : "disable"](id)
        yield* emit(row, () => `trigger ${id} is ${enabled ? "enabled" : "disabled"} (version ${row.version})`)
      })
    )
  ).pipe(Command.withDescription(enabled ? "switch a trigger on" : "switch a trigger off: its events start nothing"))

export const triggersCommand = Command.make("trigger").pipe(
  Command.withDescription("triggers: which event starts which work master"),
  Command.withSubcommands([list, show, put, remove, switchTo(true), switchTo(false)])
)
