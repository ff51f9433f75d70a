import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { IndexMaintenance, JobOrderDao, JobResponseDao, storeLayer, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { type MosquittoServer, randomPrefix, scanKeys, startMosquitto } from "@microdcs/test-utils"
import { daemon, daemonEnv, type DaemonProcess, until } from "./DaemonProcess.js"

/**
 * The index upgrade at start: an island written by an older release (job orders and Aborted
 * responses without the search index and the failed sets) is brought up to date by the daemons
 * that start on it, in the background, by one of them; INDEX_UPGRADE=off leaves it alone.
 */

let broker: MosquittoServer
beforeAll(async () => {
  broker = await startMosquitto()
})
afterAll(async () => {
  await broker?.stop()
})

const SCOPE = "line-1"

/** An Aborted job order record as job control writes it, so it belongs in both new indexes. */
const record = (id: string) =>
  JSON.stringify({ JobOrder: { JobOrderID: id, Priority: 1 }, State: [{ StateText: { Text: "Aborted", Locale: "en" }, StateNumber: 6 }], Comment: "spindle overload" })

/** Job orders with an Aborted response each, then the keys an older release never wrote deleted. */
const olderReleaseIsland = Effect.gen(function* () {
  const orders = yield* JobOrderDao
  const responses = yield* JobResponseDao
  for (let n = 1; n <= 5; n++) {
    const id = `jo-old-${n}`
    yield* orders.put({ id, scope: SCOPE, doc: record(id), priority: 1, expectedVersion: 0 })
    yield* responses.put({ id: `jr-old-${n}`, scope: SCOPE, orderId: id, state: "Aborted", startTime: 1000, endTime: 2000 + n, doc: "{}", expectedVersion: 0 })
  }
  const v = yield* Valkey
  for (const family of ["jobOrderSearch", "jobResponseFailed"] as const) {
    const keys = yield* unsafeCommand(v, "test", (c) => scanKeys(c, v.keys.pattern(family)))
    yield* unsafeCommand(v, "test", (c) => c.del(...keys))
  }
  expect((yield* (yield* IndexMaintenance).check()).length).toBe(10)
})

const logged = (ds: ReadonlyArray<DaemonProcess>, message: string) => ds.flatMap((d) => d.logs().filter((l) => l.message === message))

describe("index upgrade at start", () => {
  it.live(
    "off: nothing is rebuilt; on: of two daemons started at once one rebuilds, the check ends clean, and the next start walks nothing",
    () => {
      const prefix = randomPrefix("idxup")
      // The test kit turns the upgrade off for every other daemon test; here it is on unless said.
      const env = (instanceId: string, extra: Record<string, string> = {}) =>
        daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId, extra: { INDEX_UPGRADE: "on", ...extra } })
      return Effect.gen(function* () {
        yield* olderReleaseIsland
        const maintenance = yield* IndexMaintenance

        const off = yield* daemon(env("up-off", { INDEX_UPGRADE: "off" }))
        expect((yield* Effect.promise(() => off.stop("SIGTERM"))).code).toBe(0)
        expect(logged([off], "index upgrade started")).toEqual([])
        expect((yield* maintenance.check()).length).toBe(10)

        const [a, b] = yield* Effect.all([daemon(env("up-a")), daemon(env("up-b"))], { concurrency: 2 })
        const done = yield* Effect.promise(() => until("index upgrade done", () => logged([a, b], "index upgrade done")[0], 30_000))
        expect(done.logLevel).toBe("INFO")
        expect(done.annotations).toMatchObject({ unrepaired: 0, phases: expect.stringContaining("joborder-search") })
        expect(Number(done.annotations?.["repaired"])).toBeGreaterThanOrEqual(10)
        expect(typeof done.annotations?.["durationMs"]).toBe("number")
        expect(logged([a, b], "index upgrade started").length).toBe(1)
        expect(logged([a, b], "index upgrade failed; the next start tries again")).toEqual([])
        expect(yield* maintenance.check()).toEqual([])
        expect((yield* maintenance.versions).every((p) => p.recorded === p.version)).toBe(true)
        const exits = yield* Effect.promise(() => Promise.all([a.stop("SIGTERM"), b.stop("SIGTERM")]))
        expect(exits.map((e) => e.code)).toEqual([0, 0])

        // The marker is recorded: a restart reads it and walks nothing.
        const again = yield* daemon(env("up-a"))
        yield* Effect.sleep("500 millis")
        expect(logged([again], "index upgrade started")).toEqual([])
        expect((yield* Effect.promise(() => again.stop("SIGTERM"))).code).toBe(0)
      }).pipe(Effect.scoped, Effect.provide(Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))))
    },
    90_000
  )
})
