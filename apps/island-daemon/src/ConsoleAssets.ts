import { readFile } from "node:fs/promises"
import { Data, Effect } from "effect"

/**
 * The console's browser files: one script bundled with esbuild from `console/main.ts` and one
 * stylesheet. `pnpm build` writes them to `console-dist/` (next to `dist/`); a daemon run from
 * its sources (the demo, the tests, `pnpm start`) bundles them in memory on the first request
 * instead, so no separate build step is needed and they never go stale.
 */
export interface ConsoleAssets {
  readonly script: string
  readonly stylesheet: string
}

export class ConsoleAssetsUnavailable extends Data.TaggedError("ConsoleAssetsUnavailable")<{ readonly message: string }> {}

const packageRoot = new URL("../", import.meta.url)
const sourceEntry = new URL("console/main.ts", packageRoot)
const stylesheetSource = new URL("console/app.css", packageRoot)
export const builtDirectory = new URL("console-dist/", packageRoot)

/** Bundles the console's sources (esbuild is a build-time dependency: absent in an installed daemon). */
export const buildConsoleAssets = async (): Promise<ConsoleAssets> => {
  // Named through a variable so the daemon's own bundle (tsup) leaves esbuild out.
  const bundler = "esbuild"
  const esbuild = (await import(bundler)) as typeof import("esbuild")
  const result = await esbuild.build({
    entryPoints: [sourceEntry.pathname],
    bundle: true,
    format: "iife",
    target: "es2020",
    minify: true,
    write: false,
    logLevel: "silent"
  })
  const script = result.outputFiles[0]?.text
  if (script === undefined) throw new Error("esbuild produced no output")
  return { script, stylesheet: await readFile(stylesheetSource, "utf8") }
}

const readBuilt = async (): Promise<ConsoleAssets> => ({
  script: await readFile(new URL("app.js", builtDirectory), "utf8"),
  stylesheet: await readFile(new URL("app.css", builtDirectory), "utf8")
})

/** A daemon started from `dist/` serves the built files; one started from `src/` builds its own. */
const fromBuild = import.meta.url.includes("/dist/")

let loaded: Promise<ConsoleAssets> | undefined

/** The assets, read or built once per process (a failure is not kept: the next request tries again). */
export const consoleAssets: Effect.Effect<ConsoleAssets, ConsoleAssetsUnavailable> = Effect.tryPromise({
  try: () => {
    if (loaded === undefined) {
      const attempt = fromBuild ? readBuilt().catch(() => buildConsoleAssets()) : buildConsoleAssets().catch(() => readBuilt())
      loaded = attempt
      attempt.catch(() => {
        if (loaded === attempt) loaded = undefined
      })
    }
    return loaded
  },
  catch: (error) => new ConsoleAssetsUnavailable({ message: `the console's files are not built (pnpm build): ${error instanceof Error ? error.message : String(error)}` })
})
