import { Argument, Command, Flag } from "effect/cli"
import { Config, Effect, Result, Option } from "effect"
import { type CatalogueRecipe, parseRecipePins, recipeCatalogue } from "@microdcs/job-control"
import { ProblemsFound, UsageError } from "../ExitCode.js"
import { island, local } from "../Island.js"
import { readJsonFile } from "../JsonFile.js"
import { emit } from "../Output.js"
import { checkRecipe, renderProblems, workMasterId } from "../RecipeCheck.js"
import { renderTable, sections } from "../Table.js"

/** `RECIPE_DIGESTS` as the daemon reads it, to show each recipe's pin beside its digest. */
const pins = Effect.gen(function* () {
  const text = yield* Config.option(Config.String("RECIPE_DIGESTS"))
  if (Option.isNone(text)) return new Map<string, string>()
  const parsed = parseRecipePins(text.value)
  return Result.isSuccess(parsed) ? parsed.success : yield* new UsageError({ message: `RECIPE_DIGESTS: ${parsed.failure}` })
})

const pinText = (r: CatalogueRecipe): string | undefined =>
  r.pinnedDigest === null ? undefined : r.pinnedDigest === r.digest ? "pinned, matches" : `pinned to ${r.pinnedDigest}: MISMATCH`

/**
 * `recipes list`: the recipe catalogue, the recipes each scope has (its
 * work masters that carry one), each with its SHA-256 digest over canonical JSON, the digest
 * executions of it record. With `RECIPE_DIGESTS` set, each pin is shown beside the digest.
 */
const list = Command.make("list", { scope: Flag.String("scope").pipe(Flag.withDescription("one scope; default every scope"), Flag.optional) }, ({ scope }) =>
  island(
    Effect.gen(function* () {
      const pinned = yield* pins
      const recipes = yield* recipeCatalogue({ scope: Option.getOrUndefined(scope), pins: pinned })
      yield* emit({ recipes }, () =>
        renderTable(
          [
            { header: "SCOPE", value: (r: CatalogueRecipe) => r.scope },
            { header: "WORK MASTER", value: (r) => r.workMasterId },
            { header: "VERSION", value: (r) => r.version, align: "right" },
            { header: "DIGEST (SHA-256)", value: (r) => r.digest ?? "(invalid recipe)" },
            { header: "PIN", value: pinText }
          ],
          recipes,
          Option.isSome(scope) ? `(no recipes in scope ${scope.value})` : "(no recipes)"
        )
      )
    })
  )
).pipe(Command.withDescription("the recipe catalogue: every scope's recipes with their SHA-256 digests"))

/**
 * `recipes digest FILE`: the digest the island will compute for the recipe of a work master file
 * (or a bare recipe), the one to pin in `RECIPE_DIGESTS`. The island hashes the recipe as it
 * validated it (PascalCase names, defaults such as `Initial: false` and `Priority: 0` filled in,
 * unknown fields left out), so a hash of the file as written would not match.
 */
const digest = Command.make(
  "digest",
  { file: Argument.File("file", { mustExist: true }).pipe(Argument.withDescription("a work master (with the recipe schema) or a bare recipe, as JSON")) },
  ({ file }) =>
    local(
      Effect.gen(function* () {
        const { parsed } = yield* readJsonFile(file)
        const check = checkRecipe(parsed)
        if (check.recipe === "none") return yield* new UsageError({ message: `${file} holds no recipe: a work master needs the recipe dataschema, a bare recipe its Steps` })
        yield* emit({ file, workMasterId: workMasterId(parsed) ?? null, ...check }, () =>
          check.digest !== null ? `${check.digest}  ${file}` : sections(`${file}: invalid recipe, the island refuses it`, renderProblems(check))
        )
        if (check.digest === null) return yield* new ProblemsFound({ message: `${check.problems.length} recipe problem(s) in ${file}` })
      })
    )
).pipe(Command.withDescription("the SHA-256 digest the island computes for a work master file's recipe (the value to pin in RECIPE_DIGESTS); needs no Valkey"))

export const recipesCommand = Command.make("recipes").pipe(
  Command.withDescription("the recipe catalogue (work masters' recipes) and their digests"),
  Command.withSubcommands([list, digest])
)
