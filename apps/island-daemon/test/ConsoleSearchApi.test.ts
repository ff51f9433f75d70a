import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { encodeJobOrderRecord, type JobState, JobStates, priorityOf } from "@microdcs/job-state"
import { JobOrderDao, storeLayer } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemonEnv, type DaemonProcess, spawnDaemon } from "./DaemonProcess.js"

/**
 * Job order search over HTTP: `/api/console/search` (filters, totals, the cursor across scopes,
 * bad input listing every problem) and the scope lists' state filter, which reads the search
 * index. One daemon with a token; the job orders are written through the store.
 */

const TOKEN = "search-secret"
const auth = { authorization: `Bearer ${TOKEN}` }
let broker: MosquittoServer
let island: DaemonProcess
const prefix = randomPrefix("console-search")
const store = Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))

const put = (scope: string, id: string, state: JobState, o: { workMaster?: string; priority?: number; comment?: string } = {}) => {
  const jobOrder = { JobOrderID: id, Priority: o.priority ?? 0, ...(o.workMaster ? { WorkMasterID: [{ ID: o.workMaster }] } : {}) }
  return Effect.flatMap(JobOrderDao, (dao) =>
    dao.put({ id, scope, doc: encodeJobOrderRecord(jobOrder, state, o.comment), priority: priorityOf(jobOrder), expectedVersion: 0, change: "Store" })
  )
}

interface Page {
  readonly items: ReadonlyArray<{ scope: string; id: string; state: string; workMaster: string | null; priority: number; createdMs: number; error?: string }>
  readonly total: number
  readonly totalExact: boolean
  readonly next: string | null
}

const search = async (q: string): Promise<Page> => {
  const reply = await island.get(`/api/console/search?${q}`, auth)
  expect(reply.status, `${q}: ${reply.text}`).toBe(200)
  return reply.json() as Page
}

beforeAll(async () => {
  broker = await startMosquitto()
  island = await spawnDaemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "console-search", extra: { HTTP_TOKEN: TOKEN } }))
  await island.waitReady()
  await Effect.runPromise(
    Effect.gen(function* () {
      for (const scope of ["line-a", "line-b"]) {
        for (let i = 0; i < 6; i++) {
          const state = i % 3 === 0 ? JobStates.Aborted : i % 3 === 1 ? JobStates.Running : JobStates.AllowedToStart_Ready
          yield* put(scope, `jo-${scope}-${i}`, state, { workMaster: `wm-${i % 2}`, priority: i, ...(state === JobStates.Aborted ? { comment: `Spindle overload at step ${i}` } : {}) })
        }
      }
    }).pipe(Effect.provide(store))
  )
}, 60_000)

afterAll(async () => {
  await island?.stop("SIGKILL")
  await broker?.stop()
})

describe("job order search over HTTP", () => {
  it("asks for the token", async () => {
    expect((await island.get("/api/console/search")).status).toBe(401)
  })

  it("filters across scopes with a total, and pages with the cursor", async () => {
    const all = await search("limit=5")
    expect(all).toMatchObject({ total: 12, totalExact: true })
    const seen = [...all.items]
    let next = all.next
    while (next !== null) {
      const page = await search(`limit=5&after=${encodeURIComponent(next)}`)
      seen.push(...page.items)
      next = page.next
    }
    expect(new Set(seen.map((i) => i.id)).size).toBe(12)
    const aborted = await search("state=Aborted&scope=line-b")
    expect(aborted.items.map((i) => i.id).sort()).toEqual(["jo-line-b-0", "jo-line-b-3"])
    const twoStates = await search("state=Aborted,Running&workMaster=wm-1")
    expect(twoStates.items.map((i) => i.id).sort()).toEqual(["jo-line-a-1", "jo-line-a-3", "jo-line-b-1", "jo-line-b-3"])
    const prefixed = await search("idPrefix=jo-line-a-&priorityMin=4")
    // The priority range is the narrower: highest priority first.
    expect(prefixed.items.map((i) => i.id)).toEqual(["jo-line-a-5", "jo-line-a-4"])
    const error = await search("error=OVERLOAD%20at%20step%203")
    expect(error.items.map((i) => `${i.id} ${i.error}`).sort()).toEqual(["jo-line-a-3 Spindle overload at step 3", "jo-line-b-3 Spindle overload at step 3"])
    expect(error.total).toBe(2)
    const since = new Date(all.items[all.items.length - 1]!.createdMs).toISOString()
    const recent = await search(`createdFrom=${encodeURIComponent(since)}&createdTo=${Date.now() + 60_000}`)
    expect(recent.total).toBeGreaterThanOrEqual(5)
    const ended = await search("endedFrom=2020-01-01")
    expect(ended.total).toBe(4)
  })

  it("refuses a bad query with 400 listing every problem", async () => {
    const reply = await island.get("/api/console/search?state=Runing&createdFrom=yesterday&priorityMin=high&limit=0&endedFrom=5&endedTo=4", auth)
    expect(reply.status).toBe(400)
    const body = reply.json() as { error: string; problems: ReadonlyArray<string> }
    expect(body.error).toBe("bad-request")
    expect(body.problems).toHaveLength(5)
    expect(body.problems.join("\n")).toMatch(/Runing[\s\S]*createdFrom[\s\S]*priorityMin|createdFrom/)
    const cursor = await island.get("/api/console/search?after=garbage", auth)
    expect(cursor.status).toBe(400)
    expect(cursor.text).toContain("cursor")
  })

  it("the scope lists' state filter reads the index: newest first, with the total", async () => {
    const consolePage = await island.get("/api/console/scopes/line-a/joborders?state=Running&limit=1", auth)
    expect(consolePage.status).toBe(200)
    const first = consolePage.json() as { items: ReadonlyArray<{ id: string; state: string; version: number }>; next: string | null; total: number }
    expect(first).toMatchObject({ total: 2, items: [{ state: "Running", version: 1 }] })
    const second = await island.get(`/api/console/scopes/line-a/joborders?state=Running&limit=1&cursor=${encodeURIComponent(first.next!)}`, auth)
    const ids = [first.items[0]!.id, ...(second.json() as { items: ReadonlyArray<{ id: string }> }).items.map((i) => i.id)]
    expect(ids.sort()).toEqual(["jo-line-a-1", "jo-line-a-4"])
    const api = await island.get("/api/scopes/line-b/joborders?state=Aborted", auth)
    expect((api.json() as { items: ReadonlyArray<{ id: string }>; total: number }).total).toBe(2)
  })
})
