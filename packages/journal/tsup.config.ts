import { defineConfig } from "tsup"
import { embedLuaPlugin } from "@microdcs/lua-scripts/build"

// The journal's Lua files (and the core library it includes) are embedded into the built module.
export default defineConfig({
  entry: { index: "src/index.ts" },
  format: ["esm"],
  dts: true,
  sourcemap: true,
  clean: true,
  tsconfig: "../../tsconfig.build.json",
  esbuildPlugins: [embedLuaPlugin]
})
