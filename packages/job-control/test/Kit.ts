import { Effect, Layer } from "effect"
import { expect } from "@effect/vitest"
import { inject } from "vitest"
import {
  encodeJobOrderRecord,
  type JobOrder,
  type JobState,
  type Method,
  MethodEventTypes,
  type Query,
  QueryEventTypes
} from "@microdcs/job-state"
import { JobOrderDao, storeLayer, Valkey, type ValkeyOptions } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import {
  type ConfigKind,
  ConfigEventTypes,
  type HandleResult,
  JobControl,
  type JobControlRequest,
  type JobControlSettings,
  jobControlLayer
} from "@microdcs/job-control"

/** Shared pieces of the job-control tests (not a test file itself). */

export { fixture } from "@microdcs/test-utils"

/** The processor over the run's server with a fresh prefix; the store's services are exposed too. */
export const world = (settings: Partial<JobControlSettings> = {}, store: Partial<ValkeyOptions> = {}) =>
  jobControlLayer(settings).pipe(
    Layer.provideMerge(storeLayer({ url: inject("valkeyUrl"), prefix: randomPrefix("jc"), ...store }))
  )

let counter = 0

export const request = (
  type: string,
  subject: string | undefined,
  data: unknown,
  extensions: Readonly<Record<string, string>> = {}
): JobControlRequest => ({ id: `req-${++counter}`, source: "urn:test:mes", type, subject, data, extensions })

export const methodRequest = (method: Method, scope: string, data: unknown) => request(MethodEventTypes[method], scope, data)
export const queryRequest = (query: Query, scope: string, data: unknown) => request(QueryEventTypes[query], scope, data)
export const configRequest = (kind: ConfigKind, scope: string, data: unknown, method?: string) =>
  request(ConfigEventTypes[kind], scope, data, method === undefined ? {} : { method })

export const handle = (req: JobControlRequest) => Effect.flatMap(JobControl, (jc) => jc.handle(req))

/** Handles a request and checks it got NO_ERROR; a test's setup uses this to fail loudly. */
export const handleOk = (req: JobControlRequest) =>
  Effect.tap(handle(req), (result) => {
    expect(result.reply.error, `${req.type}: ${JSON.stringify(result.reply.data)}`).toBeUndefined()
    expect(result.reply.data["ReturnStatus"]).toBe(1)
  })

export const store = (scope: string, jobOrder: JobOrder, method: "Store" | "StoreAndStart" = "Store") =>
  handle(methodRequest(method, scope, { JobOrder: jobOrder }))

/** Writes a job order in `state` directly, as if earlier methods had moved it there. */
export const putJobOrderInState = (scope: string, jobOrder: JobOrder, state: JobState) =>
  Effect.flatMap(JobOrderDao, (dao) =>
    dao.put({
      id: jobOrder.JobOrderID,
      scope,
      doc: encodeJobOrderRecord(jobOrder, state),
      priority: jobOrder.Priority ?? 0,
      expectedVersion: 0,
      change: "test-setup",
      ...(state.main === "EndState" ? { retainMs: 60_000 } : {})
    })
  )

export const statusOf = (result: HandleResult) => result.reply.data["ReturnStatus"]

/**
 * Every key under the test's prefix with its type and full content (TTLs only as present or
 * not, since they tick): equal snapshots mean nothing was written.
 */
export const snapshot = Effect.gen(function* () {
  const valkey = yield* Valkey
  const prefix = valkey.options.prefix!
  return yield* valkey.command("snapshot", async (c) => {
    const keys: Array<string> = []
    let cursor = "0"
    do {
      const [next, batch] = await c.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000)
      keys.push(...batch)
      cursor = next
    } while (cursor !== "0")
    const entries: Array<[string, string]> = []
    for (const key of keys.sort()) {
      const type = await c.type(key)
      const ttl = (await c.pttl(key)) > 0
      let content: unknown
      if (type === "string") content = await c.get(key)
      else if (type === "hash") content = Object.entries(await c.hgetall(key)).sort()
      else if (type === "set") content = (await c.smembers(key)).sort()
      else if (type === "zset") content = await c.zrange(key, 0, -1, "WITHSCORES")
      else if (type === "stream") content = await c.xrange(key, "-", "+")
      else if (type === "list") content = await c.lrange(key, 0, -1)
      entries.push([key, JSON.stringify({ type, ttl, content })])
    }
    return Object.fromEntries(entries)
  })
})

/** The last change entry's change word of a scope's stream. */
export const lastChange = (scope: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* valkey.key("changes", { scope })
    const [entry] = yield* valkey.command("last change", (c) => c.xrevrange(key, "+", "-", "COUNT", 1))
    if (!entry) return undefined
    const fields = entry[1]
    const map = new Map<string, string>()
    for (let i = 0; i < fields.length; i += 2) map.set(fields[i]!, fields[i + 1]!)
    return { id: map.get("id"), change: map.get("change"), v: Number(map.get("v")) }
  })

/** PTTL of a job order's document key. */
export const jobOrderTtl = (id: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* valkey.key("jobOrder", { id })
    return yield* valkey.command("pttl", (c) => c.pttl(key))
  })
