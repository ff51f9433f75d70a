import { defineConfig } from "tsup"
import { embedLuaPlugin } from "./src/build/embedLua.js"

// The Lua sources are embedded into the built module, so the package runs without its lua/ folder.
export default defineConfig({
  entry: { index: "src/index.ts", "build/embedLua": "src/build/embedLua.ts" },
  format: ["esm"],
  dts: true,
  sourcemap: true,
  clean: true,
  tsconfig: "../../tsconfig.build.json",
  esbuildPlugins: [embedLuaPlugin]
})
