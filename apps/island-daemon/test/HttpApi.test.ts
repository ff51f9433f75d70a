import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { JobStates, MethodEventTypes, toStoredState } from "@microdcs/job-state"
import { storeLayer } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemon, daemonEnv, type DaemonProcess } from "./DaemonProcess.js"
import { axleJobOrder, axleStation, completedCount, configureAxleStation, eventually, makeMes, SCOPE } from "./IslandKit.js"

/**
 * /metrics and the read-only JSON API of a daemon that has run a few jobs: three axle jobs run
 * to completion, four more only stored.
 */

let broker: MosquittoServer
beforeAll(async () => {
  broker = await startMosquitto()
})
afterAll(async () => {
  await broker?.stop()
})

const RUN = ["jo-api-01", "jo-api-02", "jo-api-03"]
const STORED = ["jo-api-04", "jo-api-05", "jo-api-06", "jo-api-07"]

interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly next: string | null
}

const getJson = <A>(d: DaemonProcess, path: string) =>
  Effect.promise(async () => {
    const reply = await d.get(path)
    return { status: reply.status, body: reply.json() as A }
  })

/** Every item of a paged API list, following `next`; also returns how many pages it took. */
const allPages = <A>(d: DaemonProcess, path: string) =>
  Effect.gen(function* () {
    const items: Array<A> = []
    let pages = 0
    let cursor: string | null = null
    do {
      const separator = path.includes("?") ? "&" : "?"
      const { status, body }: { status: number; body: Page<A> } = yield* getJson<Page<A>>(d, cursor === null ? path : `${path}${separator}cursor=${encodeURIComponent(cursor)}`)
      expect(status, JSON.stringify(body)).toBe(200)
      items.push(...body.items)
      pages++
      cursor = body.next
    } while (cursor !== null && pages < 100)
    return { items, pages }
  })

describe("HTTP metrics and JSON API", () => {
  it.live(
    "serves Prometheus text and the JSON API with cursor paging",
    () => {
      const prefix = randomPrefix("api")
      return Effect.gen(function* () {
        const d = yield* daemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "api-1" }))
        yield* axleStation(broker.url, prefix)
        const mes = yield* makeMes(broker.url, prefix)
        yield* configureAxleStation(mes)
        for (const id of RUN) yield* mes.ok(MethodEventTypes.StoreAndStart, { JobOrder: axleJobOrder(id) })
        for (const id of STORED) yield* mes.ok(MethodEventTypes.Store, { JobOrder: axleJobOrder(id) })
        yield* eventually(Effect.map(completedCount(RUN), (n) => (n === RUN.length ? n : undefined)), 30_000, "the run jobs completed")

        // Prometheus text, with the Valkey-side figures read at scrape time.
        const metrics = yield* Effect.promise(() => d.get("/metrics"))
        expect(metrics.status).toBe(200)
        const text = metrics.text
        // Job figures come from index sizes (no document is read): 7 listed, 3 ended with a response, none running.
        expect(text).toContain("# TYPE microdcs_job_orders gauge")
        expect(text).toContain(`microdcs_job_orders{scope="${SCOPE}"} 7`)
        expect(text).toContain(`microdcs_job_responses{scope="${SCOPE}",state="Ended_Completed"} 3`)
        expect(text).toContain(`microdcs_executions_active{scope="${SCOPE}"} 0`)
        expect(text).toMatch(new RegExp(`microdcs_stream_length\\{stream="changes",scope="${SCOPE}"\\} [1-9]\\d*`))
        expect(text).toMatch(new RegExp(`microdcs_stream_length\\{stream="sfc",scope="${SCOPE}"\\} \\d+`))
        expect(text).toMatch(/microdcs_messages_total\{kind="jobcontrol",type="[^"]+StoreAndStart[^"]*",outcome="ok"\} 3/)
        expect(text).toMatch(/microdcs_messages_total\{kind="station",type="com\.example\.station\.qa\.v1",outcome="ok"\} 3/)
        expect(text).toContain("microdcs_handler_seconds_bucket{")

        const scopes = yield* getJson<Page<string>>(d, "/api/scopes")
        expect(scopes).toEqual({ status: 200, body: { items: [SCOPE], next: null } })

        // Job orders by scope, three per page: every one exactly once, with its state.
        const orders = yield* allPages<{ id: string; state: string | null; version: number | null }>(d, `/api/scopes/${SCOPE}/joborders?limit=3`)
        expect(orders.pages).toBe(3)
        expect(orders.items.map((o) => o.id).sort()).toEqual([...RUN, ...STORED])
        for (const o of orders.items) expect(o.state).toBe(RUN.includes(o.id) ? "Ended_Completed" : "NotAllowedToStart_Ready")
        const first = yield* getJson<Page<unknown>>(d, `/api/scopes/${SCOPE}/joborders?limit=3`)
        expect(first.body.items).toHaveLength(3)
        expect(first.body.next).toBe("3")

        const order = yield* getJson<Record<string, unknown>>(d, "/api/joborders/jo-api-01")
        expect(order.status).toBe(200)
        expect(order.body).toMatchObject({ id: "jo-api-01", scope: SCOPE, state: "Ended_Completed", document: { JobOrder: { JobOrderID: "jo-api-01" } } })
        expect(order.body["version"]).toBeGreaterThan(1)
        const unknown = yield* getJson<Record<string, unknown>>(d, "/api/joborders/jo-nowhere")
        expect(unknown).toEqual({ status: 404, body: { error: "not-found", message: "job order jo-nowhere does not exist" } })

        const responses = yield* allPages<{ id: string; document: Record<string, unknown> }>(d, `/api/scopes/${SCOPE}/jobresponses?state=Ended_Completed&limit=2`)
        expect(responses.items.map((r) => r.id).sort()).toEqual(RUN.map((id) => `${id}-response`))
        for (const r of responses.items) expect(r).toMatchObject({ problems: null, document: { JobResponseID: r.id, JobState: toStoredState(JobStates.Ended_Completed) } })

        const execution = yield* getJson<Record<string, unknown>>(d, "/api/executions/jo-api-02")
        expect(execution.status).toBe(200)
        expect(execution.body).toMatchObject({ jobId: "jo-api-02", scope: SCOPE })
        expect(execution.body["state"]).toMatchObject({ status: "completed" })
        expect((yield* getJson(d, "/api/executions/jo-nowhere")).status).toBe(404)

        // Bad requests are answered 400 and name the problem.
        const badLimit = yield* getJson<{ error: string; message: string }>(d, `/api/scopes/${SCOPE}/joborders?limit=0`)
        expect(badLimit.status).toBe(400)
        expect(badLimit.body.message).toContain("limit")
        expect((yield* getJson(d, `/api/scopes/${SCOPE}/jobresponses`)).status).toBe(400)
        expect((yield* getJson(d, "/api/nothing-here")).status).toBe(404)

        const exit = yield* Effect.promise(() => d.stop("SIGTERM"))
        expect(exit.code, d.stderr()).toBe(0)
      }).pipe(Effect.scoped, Effect.provide(Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))))
    },
    60_000
  )
})
