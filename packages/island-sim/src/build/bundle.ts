import { build } from "esbuild"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * Bundles the `island-sim` command into one ES module, `dist/island-sim.mjs` under `root`: the
 * published `bin`, with every dependency inside (effect, mqtt, the workspace packages from
 * source), so it starts at once and needs nothing installed beside it.
 */
export const bundle = async (root: string): Promise<string> => {
  const outfile = join(root, "dist", "island-sim.mjs")
  await build({
    entryPoints: [fileURLToPath(new URL("../cli/main.ts", import.meta.url))],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    conditions: ["source"],
    logLevel: "warning",
    banner: {
      // Bundled CommonJS dependencies (mqtt's) call require(); an ES module has none.
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
