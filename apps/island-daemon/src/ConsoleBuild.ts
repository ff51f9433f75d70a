/**
 * `pnpm build` of the daemon, after tsup: bundles the console's browser files into
 * `console-dist/`, which a daemon started from `dist/` serves.
 */
import { mkdir, writeFile } from "node:fs/promises"
import { buildConsoleAssets, builtDirectory } from "./ConsoleAssets.js"

const assets = await buildConsoleAssets()
await mkdir(builtDirectory, { recursive: true })
await writeFile(new URL("app.js", builtDirectory), assets.script)
await writeFile(new URL("app.css", builtDirectory), assets.stylesheet)
console.log(`console assets: ${builtDirectory.pathname} (app.js ${assets.script.length} bytes)`)
