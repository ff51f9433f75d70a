import { rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { bundleApp, shebang } from "@microdcs/app-bundle"

/**
 * Bundles the daemon for its `bin`: `dist/island-daemon.mjs`, one ES module holding the workspace
 * packages (from source, Lua scripts inline), with the third-party packages left to the package's
 * `dependencies`. Its shebang runs Node with `--no-memory-protection-keys`, as every run that may
 * start the embedded PostgreSQL must (README, "Embedded PostgreSQL"). Beside it,
 * `dist/EmbeddedPostgresWorker.js`: the embedded PostgreSQL's thread, which the execution log
 * starts from the file next to its module. `pnpm build` runs this file; the tests call `bundle`.
 */

/** The daemon's bin, as a path under the package root. */
export const BIN = "dist/island-daemon.mjs"

/** The execution log's worker module (not an export of the package: its own thread's entry), through the app's link to it. */
const embeddedPostgresWorker = fileURLToPath(new URL("../../node_modules/@microdcs/execution-log/src/EmbeddedPostgresWorker.ts", import.meta.url))

export const bundle = (root: string): Promise<ReadonlyArray<string>> =>
  bundleApp({
    appRoot: fileURLToPath(new URL("../..", import.meta.url)),
    entries: [
      { source: fileURLToPath(new URL("../main.ts", import.meta.url)), outfile: join(root, BIN), shebang: shebang(["--no-memory-protection-keys"]) },
      { source: embeddedPostgresWorker, outfile: join(root, "dist", "EmbeddedPostgresWorker.js") }
    ]
  })

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL("../..", import.meta.url))
  // A fresh dist/: the package ships the whole folder, so nothing of an earlier build may stay.
  rmSync(join(root, "dist"), { recursive: true, force: true })
  const files = await bundle(root)
  console.log(`bundled ${files.join(", ")}`)
}
