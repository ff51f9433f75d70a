import { chmodSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { isBuiltin } from "node:module"
import { build, type Metafile } from "esbuild"
import { embedLuaPlugin } from "@microdcs/lua-scripts/build"
import { externalsPlugin, type Manifest, packageOf, WORKSPACE_SCOPE } from "./Externals.js"

/** One output file of an app: its entry module and where the bundle goes. */
export interface AppEntry {
  /** The entry module (a path). */
  readonly source: string
  /** The bundle's path. */
  readonly outfile: string
  /** The first line of the bundle: a `shebang(...)` for a bin. */
  readonly shebang?: string
}

export interface AppBundleOptions {
  /** The app's folder: its package.json says which third-party packages the bundles may import. */
  readonly appRoot: string
  readonly entries: ReadonlyArray<AppEntry>
}

/** The bundles could not be made; `problems` lists every one. */
export class AppBundleFailed extends Error {
  constructor(readonly problems: ReadonlyArray<string>) {
    super(`the app's bundle failed:\n  ${problems.join("\n  ")}`)
    this.name = "AppBundleFailed"
  }
}

/**
 * A bin's first line: `#!/usr/bin/env node`, or with Node options through `env -S` (GNU coreutils
 * 8.30 or later, macOS, the BSDs; npm's Windows shims read it too).
 */
export const shebang = (nodeOptions: ReadonlyArray<string> = []): string =>
  nodeOptions.length === 0 ? "#!/usr/bin/env node" : `#!/usr/bin/env -S node ${nodeOptions.join(" ")}`

const readManifest = (appRoot: string): Manifest => JSON.parse(readFileSync(join(appRoot, "package.json"), "utf8")) as Manifest

/** The app's dependencies that are workspace packages: bundled, so devDependencies. */
const workspaceDependencies = (app: Manifest): ReadonlyArray<string> =>
  Object.keys(app.dependencies ?? {})
    .filter((name) => name.startsWith(WORKSPACE_SCOPE))
    .map((name) => `${name} is bundled: it belongs in ${app.name}'s devDependencies, not its dependencies`)

/** The app's third-party dependencies that no bundle imports (known only once every bundle is built). */
const unusedDependencies = (app: Manifest, used: ReadonlySet<string>): ReadonlyArray<string> =>
  Object.keys(app.dependencies ?? {})
    .filter((name) => !name.startsWith(WORKSPACE_SCOPE) && !used.has(name))
    .map((name) => `${name} is among ${app.name}'s dependencies but no bundle imports it (remove it)`)

/** A shebang given twice: esbuild keeps the entry's own `#!` line first, before the banner. */
const hashbangProblems = (entries: ReadonlyArray<AppEntry>): ReadonlyArray<string> =>
  entries.flatMap((e) =>
    e.shebang !== undefined && readFileSync(e.source, "utf8").startsWith("#!") ? [`${e.source} starts with a #! line of its own: leave it to the entry's shebang`] : []
  )

/** The third-party packages a bundle still imports once esbuild has dropped the code nothing uses. */
const recordImports = (metafile: Metafile, used: Set<string>): void => {
  for (const output of Object.values(metafile.outputs)) {
    for (const imported of output.imports) if (imported.external && !isBuiltin(imported.path)) used.add(packageOf(imported.path))
  }
}

/** esbuild's failure as the list of its messages (a plugin's refusal among them). */
const buildProblems = (error: unknown): ReadonlyArray<string> => {
  const errors = (error as { errors?: ReadonlyArray<{ text: string }> }).errors
  return errors !== undefined && errors.length > 0 ? errors.map((e) => e.text) : [String(error)]
}

/**
 * Bundles an app's entries, each into one ES module: the workspace packages from their sources
 * (the `source` condition) with their Lua scripts inline, every third-party package left as an
 * import that the app's `dependencies` satisfy once installed. Fails, listing every problem, when a
 * bundle imports a package the app does not declare (or under another range than the workspace
 * package that imports it), when the app declares a dependency no bundle imports, or a workspace
 * package as a dependency. Returns the bundles' paths.
 */
export const bundleApp = async (options: AppBundleOptions): Promise<ReadonlyArray<string>> => {
  const app = readManifest(options.appRoot)
  const used = new Set<string>()
  const hashbangs = hashbangProblems(options.entries)
  if (hashbangs.length > 0) throw new AppBundleFailed(hashbangs)
  const problems: Array<string> = []
  for (const entry of options.entries) {
    await build({
      entryPoints: [entry.source],
      outfile: entry.outfile,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      conditions: ["source"],
      plugins: [embedLuaPlugin, externalsPlugin(app)],
      sourcemap: "linked",
      sourcesContent: false,
      logLevel: "silent",
      ...(entry.shebang !== undefined ? { banner: { js: entry.shebang } } : {}),
      metafile: true
    }).then(
      (result) => recordImports(result.metafile, used),
      (error: unknown) => void problems.push(...buildProblems(error))
    )
  }
  // A bin runs by its shebang: executable, as an installer leaves it.
  for (const entry of options.entries) if (entry.shebang !== undefined && problems.length === 0) chmodSync(entry.outfile, 0o755)
  if (problems.length === 0) problems.push(...unusedDependencies(app, used))
  problems.push(...workspaceDependencies(app))
  if (problems.length > 0) throw new AppBundleFailed(problems)
  return options.entries.map((e) => e.outfile)
}
