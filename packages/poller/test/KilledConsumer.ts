import { Effect, Layer } from "effect"
import { ValkeyLayer, ValkeyStreams } from "@microdcs/store"
import { makePoller } from "../src/index.js"

/**
 * A consumer as a process of its own, for the SIGKILL test (not a test file itself): it consumes
 * `sfc:work:*` of PREFIX as CONSUMER, prints `started <id>` for every entry and never finishes one
 * (with the per-entry handler, or with HANDLER=batch the batch handler).
 * Run with `node --import tsx/esm --conditions=source packages/poller/test/KilledConsumer.ts`.
 */
const env = (name: string): string => {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set`)
  return value
}

const settings = {
  kind: "sfc",
  stream: "sfcWork",
  group: "engine",
  consumer: env("CONSUMER"),
  fallbackIntervalMs: 200,
  claimIdleMs: 120_000
} as const

// HANDLER=batch: one batch handler that starts every entry of its batch and never finishes.
const consumer =
  process.env["HANDLER"] === "batch"
    ? makePoller({
        ...settings,
        handleBatch: (entries) => Effect.sync(() => entries.forEach((e) => console.log(`started ${e.id}`))).pipe(Effect.andThen(Effect.never))
      })
    : makePoller({
        ...settings,
        handler: (entry) => Effect.sync(() => console.log(`started ${entry.id}`)).pipe(Effect.andThen(Effect.never))
      })

const layer = ValkeyStreams.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: env("VALKEY_URL"), prefix: env("PREFIX") })))

Effect.runFork(consumer.pipe(Effect.andThen(Effect.never), Effect.scoped, Effect.provide(layer), Effect.tapCause(Effect.logError)))
