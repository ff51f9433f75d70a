import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { decodeOrigin, MethodEventTypes } from "@microdcs/job-state"
import { storeLayer } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { bearer, OPERATOR, post, stableSnapshot, VIEWER, writeTokenFile } from "./ConsoleActionKit.js"
import { daemonEnv, type DaemonProcess, spawnDaemon } from "./DaemonProcess.js"
import { allChanges, axleJobOrder, configureAxleStation, jobOrderOf, makeMes, SCOPE } from "./IslandKit.js"

/**
 * Bulk actions on a search over HTTP: the count first, then batches that follow the search's
 * cursor to its end, every job's outcome listed, each job through job control with the operator
 * as its origin; a viewer, an empty filter, a bad query and a retry without a reason are refused
 * and change nothing; the job orders outside the search are never touched.
 */

let broker: MosquittoServer
let d: DaemonProcess
const prefix = randomPrefix("cb")
const store = Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))
const BULK = Array.from({ length: 120 }, (_, i) => `jo-bulk-${String(i).padStart(3, "0")}`)
const KEEP = ["jo-keep-1", "jo-keep-2", "jo-keep-3"]

type Json = Record<string, unknown>
interface Outcome {
  readonly id: string
  readonly outcome: string
  readonly state?: string | null
  readonly error?: string
  readonly message?: string
}

const run = <A, E>(effect: Effect.Effect<A, E, never>) => Effect.runPromise(effect)
const inStore = <A, E, R>(effect: Effect.Effect<A, E, R>) => run(Effect.provide(effect, store) as Effect.Effect<A, E, never>)

/** Every batch of a bulk action to the end, as the page runs them. */
const bulk = async (action: string, query: string, comment?: string, batch = 50) => {
  const outcomes: Array<Outcome> = []
  let after: string | null | undefined
  let batches = 0
  do {
    const reply = await post(d, `/api/console/bulk/${action}`, OPERATOR.token, { query, batch, ...(comment === undefined ? {} : { comment }), ...(after ? { after } : {}) })
    expect(reply.status, reply.text).toBe(200)
    const body = reply.json() as { outcomes: Array<Outcome>; next: string | null }
    expect(body.outcomes.length).toBeLessThanOrEqual(batch)
    outcomes.push(...body.outcomes)
    after = body.next
    batches++
  } while (after !== null)
  return { outcomes, batches }
}

beforeAll(async () => {
  broker = await startMosquitto()
  d = await spawnDaemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "console-bulk", extra: { HTTP_TOKEN_FILE: writeTokenFile() } }))
  await d.waitReady()
  await run(
    Effect.gen(function* () {
      const mes = yield* makeMes(broker.url, prefix)
      yield* configureAxleStation(mes)
      yield* Effect.forEach([...BULK, ...KEEP], (id) => mes.ok(MethodEventTypes.Store, { JobOrder: axleJobOrder(id) }), { concurrency: 8, discard: true })
    }).pipe(Effect.scoped) as Effect.Effect<void, unknown, never>
  )
}, 90_000)

afterAll(async () => {
  await d?.stop("SIGTERM")
  await broker?.stop()
})

describe("bulk actions on a search", () => {
  it("refuses a viewer, an empty filter, a bad query and a retry without a reason, changing nothing", async () => {
    const before = await inStore(stableSnapshot)
    const viewer = await post(d, "/api/console/bulk/abort", VIEWER.token, { query: "idPrefix=jo-bulk-" })
    expect(viewer.status).toBe(403)
    // No filter, an empty one, or only names a search does not read: never every job order of the island.
    for (const query of ["", "state=", "limit=5&foo=1"]) {
      const empty = await post(d, "/api/console/bulk/abort", OPERATOR.token, { query })
      expect(empty.status).toBe(400)
      expect((empty.json() as Json)["message"]).toContain("name at least one filter")
    }
    expect((await post(d, "/api/console/bulk/abort", OPERATOR.token, { query: "limit=5&foo=1" })).json()).toMatchObject({ message: expect.stringContaining("unknown filters limit, foo") })
    const bad = await post(d, "/api/console/bulk/abort", OPERATOR.token, { query: "createdFrom=yesterday&priorityMin=high", batch: 0, extra: 1 })
    expect(bad.status).toBe(400)
    const problems = (bad.json() as { problems: Array<string> }).problems
    expect(problems.some((p) => p.includes("extra"))).toBe(true)
    expect(problems.some((p) => p.includes("createdFrom"))).toBe(true)
    expect(problems.some((p) => p.includes("priorityMin"))).toBe(true)
    expect(problems.some((p) => p.startsWith("batch"))).toBe(true)
    const retry = await post(d, "/api/console/bulk/retry", OPERATOR.token, { query: "idPrefix=jo-bulk-" })
    expect(retry.status).toBe(400)
    expect((await post(d, "/api/console/bulk/explode", OPERATOR.token, { query: "idPrefix=jo-bulk-" })).status).toBe(404)
    expect(await inStore(stableSnapshot)).toEqual(before)
  })

  it("counts, then aborts every match in batches, each job audited; the others untouched", async () => {
    const count = (await d.get("/api/console/search/count?idPrefix=jo-bulk-", bearer(VIEWER.token))).json()
    expect(count).toEqual({ total: BULK.length, totalExact: true })
    const { outcomes, batches } = await bulk("abort", "idPrefix=jo-bulk-", "line stop")
    expect(batches).toBe(3)
    expect(outcomes.map((o) => o.id).sort()).toEqual(BULK)
    expect(outcomes.every((o) => o.outcome === "done" && o.state === "Aborted")).toBe(true)
    for (const id of [BULK[0]!, BULK[77]!]) expect((await inStore(jobOrderOf(id)))?.state).toBe("Aborted")
    for (const id of KEEP) expect((await inStore(jobOrderOf(id)))?.state).not.toBe("Aborted")
    const changes = await inStore(allChanges(SCOPE))
    const abort = changes.find((c) => c.id === BULK[42] && c.change === "Abort")
    expect(decodeOrigin(abort?.origin)).toMatchObject({ kind: "console", id: OPERATOR.name, comment: "line stop" })
  })

  it("lists a refusal per job, then clears what the search finds aborted", async () => {
    const again = await bulk("abort", "idPrefix=jo-bulk-", undefined, 100)
    expect(again.outcomes).toHaveLength(BULK.length)
    expect(again.outcomes.every((o) => o.outcome === "refused" && o.error === "state-refuses" && (o.message ?? "") !== "")).toBe(true)
    const cleared = await bulk("clear", "idPrefix=jo-bulk-&state=Aborted", "cleanup", 200)
    expect(cleared.batches).toBe(1)
    expect(cleared.outcomes.every((o) => o.outcome === "done")).toBe(true)
    expect((await d.get("/api/console/search/count?idPrefix=jo-bulk-", bearer(VIEWER.token))).json()).toEqual({ total: 0, totalExact: true })
  })

  it("a retry with a reason skips jobs that have no open action, saying so", async () => {
    const { outcomes } = await bulk("retry", "idPrefix=jo-keep-", "station back")
    expect(outcomes.map((o) => [o.id, o.outcome])).toEqual(expect.arrayContaining(KEEP.map((id) => [id, "skipped"])))
    expect(outcomes.every((o) => o.message === "no open action to send again")).toBe(true)
  })
})
