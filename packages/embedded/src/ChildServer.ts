import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "./FreePort.js"

/** A server process started for tests (or the embedded daemon) on a loopback port. */
export interface ChildServer {
  readonly host: string
  readonly port: number
  readonly dataDir: string
  readonly process: ChildProcess
  /** Stops the process (SIGTERM, then SIGKILL after 3 s) and removes its data dir. */
  readonly stop: () => Promise<void>
}

export interface ChildServerSpec {
  readonly name: string
  readonly bin: string
  /** Arguments for a given port and data dir. */
  readonly args: (port: number, dataDir: string) => ReadonlyArray<string>
  /** Resolves true once the server answers on the port. */
  readonly probe: (host: string, port: number) => Promise<boolean>
  readonly startTimeoutMs?: number
  /** A fixed port (to restart a server where its clients expect it); default: a free one. */
  readonly port?: number
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Children run in their own process group, so a Ctrl-C in a terminal (which signals the whole
 * foreground group) does not kill them under a parent that is still shutting down gracefully.
 * In exchange the parent must stop them itself: `stop()` does, and this hook kills whatever is
 * left when the parent exits any other way.
 */
const live = new Set<ChildProcess>()
let exitHook = false
const track = (child: ChildProcess) => {
  live.add(child)
  child.once("exit", () => live.delete(child))
  if (!exitHook) {
    exitHook = true
    process.once("exit", () => {
      for (const c of live) c.kill("SIGKILL")
    })
  }
}

const waitForExit = (child: ChildProcess, ms: number): Promise<boolean> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(true)
    const timer = setTimeout(() => resolve(false), ms)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve(true)
    })
  })

const startOnce = async (spec: ChildServerSpec): Promise<ChildServer | undefined> => {
  const host = "127.0.0.1"
  const port = spec.port ?? (await freePort())
  const dataDir = mkdtempSync(join(tmpdir(), `microdcs-${spec.name}-`))
  const child = spawn(spec.bin, [...spec.args(port, dataDir)], { stdio: ["ignore", "pipe", "pipe"], detached: true })
  track(child)
  let output = ""
  const collect = (chunk: Buffer) => {
    if (output.length < 8192) output += chunk.toString()
  }
  child.stdout?.on("data", collect)
  child.stderr?.on("data", collect)
  const spawnError = new Promise<Error>((resolve) => child.once("error", resolve))

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM")
      if (!(await waitForExit(child, 3000))) {
        child.kill("SIGKILL")
        await waitForExit(child, 3000)
      }
    }
    rmSync(dataDir, { recursive: true, force: true })
  }

  const deadline = Date.now() + (spec.startTimeoutMs ?? 10_000)
  while (Date.now() < deadline) {
    const failed = await Promise.race([spawnError, sleep(0).then(() => undefined)])
    if (failed) {
      rmSync(dataDir, { recursive: true, force: true })
      throw new Error(`cannot start ${spec.bin}: ${failed.message}`)
    }
    if (child.exitCode !== null) {
      rmSync(dataDir, { recursive: true, force: true })
      // Most likely the port was taken between freePort() and bind: the caller retries.
      if (/address already in use/i.test(output)) return undefined
      throw new Error(`${spec.bin} exited with code ${child.exitCode}: ${output.trim()}`)
    }
    if (await spec.probe(host, port)) return { host, port, dataDir, process: child, stop }
    await sleep(25)
  }
  await stop()
  throw new Error(`${spec.bin} did not accept connections on ${host}:${port} in time: ${output.trim()}`)
}

/** Starts a child server on a free port, retrying when the port was taken in between. */
export const startChildServer = async (spec: ChildServerSpec): Promise<ChildServer> => {
  for (let attempt = 0; attempt < 5; attempt++) {
    const server = await startOnce(spec)
    if (server) return server
    if (spec.port !== undefined) break
  }
  throw new Error(`could not find a free port for ${spec.name}`)
}
