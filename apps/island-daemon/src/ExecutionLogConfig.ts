import { accessSync, constants, type Stats, statSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { Config, Option, Redacted } from "effect"
import { parseRecipePins, type RecipePins } from "@microdcs/job-control"
import { checkedString, parsedString } from "./ConfigChecks.js"

/**
 * The execution log's and the recipe catalogue's settings:
 * - `PG_URL`: the PostgreSQL the storage role commits into (and readers fall back to); unset,
 *   the storage role runs on an embedded PGlite on a thread of the daemon's process;
 * - `PG_DATA_DIR`: where that embedded PGlite keeps the archive (`memory://`: in memory);
 * - `RECIPE_DIGESTS`: `workMasterId=sha256,...`, pinned recipe digests; a work master whose
 *   recipe has another digest is refused when stored.
 */
export const pgUrlSetting: Config.Config<Redacted.Redacted<string> | undefined> = Config.option(
  // Checked as text (so the message is the daemon's, naming the variable), redacted at once.
  checkedString("PG_URL", (s) => (/^postgres(ql)?:\/\/./.test(s) ? undefined : "PG_URL must look like postgres://user@host:port/database")).pipe(
    Config.map((url) => Redacted.make(url))
  )
).pipe(Config.map(Option.getOrUndefined))

export const recipeDigestsSetting: Config.Config<RecipePins> = parsedString("RECIPE_DIGESTS", parseRecipePins).pipe(Config.withDefault<RecipePins>(new Map()))

/** `PG_DATA_DIR`'s value that keeps the embedded archive in memory, gone at exit: for tests and demos. */
export const IN_MEMORY = "memory://"

const statOf = (path: string): Stats | undefined => {
  try {
    return statSync(path)
  } catch {
    return undefined
  }
}

const isWritable = (path: string): boolean => {
  try {
    accessSync(path, constants.W_OK | constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** Why the embedded database could not keep its data in `dir`: not a directory, or not one it can write or create. */
const dataDirProblem = (dir: string): string | undefined => {
  if (dir === IN_MEMORY) return undefined
  if (dir.trim() === "") return "must not be empty (memory:// keeps the archive in memory)"
  const wanted = resolve(dir)
  // The directory itself, or the nearest existing one above it, which must take the new one.
  for (let path = wanted; ; path = dirname(path)) {
    const stat = statOf(path)
    if (stat === undefined && dirname(path) !== path) continue
    const what = path === wanted ? path : `cannot be created: ${path}`
    if (stat === undefined || !stat.isDirectory()) return `${what} is not a directory`
    return isWritable(path) ? undefined : `${what} is not writable`
  }
}

export interface PgDataDirSetting {
  /** `PG_DATA_DIR` as given (checked), or none. */
  readonly dir: string | undefined
  /** `XDG_STATE_HOME`, where the default lies. */
  readonly stateHome: string | undefined
}

export const pgDataDirSetting: Config.Config<PgDataDirSetting> = Config.all({
  dir: Config.option(checkedString("PG_DATA_DIR", dataDirProblem)).pipe(Config.map(Option.getOrUndefined)),
  stateHome: Config.option(Config.String("XDG_STATE_HOME")).pipe(Config.map(Option.getOrUndefined))
})

/** A key prefix as one path segment: no `/`, and never `.` or `..`. */
const pathSegment = (prefix: string) => encodeURIComponent(prefix).replace(/^\.{1,2}$/, (dots) => "%2E".repeat(dots.length))

/**
 * The embedded archive's directory: `PG_DATA_DIR`, else one per island (key prefix) under the
 * user's state directory, `$XDG_STATE_HOME/microdcs/{prefix}/execution-log` (XDG_STATE_HOME
 * defaulting to `~/.local/state`), so the archive outlives the process and a restart finds it.
 */
export const resolvePgDataDir = (setting: PgDataDirSetting, prefix: string): string =>
  setting.dir ?? join(setting.stateHome?.startsWith("/") ? setting.stateHome : join(homedir(), ".local", "state"), "microdcs", pathSegment(prefix), "execution-log")
