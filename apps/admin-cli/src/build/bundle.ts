import { rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { bundleApp, shebang } from "@microdcs/app-bundle"

/**
 * Bundles the CLI into one ES module: the published `bin`, and what the tests run. The workspace
 * packages are bundled from source (Lua scripts inline); the third-party packages stay imports,
 * which the package's `dependencies` satisfy once installed. One file of our own code spares
 * Node resolving a few hundred of our modules at every start, which matters for an operator's
 * tool and for a test suite that starts it dozens of times. The bundle is
 * `dist/microdcs-admin.mjs` under `root`, which must lie inside this package (a child of the
 * package's own folder or of its `node_modules`), so that Node finds those dependencies.
 */
export const bundle = async (root: string): Promise<string> => {
  const outfile = join(root, "dist", "microdcs-admin.mjs")
  await bundleApp({
    appRoot: fileURLToPath(new URL("../..", import.meta.url)),
    entries: [{ source: fileURLToPath(new URL("../main.ts", import.meta.url)), outfile, shebang: shebang() }]
  })
  return outfile
}

// `pnpm build` runs this file: the bundle for the `bin` of this package.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL("../..", import.meta.url))
  // A fresh dist/: the package ships the whole folder, so nothing of an earlier build may stay.
  rmSync(join(root, "dist"), { recursive: true, force: true })
  const out = await bundle(root)
  console.log(`bundled ${out}`)
}
