import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { MethodEventTypes } from "@microdcs/job-state"
import { JobOrderDao, storeLayer, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { type MosquittoServer, randomPrefix, startMosquitto, startValkeyServer, type ValkeyServer } from "@microdcs/test-utils"
import { daemon, daemonEnv, type DaemonProcess } from "./DaemonProcess.js"
import { makeMes, SCOPE } from "./IslandKit.js"

/**
 * /metrics stays bounded and cheap: label values from the network are bounded, refused requests
 * are counted as refused, the process metrics have one prefix, and a scrape reads index sizes,
 * not documents. This file has its own Valkey, so its command statistics are the daemon's alone.
 */

let valkey: ValkeyServer
let broker: MosquittoServer
beforeAll(async () => {
  valkey = await startValkeyServer()
  broker = await startMosquitto()
})
afterAll(async () => {
  await broker?.stop()
  await valkey?.stop()
})

const scrape = (d: DaemonProcess) => Effect.promise(async () => (await d.get("/metrics")).text)

/** The value of one exposition line, or undefined when the series is absent. */
const sample = (text: string, series: string): number | undefined => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

/** Calls per command since the last CONFIG RESETSTAT, from INFO commandstats. */
const commandCalls = Effect.gen(function* () {
  const v = yield* Valkey
  const info = yield* unsafeCommand(v, "info", (c) => c.info("commandstats"))
  const calls = new Map<string, number>()
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(m[1]!, Number(m[2]))
  return calls
})

describe("/metrics", () => {
  it.live(
    "bounds the type label, counts refused requests as refused, and names the process metrics once",
    () => {
      const prefix = randomPrefix("mt")
      return Effect.gen(function* () {
        const d = yield* daemon(daemonEnv({ valkeyUrl: valkey.url, mqttUrl: broker.url, prefix, instanceId: "metrics-1", extra: { ISLAND_ROLES: "job-control" } }))
        const mes = yield* makeMes(broker.url, prefix)
        yield* mes.ok(MethodEventTypes.Store, { JobOrder: { JobOrderID: "jo-metrics-1" } })
        // Refused: a job order that does not exist, and types nobody serves (each its own random string).
        yield* mes.replyTo(yield* mes.send(MethodEventTypes.Start, { JobOrderID: "jo-nowhere" }))
        const randomTypes = Array.from({ length: 5 }, () => `com.attacker.${randomUUID()}`)
        for (const type of randomTypes) yield* mes.replyTo(yield* mes.send(type, {}))

        const text = yield* scrape(d)
        const series = (type: string, outcome: string) => `microdcs_messages_total{kind="jobcontrol",type="${type}",outcome="${outcome}"}`
        expect(sample(text, series(MethodEventTypes.Store, "ok"))).toBe(1)
        expect(sample(text, series(MethodEventTypes.Start, "refused"))).toBe(1)
        expect(sample(text, series(MethodEventTypes.Start, "ok"))).toBeUndefined()
        expect(sample(text, series("other", "refused"))).toBe(randomTypes.length)
        for (const type of randomTypes) expect(text).not.toContain(type)
        expect(sample(text, `microdcs_refused_total{kind="jobcontrol",type="${MethodEventTypes.Start}",reason="UnknownJobOrderId"}`)).toBe(1)
        expect(sample(text, `microdcs_refused_total{kind="jobcontrol",type="other",reason="UnknownType"}`)).toBe(randomTypes.length)

        expect(text).toMatch(/^microdcs_process_cpu_user_seconds_total \d/m)
        expect(text).toMatch(/^microdcs_nodejs_heap_size_used_bytes \d/m)
        expect(text).not.toContain("microdcs_process_process_")
      }).pipe(Effect.scoped)
    },
    60_000
  )

  it.live(
    "a scrape on a scope with 20,000 job orders reads index and stream sizes, not documents, and is cached briefly",
    () => {
      const prefix = randomPrefix("mt")
      return Effect.gen(function* () {
        const dao = yield* JobOrderDao
        const ids = Array.from({ length: 20_000 }, (_, i) => `jo-${String(i).padStart(5, "0")}`)
        yield* Effect.forEach(
          ids,
          (id, i) => dao.put({ id, scope: SCOPE, doc: JSON.stringify({ JobOrder: { JobOrderID: id } }), expectedVersion: 0, priority: i, change: "Store" }),
          { concurrency: 64, discard: true }
        )
        // Job control only: no engine, sweep or publisher issuing commands of their own meanwhile.
        const d = yield* daemon(daemonEnv({ valkeyUrl: valkey.url, mqttUrl: broker.url, prefix, instanceId: "metrics-2", extra: { ISLAND_ROLES: "job-control" } }))
        const v = yield* Valkey
        yield* unsafeCommand(v, "reset stats", (c) => c.config("RESETSTAT"))
        const started = performance.now()
        const text = yield* scrape(d)
        const seconds = (performance.now() - started) / 1000
        const calls = yield* commandCalls

        expect(sample(text, `microdcs_job_orders{scope="${SCOPE}"}`)).toBe(ids.length)
        expect(sample(text, `microdcs_stream_length{stream="changes",scope="${SCOPE}"}`)).toBeGreaterThan(0)
        expect(sample(text, `microdcs_stream_length{stream="sfc",scope="${SCOPE}"}`)).toBe(0)
        // No document read (HGETALL, HMGET, HGET, scripts), and a handful of commands in all.
        for (const read of ["hgetall", "hmget", "hget", "evalsha", "eval"]) expect(calls.get(read) ?? 0, read).toBe(0)
        const total = [...calls.entries()].filter(([name]) => name !== "config|resetstat").reduce((n, [, c]) => n + c, 0)
        expect(total, JSON.stringify([...calls])).toBeLessThan(40)
        expect(seconds).toBeLessThan(5)

        // Scraped again at once: served from the last read, no command sent. (The job history's
        // follower reads the change streams with XRANGE on its own clock, every second: not the scrape's.)
        yield* unsafeCommand(v, "reset stats", (c) => c.config("RESETSTAT"))
        yield* scrape(d)
        const again = [...(yield* commandCalls).entries()].filter(([name]) => name !== "config|resetstat" && name !== "info" && name !== "xrange")
        expect(again).toEqual([])
      }).pipe(Effect.scoped, Effect.provide(Layer.orDie(storeLayer({ url: valkey.url, prefix }))))
    },
    120_000
  )
})
