import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

/**
 * The island daemon as an operator runs it, for the start and soak figures: the built
 * `apps/island-daemon/dist/island-daemon.mjs` when there is one (`pnpm build`), else the sources under tsx
 * (`BENCH_DAEMON=src` forces them), with exactly `env` (plus PATH and HOME). Its structured log
 * tells the HTTP port; `get` asks it.
 */

const ROOT = fileURLToPath(new URL("../", import.meta.url))
const BUILT = "apps/island-daemon/dist/island-daemon.mjs"

export const daemonMode = (): "dist" | "src" => (process.env["BENCH_DAEMON"] !== "src" && existsSync(`${ROOT}${BUILT}`) ? "dist" : "src")

export interface DaemonRun {
  readonly child: ChildProcess
  readonly startedAt: number
  /** Resolves with the HTTP port once the daemon logged it. */
  readonly port: Promise<number>
  readonly get: (path: string) => Promise<{ readonly status: number; readonly body: string; readonly ms: number }>
  readonly stop: () => Promise<void>
}

export const runDaemon = (env: Readonly<Record<string, string>>): DaemonRun => {
  // `--no-memory-protection-keys`: as the bin's shebang and the daemon's scripts run it (its README, "Embedded PostgreSQL").
  const source = ["--import", "tsx/esm", "--conditions=source", "apps/island-daemon/src/main.ts"]
  const args = ["--no-memory-protection-keys", ...(daemonMode() === "dist" ? [BUILT] : source)]
  const startedAt = performance.now()
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: process.env["HOME"] ?? "/tmp", HTTP_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  let out = ""
  let err = ""
  child.stderr!.on("data", (chunk: Buffer) => void (err += chunk.toString()))
  const port = new Promise<number>((resolve, reject) => {
    // Read until the port is logged (an info line: keep LOG_LEVEL at info or below), then only drained.
    let found = false
    child.stdout!.on("data", (chunk: Buffer) => {
      if (found) return
      out += chunk.toString()
      const listening = /"message":"http server listening".*?"port":(\d+)/.exec(out)
      if (listening) {
        found = true
        out = ""
        resolve(Number(listening[1]))
      }
    })
    void exited.then(() => reject(new Error(`the daemon exited before listening: ${err.slice(-2000)}`)))
  })
  port.catch(() => undefined)
  const get = async (path: string) => {
    const started = performance.now()
    const reply = await fetch(`http://127.0.0.1:${await port}${path}`, { signal: AbortSignal.timeout(30_000) })
    const body = await reply.text()
    return { status: reply.status, body, ms: performance.now() - started }
  }
  const stop = async () => {
    if (child.exitCode !== null) return
    child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), 40_000)
    await exited
    clearTimeout(timer)
  }
  return { child, startedAt, port, get, stop }
}
