import { isAbsolute, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { Config, Effect } from "effect"
import type { IndexedFamily } from "@microdcs/store"
import { UsageError } from "./ExitCode.js"

/**
 * The extensions of an island, so `index check` and `index rebuild` walk their document families
 * too. `MICRODCS_EXTENSIONS` names modules, separated by commas: a file path (absolute, or
 * starting with `.`, taken from the working directory; or a `file:` URL) or a package name,
 * resolved from where the CLI is installed. Each must export `indexedFamilies`, an array of
 * `IndexedFamily` (from `@microdcs/store`); they are walked after the core families, in order.
 */
export const EXTENSIONS_VARIABLE = "MICRODCS_EXTENSIONS"

const moduleUrl = (specifier: string): string =>
  specifier.startsWith("file:")
    ? specifier
    : isAbsolute(specifier) || specifier.startsWith(".")
      ? pathToFileURL(resolve(specifier)).href
      : specifier

const isIndexedFamily = (value: unknown): value is IndexedFamily => {
  const family = value as Partial<Record<keyof IndexedFamily, unknown>> | null
  return (
    typeof family === "object" && family !== null && typeof family.name === "string" && family.name.length > 0 &&
    typeof family.inspect === "function" && typeof family.problemsOf === "function" && typeof family.repair === "function"
  )
}

const load = (specifier: string): Effect.Effect<ReadonlyArray<IndexedFamily>, UsageError> =>
  Effect.gen(function* () {
    const loaded: { readonly indexedFamilies?: unknown } = yield* Effect.tryPromise({
      try: () => import(moduleUrl(specifier)),
      catch: (error) =>
        new UsageError({ message: `${EXTENSIONS_VARIABLE}: cannot load '${specifier}': ${error instanceof Error ? error.message : String(error)}` })
    })
    const families = loaded.indexedFamilies
    if (!Array.isArray(families) || !families.every(isIndexedFamily)) {
      return yield* new UsageError({
        message: `${EXTENSIONS_VARIABLE}: '${specifier}' does not export indexedFamilies, an array of IndexedFamily (name, inspect, problemsOf, repair)`
      })
    }
    return families
  })

/** The families of every extension named in `MICRODCS_EXTENSIONS` (none when it is unset or empty). */
export const extensionFamilies: Effect.Effect<ReadonlyArray<IndexedFamily>, UsageError | Config.ConfigError> = Effect.gen(
  function* () {
    const named = yield* Config.String(EXTENSIONS_VARIABLE).pipe(Config.withDefault(""))
    const specifiers = named.split(",").map((s) => s.trim()).filter((s) => s.length > 0)
    const loaded = yield* Effect.forEach(specifiers, load)
    return loaded.flat()
  }
)
