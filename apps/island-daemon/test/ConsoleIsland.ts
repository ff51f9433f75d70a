import { Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import { afterAll, beforeAll, inject } from "vitest"
import { storeLayer } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { type Browser, CHROMIUM, hasChromium, launchBrowser } from "./BrowserKit.js"
import { writeTokenFile } from "./ConsoleActionKit.js"
import { daemonEnv, type DaemonProcess, spawnDaemon } from "./DaemonProcess.js"

/**
 * The console tests' island: a broker, a daemon (with the token file of ConsoleActionKit or
 * none), a store runtime on the file's own prefix with a scope that lives until the end, and
 * chromium; started before the file's own `beforeAll` (hooks run in order) and torn down after it.
 */

export type IslandServices = Layer.Success<ReturnType<typeof storeLayer>> | Scope.Scope

export interface ConsoleIslandOptions {
  /** The key prefix's stem and the daemon's instance id (unless `instanceId` names it). */
  readonly name: string
  readonly instanceId?: string
  /** The file's name in the warning when chromium is missing. */
  readonly file: string
  /** Whether the daemon reads the operator and viewer tokens. */
  readonly tokens?: boolean
  readonly timezoneId?: string
  /** Without chromium, whether the island still starts (for the file's API tests). */
  readonly withoutBrowser?: boolean
  readonly stopSignal?: NodeJS.Signals
}

export interface ConsoleIsland {
  readonly prefix: string
  readonly broker: MosquittoServer
  readonly island: DaemonProcess
  readonly browser: Browser
  readonly base: () => string
  /** Runs `effect` on the store with the file's scope. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, IslandServices>) => Promise<A>
}

export const consoleIsland = (options: ConsoleIslandOptions): ConsoleIsland => {
  if (!hasChromium) console.warn(`${options.file}: browser tests skipped, ${CHROMIUM} is not installed (apt-get install chromium)`)
  const prefix = randomPrefix(options.name)
  const runtime = ManagedRuntime.make(Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix })))
  let broker: MosquittoServer | undefined
  let island: DaemonProcess | undefined
  let browser: Browser | undefined
  let scope: Scope.Closeable | undefined
  const base = () => `http://127.0.0.1:${island!.port}`
  const run = <A, E>(effect: Effect.Effect<A, E, IslandServices>) =>
    runtime.runPromise(Effect.provideService(effect, Scope.Scope, scope!) as Effect.Effect<A, E, never>)
  beforeAll(async () => {
    if (!hasChromium && options.withoutBrowser !== true) return
    broker = await startMosquitto()
    scope = await Effect.runPromise(Scope.make())
    const extra = options.tokens === true ? { HTTP_TOKEN_FILE: writeTokenFile() } : undefined
    island = await spawnDaemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: options.instanceId ?? options.name, ...(extra === undefined ? {} : { extra }) }))
    await island.waitReady()
    if (hasChromium) browser = await launchBrowser(base, options.timezoneId === undefined ? {} : { timezoneId: options.timezoneId })
  }, 90_000)
  afterAll(async () => {
    await browser?.close()
    if (scope) await Effect.runPromise(Scope.close(scope, Exit.void))
    await runtime.dispose()
    await island?.stop(options.stopSignal ?? "SIGTERM")
    await broker?.stop()
  })
  return {
    prefix,
    get broker() { return broker! },
    get island() { return island! },
    get browser() { return browser! },
    base,
    run
  }
}
