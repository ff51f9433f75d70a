import { readFileSync } from "node:fs"

/**
 * The text of one file under this package's `lua/` folder. From source it reads the file; every
 * build (this package's tsup build, a bundler that bundles it from source, such as the admin
 * CLI's) replaces this module with one carrying the files inline (`embedLuaPlugin` of
 * `@microdcs/lua-scripts/build`), so no `lua/` folder is needed beside a bundle.
 */
export const luaFile = (path: string): string => readFileSync(new URL(`../lua/${path}`, import.meta.url), "utf8")
