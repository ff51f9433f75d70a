import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { promisify } from "node:util"

/** A workspace package as an install gives it: its published files and its production dependencies, nothing else. */
export interface DeployedPackage {
  /** The folder: the package's files and a `node_modules` with its production dependencies. */
  readonly dir: string
  /** The package's own files there (paths from `dir`, sorted, `node_modules` and pnpm's own files left out): what `pnpm pack` publishes. */
  readonly files: ReadonlyArray<string>
  readonly remove: () => void
}

/** What `pnpm deploy` writes beside the package's files for its own install. */
const DEPLOY_FILES = new Set(["pnpm-lock.yaml", "pnpm-workspace.yaml"])

const filesUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split("\\").join("/"))
    .filter((path) => !path.startsWith("node_modules/") && !DEPLOY_FILES.has(path))
    .sort()

/** Runs pnpm (from PATH, as CI and the quick start put it there) in the workspace root; its output on failure. */
const pnpm = async (root: string, args: ReadonlyArray<string>): Promise<void> => {
  await promisify(execFile)("pnpm", [...args], { cwd: root, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 }).catch((error: unknown) => {
    const failed = error as { stdout?: string; stderr?: string; message?: string }
    throw new Error(`pnpm ${args.join(" ")} failed: ${failed.message}\n${failed.stdout ?? ""}${failed.stderr ?? ""}`)
  })
}

/**
 * Builds the workspace package `name` (its `build` script, as `pnpm build` does) and deploys it into
 * a new temporary folder with `pnpm deploy --prod --offline`: the files it publishes (its `files`,
 * as `pnpm pack` takes them), its package.json, and its production dependencies from the local pnpm
 * store at the lockfile's versions. No network, no workspace package unless it is a production
 * dependency: what `npm install` of the published package would give, to run its `bin` from.
 */
export const deployPackage = async (root: string, name: string): Promise<DeployedPackage> => {
  await pnpm(root, ["--filter", name, "run", "build"])
  const dir = mkdtempSync(join(tmpdir(), "microdcs-deploy-"))
  try {
    await pnpm(root, ["--filter", name, "deploy", "--prod", "--offline", dir])
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  return { dir, files: filesUnder(dir), remove: () => rmSync(dir, { recursive: true, force: true }) }
}
