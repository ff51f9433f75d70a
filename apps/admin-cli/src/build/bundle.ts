import { build } from "esbuild"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { embedLuaPlugin } from "@microdcs/lua-scripts/build"

/**
 * Bundles the CLI into one ES module: the published `bin`, and what the tests run. One file
 * starts in a fraction of the time that resolving a few thousand modules through a loader
 * takes, which matters for an operator's tool and for a test suite that starts it dozens of
 * times. The workspace packages are bundled from source (the `source` condition), with the Lua
 * scripts embedded by the lua-scripts plugin, so the bundle is one file: `dist/microdcs-admin.mjs`
 * under `root`.
 */
export const bundle = async (root: string): Promise<string> => {
  const outfile = join(root, "dist", "microdcs-admin.mjs")
  await build({
    entryPoints: [fileURLToPath(new URL("../main.ts", import.meta.url))],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    conditions: ["source"],
    plugins: [embedLuaPlugin],
    // The journal's LZ4 binding is a native addon: copied beside the bundle, loaded by the bundle's require().
    loader: { ".node": "copy" },
    logLevel: "warning",
    banner: {
      // Bundled CommonJS dependencies (iovalkey) call require(); an ES module has none.
      js: '#!/usr/bin/env node\nimport { createRequire as __createRequire } from "node:module";\nconst require = __createRequire(import.meta.url);'
    }
  })
  return outfile
}

// `pnpm build` runs this file: the bundle for the `bin` of this package.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = await bundle(fileURLToPath(new URL("../..", import.meta.url)))
  console.log(`bundled ${out}`)
}
