import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"

/** The part of esbuild's plugin API this plugin uses (tsup and esbuild both accept it). */
export interface EmbedLuaBuild {
  onLoad(
    options: { readonly filter: RegExp },
    callback: (args: { readonly path: string }) => { contents: string; loader: "ts"; watchFiles: Array<string> }
  ): void
}

const luaFilesModule = /lua-scripts[\\/]src[\\/]LuaFiles\.ts$/

const luaFilesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".lua"))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort()

/**
 * Replaces `LuaFiles.ts` with a module that holds every `.lua` file of the package inline, at build
 * time. The lua-scripts build uses it, and so must any bundler that bundles the package from source.
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
