import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"

/**
 * The daemon (or the demo) as a real child process, the way an operator runs it:
 * `node --import tsx/esm --conditions=source apps/island-daemon/src/<script>` from the repository
 * root (or an installed `bin`, see `Launch`), with an explicit environment (nothing inherited but
 * PATH), stdout and stderr captured. Not a test file itself.
 */

const ROOT = fileURLToPath(new URL("../../../", import.meta.url))

export interface DaemonExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** Milliseconds from spawn to exit. */
  readonly afterMs: number
}

export interface HttpReply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: () => unknown
}

export interface ScriptProcess {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves when the process has exited. */
  readonly exited: Promise<DaemonExit>
  /** The exit, or undefined when it is still running. */
  readonly exit: () => DaemonExit | undefined
  /** Sends a signal (if still running) and waits for the exit, SIGKILL after `timeoutMs`. */
  readonly stop: (signal?: NodeJS.Signals, timeoutMs?: number) => Promise<DaemonExit>
}

export interface DaemonProcess extends ScriptProcess {
  readonly instanceId: string
  /** The HTTP port it listens on (read from its "http server listening" log line). */
  readonly port: number
  /** The structured log lines on stdout. */
  readonly logs: () => ReadonlyArray<{ readonly message?: string; readonly logLevel?: string; readonly annotations?: Record<string, unknown> }>
  /** GET on the daemon's HTTP server, with extra request headers if given. */
  readonly get: (path: string, headers?: Readonly<Record<string, string>>) => Promise<HttpReply>
  /** A request of any method (a body for the ones that carry one: `body`, else `{}`) on the daemon's HTTP server. */
  readonly request: (method: string, path: string, headers?: Readonly<Record<string, string>>, body?: string) => Promise<HttpReply>
  /** Waits until `/readyz` answers 200; fails early if the process exits. */
  readonly waitReady: (timeoutMs?: number) => Promise<void>
}

// Children still running when the test process exits are killed, so a failed test leaves none behind.
const live = new Set<ChildProcess>()
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL")
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** How a daemon process is started: the sources under tsx (default), or an installed `bin`. */
export interface Launch {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
}

/** `apps/island-daemon/src/{script}` under tsx, from the repository root. */
const sourceLaunch = (script: string): Launch => ({
  command: process.execPath,
  // `--no-memory-protection-keys`: as the daemon's scripts run it (see its README, "Embedded PostgreSQL").
  args: ["--no-memory-protection-keys", "--import", "tsx/esm", "--conditions=source", `apps/island-daemon/src/${script}`],
  cwd: ROOT
})

/** Starts `apps/island-daemon/src/{script}` under tsx (or what `launch` says) with exactly `env` (plus PATH). */
export const spawnScript = (script: string, env: Readonly<Record<string, string>>, launch: Launch = sourceLaunch(script)): ScriptProcess => {
  const started = performance.now()
  const child = spawn(launch.command, [...launch.args], {
    cwd: launch.cwd,
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  live.add(child)
  let out = ""
  let err = ""
  child.stdout?.on("data", (chunk: Buffer) => void (out += chunk.toString()))
  child.stderr?.on("data", (chunk: Buffer) => void (err += chunk.toString()))
  let exit: DaemonExit | undefined
  const exited = new Promise<DaemonExit>((resolve) => {
    child.once("exit", (code, signal) => {
      live.delete(child)
      exit = { code, signal, afterMs: performance.now() - started }
      resolve(exit)
    })
  })
  const stop = async (signal: NodeJS.Signals = "SIGTERM", timeoutMs = 30_000) => {
    if (exit) return exit
    child.kill(signal)
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    const result = await exited
    clearTimeout(timer)
    return result
  }
  return { child, stdout: () => out, stderr: () => err, exited, exit: () => exit, stop }
}

const parseLogs = (text: string) =>
  text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as { message?: string; logLevel?: string; annotations?: Record<string, unknown> }]
      } catch {
        return []
      }
    })

