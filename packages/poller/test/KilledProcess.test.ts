import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Queue } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import type { PollerEntry } from "@microdcs/poller"
import { append, base, freshLayer, start } from "./PollerKit.js"

const ROOT = fileURLToPath(new URL("../../../", import.meta.url))

/** The default heartbeat lifetime: a killed consumer counts as dead at most this long after its last renewal. */
const HEARTBEAT_TTL_MS = 3000

/** Starts packages/poller/test/KilledConsumer.ts under tsx; killed with SIGKILL when the test ends. */
const spawnConsumer = (prefix: string, consumer: string, handler: "entry" | "batch" = "entry") =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, ["--import", "tsx/esm", "--conditions=source", "packages/poller/test/KilledConsumer.ts"], {
        cwd: ROOT,
        env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", VALKEY_URL: inject("valkeyUrl"), PREFIX: prefix, CONSUMER: consumer, HANDLER: handler },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const started = Effect.runSync(Queue.unbounded<string>())
      let err = ""
      child.stdout.on("data", (chunk: Buffer) => {
        for (const m of chunk.toString().matchAll(/^started (\S+)$/gm)) Queue.offerUnsafe(started, m[1]!)
      })
      child.stderr.on("data", (chunk: Buffer) => void (err += chunk.toString()))
      return { child, started, stderr: () => err }
    }),
    ({ child }) => Effect.sync(() => void (child.exitCode === null && child.kill("SIGKILL")))
  )

describe("Poller takeover after SIGKILL", () => {
  it.live(
    "the in-flight entries of a consumer process killed with SIGKILL are taken over within 5 s of its heartbeat lapsing",
    () => {
      const prefix = randomPrefix("poller")
      return Effect.gen(function* () {
        const orphans = [yield* append("killed", { n: "0" }, { nudge: false }), yield* append("killed", { n: "1" }, { nudge: false })]
        const doomed = yield* spawnConsumer(prefix, "doomed-process")
        const running = [] as Array<string>
        while (running.length < 2) {
          running.push(
            yield* Queue.take(doomed.started).pipe(
              Effect.timeoutOrElse({ duration: "40 seconds", orElse: () => Effect.fail(new Error(`the child never started both entries: ${doomed.stderr()}`)) })
            )
          )
        }
        expect(running.sort()).toEqual(orphans)

        // A live consumer next to it takes nothing while the child lives.
        const seen = yield* Queue.unbounded<PollerEntry>()
        yield* start({ ...base, claimIdleMs: 120_000, consumer: "survivor", handler: (e: PollerEntry) => Queue.offer(seen, e).pipe(Effect.asVoid) })
        yield* Effect.sleep("1500 millis")
        expect(yield* Queue.size(seen)).toBe(0)

        doomed.child.kill("SIGKILL")
        const killedAt = Date.now()
        const taken = [yield* Queue.take(seen).pipe(Effect.timeout("20 seconds")), yield* Queue.take(seen).pipe(Effect.timeout("20 seconds"))]
        expect(Date.now() - killedAt).toBeLessThan(HEARTBEAT_TTL_MS + 5000)
        expect(taken.map((e) => e.id).sort()).toEqual(orphans)
        expect(taken.map((e) => e.deliveries)).toEqual([2, 2])
      }).pipe(Effect.scoped, Effect.provide(freshLayer(prefix)))
    },
    90_000
  )

  it.live(
    "a batch handler's process killed mid-batch with SIGKILL leaves the batch pending; a live batch consumer takes it over",
    () => {
      const prefix = randomPrefix("poller")
      return Effect.gen(function* () {
        const orphans: Array<string> = []
        for (let i = 0; i < 3; i++) orphans.push(yield* append("killed-batch", { n: String(i) }, { nudge: false }))
        const doomed = yield* spawnConsumer(prefix, "doomed-batch", "batch")
        const running = [] as Array<string>
        while (running.length < 3) {
          running.push(
            yield* Queue.take(doomed.started).pipe(
              Effect.timeoutOrElse({ duration: "40 seconds", orElse: () => Effect.fail(new Error(`the child never started the batch: ${doomed.stderr()}`)) })
            )
          )
        }
        expect(running).toEqual(orphans)
        doomed.child.kill("SIGKILL")
        const batches = yield* Queue.unbounded<ReadonlyArray<PollerEntry>>()
        yield* start({ ...base, claimIdleMs: 120_000, consumer: "survivor", handleBatch: (entries) => Queue.offer(batches, entries).pipe(Effect.asVoid) })
        const taken: Array<PollerEntry> = []
        while (taken.length < 3) taken.push(...(yield* Queue.take(batches).pipe(Effect.timeout("20 seconds"))))
        expect(taken.map((e) => e.id)).toEqual(orphans)
        expect(taken.map((e) => e.deliveries)).toEqual([2, 2, 2])
      }).pipe(Effect.scoped, Effect.provide(freshLayer(prefix)))
    },
    90_000
  )
})
