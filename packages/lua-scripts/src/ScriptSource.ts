import { readFileSync } from "node:fs"
import { posix } from "node:path"
import { luaFile } from "./LuaFiles.js"

/**
 * Where a script's text comes from, and how its `-- @include` lines are spliced.
 *
 * - `-- @include lib/x.lua` (any path not starting with `.`) names a file of the core library,
 *   this package's `lua/` folder, from whichever folder the including script lives in: an
 *   extension's script shares `lib/check-types.lua` and the rest with the core scripts.
 * - `-- @include ./x.lua` or `../x.lua` is relative to the including file, so an extension can
 *   keep a library of its own beside its scripts.
 *
 * Includes nest; a file included twice on one path is spliced once (the first time), and an
 * include cycle is refused when the script is defined.
 */

/**
 * An extension's script folder held in memory: its `src/LuaFiles.ts` (`luaFile(path)`), which
 * reads `../lua/` from source and which `embedLuaPlugin` replaces with the files inline in a
 * build or bundle, so the extension's scripts need no folder on disk beside the bundle.
 */
export interface LuaFolder {
  /** Names the folder in include errors, e.g. the package name. */
  readonly name: string
  /** The text of a file by its path in the folder (`put-widget-4.lua`, `lib/x.lua`). */
  readonly read: (path: string) => string
}

/** A file as the splicer knows it: a path in the core folder, a file URL of an extension's folder, or a path in a {@link LuaFolder}. */
type Location = { readonly core: string } | { readonly url: URL } | { readonly folder: LuaFolder; readonly path: string }

const includeLine = /^--\s*@include\s+(\S+)\s*$/gm

const read = (at: Location): string => ("core" in at ? luaFile(at.core) : "url" in at ? readFileSync(at.url, "utf8") : at.folder.read(at.path))

const nameOf = (at: Location): string => ("core" in at ? at.core : "url" in at ? at.url.pathname : `${at.folder.name}/${at.path}`)

const resolveInclude = (from: Location, path: string): Location => {
  if (!path.startsWith(".")) return { core: posix.normalize(path) }
  if ("core" in from) return { core: posix.join(posix.dirname(from.core), path) }
  return "url" in from ? { url: new URL(path, from.url) } : { folder: from.folder, path: posix.join(posix.dirname(from.path), path) }
}

export class ScriptIncludeError extends Error {
  constructor(message: string) {
    super(message)
    this.name = "ScriptIncludeError"
  }
}

const splice = (at: Location, chain: ReadonlyArray<string>, seen: Set<string>): string => {
  const name = nameOf(at)
  return read(at).replace(includeLine, (_, path: string) => {
    const target = resolveInclude(at, path)
    const targetName = nameOf(target)
    if (targetName === name || chain.includes(targetName)) {
      throw new ScriptIncludeError(`include cycle: ${[...chain, name, targetName].join(" -> ")}`)
    }
    if (seen.has(targetName)) return `-- (${path} included above)`
    seen.add(targetName)
    return splice(target, [...chain, name], seen).trimEnd()
  })
}

/** The folder of an extension's scripts: a `file:` URL (`new URL("../lua/", import.meta.url)`), a path, or a {@link LuaFolder} (embeddable). */
export type ScriptDir = URL | string | LuaFolder

const isLuaFolder = (dir: ScriptDir): dir is LuaFolder => typeof dir === "object" && !(dir instanceof URL)

const asFolderUrl = (dir: URL | string): URL => {
  const url = typeof dir === "string" ? new URL(`file://${posix.resolve(dir)}`) : dir
  return url.href.endsWith("/") ? url : new URL(`${url.href}/`)
}

/** The source of `file` with every include spliced in: from `dir` when given, else from the core folder. */
export const loadScriptSource = (file: string, dir?: ScriptDir): string => {
  const at: Location =
    dir === undefined ? { core: file } : isLuaFolder(dir) ? { folder: dir, path: posix.normalize(file) } : { url: new URL(file, asFolderUrl(dir)) }
  return splice(at, [], new Set())
}

/** A core script's source, includes spliced (kept for the header tests and tools). */
export const readLua = (file: string): string => loadScriptSource(file)
