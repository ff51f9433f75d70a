import { execFile, execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { bundle } from "../src/build/bundle.js"

/**
 * Runs the CLI as an operator's script would: a child process with stdin that is not a
 * terminal, output captured, exit code kept. The CLI is bundled once per test file (what
 * `pnpm build` ships); one child then starts in well under a second, so a file can afford
 * dozens of runs. `Connection.test.ts` runs the source through tsx as `pnpm start` does.
 * The bundle goes to a folder of its own under this package's `node_modules/.cache`, where Node
 * finds the third-party packages it imports (the package's dependencies), as in an install.
 */

export interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export interface Cli {
  /** The bundled entry point. */
  readonly main: string
  readonly run: (args: ReadonlyArray<string>, env?: Readonly<Record<string, string>>) => Promise<Run>
  /** Runs with `--json`, expects `code` (default 0) and parses stdout. */
  // The parsed JSON is what the assertions check; typing every shape here would only repeat them.
  // biome-ignore lint/suspicious/noExplicitAny: the caller names the shape it expects
  readonly json: <A = any>(args: ReadonlyArray<string>, code?: number) => Promise<A>
  readonly dispose: () => void
}

/** The environment of a child: this process's, without any VALKEY_* of the developer's shell. */
export const childEnv = (extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("VALKEY_")) env[k] = v
  return { ...env, NO_COLOR: "1", ...extra }
}

export const exec = (command: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, cwd?: string): Promise<Run> =>
  new Promise((resolve) => {
    const options = { env, timeout: 20_000, maxBuffer: 16 * 1024 * 1024, ...(cwd !== undefined ? { cwd } : {}) }
    const child = execFile(command, [...args], options, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : -1) : 0
      resolve({ code, stdout, stderr })
    })
    child.stdin?.end()
  })

const bundles = fileURLToPath(new URL("../node_modules/.cache/microdcs-admin-test/", import.meta.url))

export const makeCli = async (url: string, prefix: string): Promise<Cli> => {
  mkdirSync(bundles, { recursive: true })
  const root = mkdtempSync(bundles)
  const main = await bundle(root)
  const base = { VALKEY_URL: url, VALKEY_PREFIX: prefix }
  const run = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}) =>
    exec(process.execPath, [main, ...args], childEnv({ ...base, ...env }))
  const json = async (args: ReadonlyArray<string>, code = 0) => {
    const result = await run([...args, "--json"])
    if (result.code !== code) {
      throw new Error(`exit ${result.code}, expected ${code}: ${args.join(" ")}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`)
    }
    return JSON.parse(result.stdout)
  }
  return { main, run, json, dispose: () => rmSync(root, { recursive: true, force: true }) }
}

/** Whether util-linux `script` is here, to run the CLI on a pseudo-terminal. */
export const hasScript = (() => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()
