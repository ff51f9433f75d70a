import type { LuaFolder } from "@microdcs/lua-scripts"
import { luaFile } from "./LuaFiles.js"

/** The journal's script folder, for `defineScript({ file, dir: journalLua })`. */
export const journalLua: LuaFolder = { name: "@microdcs/journal/lua", read: luaFile }
