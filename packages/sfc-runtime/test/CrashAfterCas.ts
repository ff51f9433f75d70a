import { Effect, Layer } from "effect"
import { storeLayer } from "@microdcs/store"
import { SfcEngineProcesses, SfcRuntimeServices, StationPort } from "../src/index.js"

/**
 * An engine instance as a process of its own, for the kill -9 test (not a test file itself): it
 * runs the engine of PREFIX as CONSUMER, prints `ready` once started, and kills itself with
 * SIGKILL on its first send to the station: after the CAS that emitted the command, before the
 * command leaves the process. Run with
 * `node --import tsx/esm --conditions=source packages/sfc-runtime/test/CrashAfterCas.ts`.
 */
const env = (name: string): string => {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set`)
  return value
}

const dieOnSend = Layer.succeed(StationPort, {
  send: (command) =>
    Effect.sync(() => {
      console.log(`dying before sending ${command.correlationId}`)
      process.kill(process.pid, "SIGKILL")
    })
})

const island = SfcEngineProcesses({ consumer: env("CONSUMER"), directSend: true, fallbackIntervalMs: 100, sweepIntervalMs: 50, reconcileIntervalMs: 60_000 }).pipe(
  Layer.provideMerge(dieOnSend),
  Layer.provideMerge(SfcRuntimeServices),
  Layer.provideMerge(storeLayer({ url: env("VALKEY_URL"), prefix: env("PREFIX") }))
)

Effect.runFork(
  Effect.sync(() => console.log("ready")).pipe(Effect.andThen(Effect.never), Effect.provide(island), Effect.tapCause(Effect.logError))
)
