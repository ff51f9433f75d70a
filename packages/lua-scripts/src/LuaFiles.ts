import { readFileSync } from "node:fs"

/**
 * The text of one file under the package's `lua/` folder, by its path there (`put-joborder-7.lua`,
 * `lib/check-version.lua`). Run from source, it reads the file, so the `.lua` files stay the one
 * source of truth. Every build replaces this module with one that carries the files inline
 * (`embedLuaPlugin`), so a built or bundled service needs no `lua/` folder on disk.
 */
export const luaFile = (path: string): string => readFileSync(new URL(`../lua/${path}`, import.meta.url), "utf8")
