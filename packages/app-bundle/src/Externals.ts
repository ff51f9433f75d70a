import { readFileSync } from "node:fs"
import { isBuiltin } from "node:module"
import { dirname, join, relative } from "node:path"
import type { Plugin } from "esbuild"

/** The fields of a package.json this plugin reads. */
export interface Manifest {
  readonly name: string
  readonly dependencies?: Readonly<Record<string, string>>
}

/** The workspace's own packages: bundled from source, never left to the installer. */
export const WORKSPACE_SCOPE = "@microdcs/"

/** The package a bare specifier names: `effect/Schema` → `effect`, `@effect/sql-pg/PgClient` → `@effect/sql-pg`. */
export const packageOf = (specifier: string): string => {
  const parts = specifier.split("/")
  return (specifier.startsWith("@") ? parts.slice(0, 2) : parts.slice(0, 1)).join("/")
}

/** The package.json of the package a file belongs to (the nearest one above it), read once per folder. */
const manifestFinder = () => {
  const found = new Map<string, Manifest | undefined>()
  const find = (dir: string): Manifest | undefined => {
    if (found.has(dir)) return found.get(dir)
    let manifest: Manifest | undefined
    try {
      manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest
    } catch {
      manifest = dirname(dir) === dir ? undefined : find(dirname(dir))
    }
    found.set(dir, manifest)
    return manifest
  }
  return (file: string) => find(dirname(file))
}

/**
 * Why a third-party import cannot be left to the app's dependencies: the app does not declare the
 * package, or declares another range than the bundled workspace package that imports it (the
 * installer would give that package a version it was not built against).
 */
const importProblem = (app: Manifest, name: string, importer: Manifest | undefined): string | undefined => {
  const declared = app.dependencies?.[name]
  if (declared === undefined) return `${name} is not among ${app.name}'s dependencies (add it there)`
  const wanted = importer !== undefined && importer.name !== app.name ? importer.dependencies?.[name] : undefined
  if (wanted !== undefined && wanted !== declared) return `${app.name} declares ${name}@${declared}, ${importer?.name} depends on ${name}@${wanted} (use the same range)`
  return undefined
}

/**
 * An esbuild plugin that keeps every third-party package out of the bundle: Node's built-ins and
 * the app's `dependencies` stay imports, which the installer satisfies; the workspace's packages
 * (`@microdcs/*`) are resolved and bundled as usual. An import of a package the app does not
 * declare fails the build, every such import listed (see `importProblem`).
 */
export const externalsPlugin = (app: Manifest): Plugin => ({
  name: "microdcs-app-externals",
  setup(build) {
    const manifestOf = manifestFinder()
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (isBuiltin(args.path)) return { path: args.path, external: true }
      if (args.path.startsWith(WORKSPACE_SCOPE)) return undefined
      const name = packageOf(args.path)
      const problem = importProblem(app, name, manifestOf(args.importer))
      const where = relative(process.cwd(), args.importer)
      if (problem !== undefined) return { errors: [{ text: `${args.path} (imported by ${where}): ${problem}` }] }
      return { path: args.path, external: true }
    })
  }
})
