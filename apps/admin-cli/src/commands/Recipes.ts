import { Command, Options } from "@effect/cli"
import { Config, Effect, Either, Option } from "effect"
import { type CatalogueRecipe, parseRecipePins, recipeCatalogue } from "@microdcs/job-control"
import { UsageError } from "../ExitCode.js"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { renderTable } from "../Table.js"

/** `RECIPE_DIGESTS` as the daemon reads it, to show each recipe's pin beside its digest. */
const pins = Effect.gen(function* () {
  const text = yield* Config.option(Config.string("RECIPE_DIGESTS"))
  if (Option.isNone(text)) return new Map<string, string>()
  const parsed = parseRecipePins(text.value)
  return Either.isRight(parsed) ? parsed.right : yield* new UsageError({ message: `RECIPE_DIGESTS: ${parsed.left}` })
})

const pinText = (r: CatalogueRecipe): string | undefined =>
  r.pinnedDigest === null ? undefined : r.pinnedDigest === r.digest ? "pinned, matches" : `pinned to ${r.pinnedDigest}: MISMATCH`

/**
 * `recipes list` (execution-log.md §5): the recipe catalogue, the recipes each scope has (its
 * work masters that carry one), each with its SHA-256 digest over canonical JSON, the digest
 * executions of it record. With `RECIPE_DIGESTS` set, each pin is shown beside the digest.
 */
const list = Command.make("list", { scope: Options.text("scope").pipe(Options.withDescription("one scope; default every scope"), Options.optional) }, ({ scope }) =>
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

export const recipesCommand = Command.make("recipes").pipe(Command.withDescription("the recipe catalogue (work masters' recipes) and their digests"), Command.withSubcommands([list]))
