import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"

/** The part of esbuild's plugin API this plugin uses (tsup and esbuild both accept it). */
export interface EmbedLuaBuild {
  onLoad(
    options: { readonly filter: RegExp },
    callback: (args: { readonly path: string }) => { contents: string; loader: "ts"; watchFiles: Array<string> }
  ): void
}

/** This package's `src/LuaFiles.ts`, and an extension's of the same name and shape (its `LuaFolder`). */
const luaFilesModule = /[\\/]src[\\/]LuaFiles\.ts$/

const luaFilesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".lua"))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort()

/**
 * Replaces `src/LuaFiles.ts` with a module that holds every `.lua` file of the package's `lua/`
 * folder inline, at build time: this package's, and an extension's that keeps its scripts the
 * same way (a `src/LuaFiles.ts` exporting `luaFile(path)`, read through a `LuaFolder`). The
 * lua-scripts build uses it, and so must any bundler that bundles such a package from source.
 */
export const embedLuaPlugin = {
  name: "microdcs-embed-lua",
  setup(build: EmbedLuaBuild): void {
    build.onLoad({ filter: luaFilesModule }, (args) => {
      const luaDir = resolve(dirname(args.path), "..", "lua")
      const files = luaFilesUnder(luaDir)
      const table: Record<string, string> = {}
      for (const file of files) table[relative(luaDir, file).split(sep).join("/")] = readFileSync(file, "utf8")
      const contents = `const files: Record<string, string> = ${JSON.stringify(table)}
export const luaFile = (path: string): string => {
  const text = files[path]
  if (text === undefined) throw new Error(\`no Lua file \${path} was embedded in this build\`)
  return text
}
`
      return { contents, loader: "ts", watchFiles: files }
    })
  }
}
