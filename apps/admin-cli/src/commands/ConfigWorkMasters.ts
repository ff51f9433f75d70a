import { Argument, Command, Flag } from "effect/cli"
import { Effect } from "effect"
import { WorkMasterDao } from "@microdcs/store"
import { confirmDestructive } from "../Confirm.js"
import { ProblemsFound, UsageError } from "../ExitCode.js"
import { island, local } from "../Island.js"
import { parseJson, prettyJson } from "../Json.js"
import { readJsonFile } from "../JsonFile.js"
import { emit } from "../Output.js"
import { checkRecipe, describeCheck, renderProblems, workMasterId } from "../RecipeCheck.js"
import { renderFields, renderTable, section, sections } from "../Table.js"
import { yesOption } from "../Yes.js"

const fileArg = Argument.File("file", { mustExist: true }).pipe(Argument.withDescription("a work master as JSON"))

const list = Command.make("list", { scope: Flag.String("scope") }, ({ scope }) =>
  island(
    Effect.gen(function* () {
      const dao = yield* WorkMasterDao
      const ids = yield* dao.list(scope)
      const rows = yield* Effect.forEach(
        ids,
        (id) =>
          dao.get(id).pipe(
            Effect.map((stored) => ({ id, version: stored.version, ...checkRecipe(parseJson(stored.doc)) })),
            Effect.catchTag("NotFound", () => Effect.succeed({ id, version: 0, recipe: "missing" as const, problems: [], digest: null }))
          ),
        { concurrency: 16 }
      )
      yield* emit({ scope, workMasters: rows }, () =>
        renderTable(
          [
            { header: "ID", value: (r: (typeof rows)[number]) => r.id },
            { header: "VERSION", value: (r) => r.version, align: "right" },
            { header: "RECIPE", value: (r) => (r.recipe === "missing" ? "(listed, document missing)" : describeCheck(r)) }
          ],
          rows,
          `(no work masters in scope ${scope})`
        )
      )
    })
  )
).pipe(Command.withDescription("work masters of a scope with the state of their recipe"))

const show = Command.make("show", { id: Argument.String("id") }, ({ id }) =>
  island(
    Effect.gen(function* () {
      const stored = yield* (yield* WorkMasterDao).get(id)
      const document = parseJson(stored.doc)
      const check = checkRecipe(document)
      yield* emit({ id, scope: stored.scope, version: stored.version, op: stored.op, ...check, document }, () =>
        sections(
          renderFields([
            ["id", id],
            ["scope", stored.scope],
            ["version", stored.version],
            ["recipe", describeCheck(check)],
            ["digest", check.digest]
          ]),
          ...(check.problems.length > 0 ? [section("Recipe problems", renderProblems(check))] : []),
          section("Document", prettyJson(document))
        )
      )
    })
  )
).pipe(Command.withDescription("a work master and the check of its recipe"))

const validate = Command.make("validate", { file: fileArg }, ({ file }) =>
  local(
    Effect.gen(function* () {
      const { parsed } = yield* readJsonFile(file)
      const check = checkRecipe(parsed)
      yield* emit({ file, id: workMasterId(parsed) ?? null, ...check }, () =>
        check.problems.length > 0 ? sections(`${file}: ${describeCheck(check)}`, renderProblems(check)) : `${file}: ${describeCheck(check)}`
      )
      if (check.problems.length > 0) return yield* new ProblemsFound({ message: `${check.problems.length} recipe problem(s) in ${file}` })
    })
  )
).pipe(Command.withDescription("check a work master file's recipe with the engine's rules; lists every problem (exit 1)"))

const put = Command.make("put", { file: fileArg, scope: Flag.String("scope") }, ({ file, scope }) =>
  island(
    Effect.gen(function* () {
      const { parsed } = yield* readJsonFile(file)
      const id = workMasterId(parsed)
      if (id === undefined) return yield* new UsageError({ message: `${file} has no string ID: a work master needs one` })
      const check = checkRecipe(parsed)
      if (check.recipe === "invalid") {
        yield* emit({ file, id, stored: false, ...check }, () => sections(`${file}: ${describeCheck(check)}; not stored`, renderProblems(check)))
        return yield* new ProblemsFound({ message: `work master ${id} was not stored: ${check.problems.length} recipe problem(s)` })
      }
      // Stored as the daemon stores a config event: the whole document, unconditionally.
      const written = yield* (yield* WorkMasterDao).put({ id, scope, doc: JSON.stringify(parsed), expectedVersion: -1 })
      yield* emit({ id, scope, stored: true, version: written.version, recipe: check.recipe }, () =>
        `stored work master ${id} in ${scope} as version ${written.version} (${describeCheck(check)})`
      )
    })
  )
).pipe(Command.withDescription("store a work master from a file, after validating its recipe"))

const remove = Command.make("delete", { id: Argument.String("id"), yes: yesOption }, ({ id, yes }) =>
  island(
    Effect.gen(function* () {
      const dao = yield* WorkMasterDao
      const stored = yield* dao.get(id)
      yield* confirmDestructive(yes, `Delete work master ${id} (scope ${stored.scope}, version ${stored.version})?`)
      // The version read is the one confirmed: a put in between makes this a conflict, not a lost update.
      const deleted = yield* dao.delete({ id, expectedVersion: stored.version })
      yield* emit({ id, scope: stored.scope, deleted: true, version: deleted.version }, () => `deleted work master ${id} from ${stored.scope}`)
    })
  )
).pipe(Command.withDescription("delete a work master (destructive)"))

export const workMastersCommand = Command.make("workmasters").pipe(
  Command.withDescription("work masters and their recipes"),
  Command.withSubcommands([list, show, validate, put, remove])
)
