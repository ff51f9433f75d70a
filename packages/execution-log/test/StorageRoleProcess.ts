import { Effect, Layer } from "effect"
import { ExecutionLogStore, ValkeyLayer, ValkeyStreams } from "@microdcs/store"
import { LogStorage, logStorageLayer, makeStorageRole, storageDatabase } from "../src/index.js"

/**
 * The storage role as a process of its own, for the SIGKILL test (not a test file itself): it
 * consumes PREFIX's commit streams as CONSUMER against PG_URL, upserts the first half of its
 * first batch, prints `mid-batch <rows>` and hangs there, so a kill lands in the middle of a batch.
 * Run with `node --import tsx/esm --conditions=source packages/execution-log/test/StorageRoleProcess.ts`.
 */
const env = (name: string): string => {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set`)
  return value
}

/** The real table, with an upsert that stops halfway. */
const halfway = Layer.effect(
  LogStorage,
  Effect.map(LogStorage, (real) => ({
    ...real,
    upsert: (rows: Parameters<typeof real.upsert>[0]) => {
      const half = rows.slice(0, Math.ceil(rows.length / 2))
      return real.upsert(half).pipe(
        Effect.andThen(Effect.sync(() => console.log(`mid-batch ${half.length}`))),
        Effect.andThen(Effect.never)
      )
    }
  }))
).pipe(Layer.provide(logStorageLayer), Layer.provide(storageDatabase(env("PG_URL"))))

const valkey = ValkeyLayer.layer({ url: env("VALKEY_URL"), prefix: env("PREFIX") })
const layer = Layer.mergeAll(ExecutionLogStore.Default, ValkeyStreams.Default).pipe(Layer.provideMerge(valkey), Layer.merge(halfway))

Effect.runFork(
  makeStorageRole({ consumer: env("CONSUMER"), fallbackIntervalMs: 200, claimIdleMs: 120_000, batchSize: 100 }).pipe(
    Effect.andThen(Effect.never),
    Effect.scoped,
    Effect.provide(layer),
    Effect.tapCause(Effect.logError)
  )
)
