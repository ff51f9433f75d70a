import { Effect, Layer } from "effect"
import { expect } from "@effect/vitest"
import {
  type JobOrder,
  type JobState,
  type Method,
  MethodEventTypes,
  type Query,
  QueryEventTypes
} from "@microdcs/job-state"
import { Valkey, type ValkeyOptions } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix } from "@microdcs/test-utils"
import { putJobOrder, testStore } from "@microdcs/testkit"
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
// Shared with the other packages' tests: every key under the prefix, to show that nothing was written.
export { snapshot } from "@microdcs/testkit"

/** The processor over the run's server with a fresh prefix; the store's services are exposed too. */
export const world = (settings: Partial<JobControlSettings> = {}, store: Partial<ValkeyOptions> = {}) =>
  jobControlLayer(settings).pipe(
    Layer.provideMerge(testStore({ prefix: randomPrefix("jc"), ...store }))
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
  Effect.tap(handle(req), (result) =>
    Effect.sync(() => {
      expect(result.reply.error, `${req.type}: ${JSON.stringify(result.reply.data)}`).toBeUndefined()
      expect(result.reply.data["ReturnStatus"]).toBe(1)
    })
  )

export const store = (scope: string, jobOrder: JobOrder, method: "Store" | "StoreAndStart" = "Store") =>
  handle(methodRequest(method, scope, { JobOrder: jobOrder }))

/** Writes a job order in `state` directly, as if earlier methods had moved it there. */
export const putJobOrderInState = (scope: string, jobOrder: JobOrder, state: JobState) =>
  putJobOrder(scope, jobOrder, { state, change: "test-setup" })

export const statusOf = (result: HandleResult) => result.reply.data["ReturnStatus"]

/** The last change entry's change word of a scope's stream. */
export const lastChange = (scope: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* valkey.key("changes", { scope })
    const [entry] = yield* unsafeCommand(valkey, "last change", (c) => c.xrevrange(key, "+", "-", "COUNT", 1))
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
    return yield* unsafeCommand(valkey, "pttl", (c) => c.pttl(key))
  })
