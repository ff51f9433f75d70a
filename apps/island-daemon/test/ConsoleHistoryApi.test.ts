import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { MethodEventTypes } from "@microdcs/job-state"
import { storeLayer } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemon, daemonEnv, type DaemonProcess } from "./DaemonProcess.js"
import { axleJobOrder, axleStation, completedCount, configureAxleStation, eventually, makeMes, SCOPE } from "./IslandKit.js"

/**
 * `GET /api/console/history` and the job metrics of a daemon that ran jobs: three axle jobs run
 * to completion and one stored and aborted, read back per scope and island-wide, and the query's
 * problems listed together.
 */

const TOKEN = "history-secret"
const auth = { authorization: `Bearer ${TOKEN}` }
const RUN = ["jo-hist-01", "jo-hist-02", "jo-hist-03"]
const ABORTED = "jo-hist-09"

interface Answer {
  readonly source: string
  readonly stepMs: number
  readonly points: ReadonlyArray<{ at: number; started: number; completed: number; aborted: number; p50: number | null; p95: number | null; p99: number | null }>
}

let broker: MosquittoServer
beforeAll(async () => {
  broker = await startMosquitto()
})
afterAll(async () => {
  await broker?.stop()
})

const history = (d: DaemonProcess, query: string) =>
  Effect.promise(async () => {
    const reply = await d.get(`/api/console/history${query}`, auth)
    return { status: reply.status, body: reply.json() as Answer & { problems?: ReadonlyArray<string> } }
  })

/** Jobs started, completed and aborted in the window (rates × step minutes), and whether a run time shows. */
const totals = (answer: Answer) => {
  const minutes = answer.stepMs / 60_000
  const sum = (k: "started" | "completed" | "aborted") => Math.round(answer.points.reduce((a, p) => a + p[k] * minutes, 0))
  return { started: sum("started"), completed: sum("completed"), aborted: sum("aborted"), runTimes: answer.points.some((p) => p.p50 !== null && p.p99 !== null) }
}

describe("the console's history over HTTP", () => {
  it.live("answers per-step rates and run-time percentiles per scope and island-wide; /metrics counts the same jobs", () => {
    const prefix = randomPrefix("history-api")
    return Effect.gen(function* () {
      const d = yield* daemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "history-api", extra: { HTTP_TOKEN: TOKEN } }))
      yield* axleStation(broker.url, prefix)
      const mes = yield* makeMes(broker.url, prefix)
      yield* configureAxleStation(mes)
      for (const id of RUN) yield* mes.ok(MethodEventTypes.StoreAndStart, { JobOrder: axleJobOrder(id) })
      yield* mes.ok(MethodEventTypes.Store, { JobOrder: axleJobOrder(ABORTED) })
      yield* mes.ok(MethodEventTypes.Abort, { JobOrderID: ABORTED })
      yield* eventually(Effect.map(completedCount(RUN), (n) => (n === RUN.length ? n : undefined)), 30_000, "the jobs completed")

      const want = { started: 3, completed: 3, aborted: 1, runTimes: true }
      const scoped = yield* eventually(
        Effect.map(history(d, `?scope=${SCOPE}&window=1h&step=1m`), (r) => (r.status === 200 && totals(r.body).completed === 3 && totals(r.body).aborted === 1 ? r.body : undefined)),
        20_000,
        "the history counted the jobs"
      )
      expect(scoped.source).toBe("daemon")
      expect(scoped.points).toHaveLength(60)
      expect(totals(scoped)).toEqual(want)
      for (const [window, step, n] of [["24h", "15m", 96], ["6h", "5m", 72]] as const) {
        const r = yield* history(d, `?window=${window}&step=${step}`)
        expect(r.status).toBe(200)
        expect(r.body.points).toHaveLength(n)
        expect(totals(r.body)).toEqual(want)
      }
      const other = yield* history(d, "?scope=line-nothing&window=1h&step=5m")
      expect(totals(other.body)).toEqual({ started: 0, completed: 0, aborted: 0, runTimes: false })

      const metrics = (yield* Effect.promise(() => d.get("/metrics", auth))).text
      expect(metrics).toContain(`microdcs_jobs_total{scope="${SCOPE}",event="started"} 3`)
      expect(metrics).toContain(`microdcs_jobs_total{scope="${SCOPE}",event="completed"} 3`)
      expect(metrics).toContain(`microdcs_jobs_total{scope="${SCOPE}",event="aborted"} 1`)
      expect(metrics).toContain(`microdcs_job_run_seconds_count{scope="${SCOPE}"} 3`)
    }).pipe(Effect.scoped, Effect.provide(Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))))
  }, 90_000)

  it.live("lists every problem of a bad query in one 400, and asks for the token", () => {
    const prefix = randomPrefix("history-api-bad")
    return Effect.gen(function* () {
      const d = yield* daemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "history-api-bad", extra: { HTTP_TOKEN: TOKEN } }))
      const bad = yield* history(d, "?window=2h&step=2m&scope=a%20b&limit=5")
      expect(bad.status).toBe(400)
      expect(bad.body.problems).toEqual([
        'window must be one of 24h, 6h, 1h, got "2h"',
        'step must be one of 1m, 5m, 15m, got "2m"',
        "scope must be 1 to 256 characters without spaces or control characters",
        "limit is not a parameter (scope, window, step)"
      ])
      expect((yield* Effect.promise(() => d.get("/api/console/history"))).status).toBe(401)
      const fine = yield* history(d, "")
      expect(fine.status).toBe(200)
      expect(fine.body.points).toHaveLength(24 * 12)
    }).pipe(Effect.scoped)
  }, 60_000)
})