/** The environment of one daemon of an island; `extra` adds or overrides variables. */
export const daemonEnv = (options: {
  readonly valkeyUrl: string
  readonly mqttUrl: string
  readonly prefix: string
  readonly instanceId: string
  readonly extra?: Readonly<Record<string, string>>
}): Record<string, string> => ({
  VALKEY_URL: options.valkeyUrl,
  MQTT_URL: options.mqttUrl,
  VALKEY_PREFIX: options.prefix,
  MQTT_TOPIC_PREFIX: options.prefix,
  ISLAND_INSTANCE_ID: options.instanceId,
  HTTP_HOST: "127.0.0.1",
  // 0: the OS picks a free port, which the daemon logs; no race with other test files.
  HTTP_PORT: "0",
  SFC_CLAIM_IDLE_MS: "1500",
  SFC_CLAIM_INTERVAL_MS: "500",
  SFC_FALLBACK_INTERVAL_MS: "200",
  SFC_SWEEP_INTERVAL_MS: "200",
  SHUTDOWN_GRACE_MS: "10000",
  LOG_LEVEL: "info",
  // Every role but the execution log's storage, whose embedded PGlite costs each daemon ~2 s and
  // ~800 MB; the tests of the storage role (and the demo) ask for it.
  ISLAND_ROLES: "-storage",
  // The index upgrade at start walks the island's documents in the background: tests that count
  // commands or compare the store before and after would see it. Its own test turns it on.
  INDEX_UPGRADE: "off",
  ...options.extra
})

const describe = (p: ScriptProcess) => `\n--- stderr ---\n${p.stderr().slice(-4000)}\n--- stdout (tail) ---\n${p.stdout().slice(-4000)}`

/**
 * Starts a daemon (from its sources, or as `launch` says) and resolves once its HTTP server
 * listens (it listens before it connects, so this does not wait for Valkey or the broker).
 */
export const spawnDaemon = async (env: Readonly<Record<string, string>>, timeoutMs = 30_000, launch?: Launch): Promise<DaemonProcess> => {
  const script = spawnScript("main.ts", env, launch)
  const logs = () => parseLogs(script.stdout())
  const deadline = Date.now() + timeoutMs
  let port: number | undefined
  while (port === undefined) {
    const listening = logs().find((l) => l.message === "http server listening")
    if (listening) port = Number(listening.annotations?.["port"])
    else if (script.exit()) throw new Error(`daemon exited before listening: ${JSON.stringify(script.exit())}${describe(script)}`)
    else if (Date.now() > deadline) {
      await script.stop("SIGKILL")
      throw new Error(`daemon did not listen within ${timeoutMs} ms${describe(script)}`)
    } else await sleep(25)
  }
  const base = `http://127.0.0.1:${port}`
  const request = async (method: string, path: string, headers: Readonly<Record<string, string>> = {}, sent = "{}"): Promise<HttpReply> => {
    const body = method === "GET" || method === "HEAD" ? {} : { body: sent }
    const response = await fetch(`${base}${path}`, { method, headers, ...body, signal: AbortSignal.timeout(10_000) })
    const text = await response.text()
    return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) as unknown }
  }
  const get = (path: string, headers: Readonly<Record<string, string>> = {}) => request("GET", path, headers)
  const waitReady = async (readyTimeoutMs = 30_000) => {
    const until = Date.now() + readyTimeoutMs
    let last = ""
    while (Date.now() < until) {
      if (script.exit()) throw new Error(`daemon exited while waiting for /readyz: ${JSON.stringify(script.exit())}${describe(script)}`)
      const reply = await get("/readyz").catch((error: unknown) => ({ status: 0, text: String(error) }))
      if (reply.status === 200) return
      last = `${reply.status} ${reply.text}`
      await sleep(50)
    }
    throw new Error(`daemon not ready within ${readyTimeoutMs} ms (last /readyz: ${last})${describe(script)}`)
  }
  return { ...script, instanceId: env["ISLAND_INSTANCE_ID"] ?? "", port, logs, get, request, waitReady }
}

/** A daemon for the current scope: started and ready; killed (SIGKILL) when the scope closes if still running. */
export const daemon = (env: Readonly<Record<string, string>>, options: { readonly ready?: boolean } = {}) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const d = await spawnDaemon(env)
      if (options.ready ?? true) await d.waitReady()
      return d
    }),
    (d) => Effect.promise(() => d.stop("SIGKILL"))
  )

/** Polls `check` (every 50 ms) until it returns something other than undefined; fails after `timeoutMs`. */
export const until = async <A>(what: string, check: () => Promise<A | undefined> | A | undefined, timeoutMs = 20_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms`)
    await sleep(50)
  }
}
