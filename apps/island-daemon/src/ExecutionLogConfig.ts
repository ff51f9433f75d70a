import { Config, ConfigError, Either, Option, Redacted } from "effect"
import { parseRecipePins, type RecipePins } from "@microdcs/job-control"

/**
 * The execution log's and the recipe catalogue's settings (execution-log.md §2, §5):
 * - `PG_URL`: the PostgreSQL the storage role commits into (and readers fall back to); unset,
 *   the storage role runs on an embedded PGlite in the daemon's process;
 * - `RECIPE_DIGESTS`: `workMasterId=sha256,...`, pinned recipe digests; a work master whose
 *   recipe has another digest is refused when stored.
 */
export const pgUrlSetting: Config.Config<Redacted.Redacted<string> | undefined> = Config.option(
  // Checked as text (a check after Config.redacted reports no variable name), redacted at once.
  Config.string("PG_URL").pipe(
    Config.validate({ message: "PG_URL must look like postgres://user@host:port/database", validation: (s) => /^postgres(ql)?:\/\/./.test(s) }),
    Config.map((url) => Redacted.make(url))
  )
).pipe(Config.map(Option.getOrUndefined))

export const recipeDigestsSetting: Config.Config<RecipePins> = Config.string("RECIPE_DIGESTS").pipe(
  Config.mapOrFail((text) => Either.mapLeft(parseRecipePins(text), (problem) => ConfigError.InvalidData([], problem))),
  Config.withDefault<RecipePins>(new Map())
)
