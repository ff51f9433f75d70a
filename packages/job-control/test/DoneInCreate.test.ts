import { Effect, Result } from "effect"
import { dedupeHash } from "@microdcs/keyschema"
import { expect, layer } from "@effect/vitest"
import { DedupeStore, JobOrderDao, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { admissionTarget, exactlyOnce, type HandleResult, JobControl, type JobControlRequest, parsedRequest } from "@microdcs/job-control"
import { methodRequest, store, world } from "./Kit.js"

/**
 * A Store or StoreAndStart run exactly once lands its done mark with its create, in one round
 * trip: no mark follows the processing, a duplicate gets the very reply returned, and a claim
 * lost before the create writes nothing. A refusal is still marked after, with its own reply.
 */

const jobOrder = (id: string) => ({ JobOrderID: id, Priority: 1 })
const keptReply = (result: HandleResult) => JSON.stringify(result.reply)

/** The real dedupe store, counting the done marks written after processing. */
const countingMarks = Effect.gen(function* () {
  const real = yield* DedupeStore
  const marks: Array<string | undefined> = []
  const service: DedupeStore["Service"] = {
    ...real,
    markDone: (source, id, token, ttlMs, reply) => Effect.andThen(Effect.sync(() => marks.push(reply)), real.markDone(source, id, token, ttlMs, reply))
  }
  return { service, marks }
})

/** Runs `request` exactly once through job control, as the ingress does; `before` runs once claimed. */
const runOnce = (request: JobControlRequest, options: { storedReply?: (r: HandleResult) => string; before?: Effect.Effect<void> } = {}) =>
  Effect.gen(function* () {
    const jobControl = yield* JobControl
    const parsed = parsedRequest(request)
    const admitJobOrder = parsed !== undefined && Result.isSuccess(parsed.command) ? admissionTarget(parsed.command.success) : undefined
    const storedReply = options.storedReply ?? keptReply
    return yield* exactlyOnce({ source: "urn:mes", id: request.id, admitJobOrder, storedReply }, (claimed) =>
      Effect.andThen(options.before ?? Effect.void, jobControl.handle(request, claimed))
    )
  })

layer(world())("the done mark with the create (Store, StoreAndStart)", (it) => {
  it.effect("lands with the create: no mark after, and a duplicate is answered with the reply returned", () =>
    Effect.gen(function* () {
      const { service, marks } = yield* countingMarks
      for (const method of ["Store", "StoreAndStart"] as const) {
        const request = methodRequest(method, "dc-1", { JobOrder: jobOrder(`dc-${method}`) })
        const first = yield* Effect.provideService(runOnce(request), DedupeStore, service)
        expect(first._tag === "Processed" && first.value.reply.data).toEqual({ ReturnStatus: 1, JobOrderID: `dc-${method}` })
        expect(first._tag === "Processed" && first.value.statusEvents).toMatchObject([{ jobOrderId: `dc-${method}`, version: 1, method }])
        const again = yield* Effect.provideService(runOnce(request), DedupeStore, service)
        expect(again).toEqual({ _tag: "Duplicate", reason: "done", reply: first._tag === "Processed" ? keptReply(first.value) : "" })
      }
      expect(marks).toEqual([])
      expect((yield* (yield* JobOrderDao).get("dc-StoreAndStart")).version).toBe(1)
    })
  )

  it.effect("a refused create is marked after processing, with the refusal kept for duplicates", () =>
    Effect.gen(function* () {
      const { service, marks } = yield* countingMarks
      yield* store("dc-2", jobOrder("dc-taken"))
      const request = methodRequest("Store", "dc-2", { JobOrder: jobOrder("dc-taken") })
      const first = yield* Effect.provideService(runOnce(request), DedupeStore, service)
      expect(first._tag === "Processed" && first.value.reply.error?.kind).toBe("AlreadyExists")
      expect(marks).toEqual([first._tag === "Processed" ? keptReply(first.value) : ""])
      expect(yield* runOnce(request)).toMatchObject({ _tag: "Duplicate", reply: marks[0] })
    })
  )

  it.effect("a claim another holder took before the create: LeaseLost, and no job order is written", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const request = methodRequest("Store", "dc-3", { JobOrder: jobOrder("dc-lost") })
      const takeOver = Effect.gen(function* () {
        const key = yield* valkey.key("dedupe", { hash: dedupeHash("urn:mes", request.id) })
        yield* unsafeCommand(valkey, "take over", (c) => c.set(key, "processing:someone-else", "PX", 60_000))
      }).pipe(Effect.orDie)
      const failed = yield* Effect.flip(runOnce(request, { before: takeOver }))
      expect(failed._tag).toBe("LeaseLost")
      const missing = yield* Effect.flip((yield* JobOrderDao).get("dc-lost"))
      expect(missing._tag).toBe("NotFound")
    })
  )

  it.effect("a reply too long to keep: the create is a plain put, the mark follows without the reply", () =>
    Effect.gen(function* () {
      const { service, marks } = yield* countingMarks
      const valkey = yield* Valkey
      const huge = "x".repeat(valkey.maxDocumentBytes + 1)
      const request = methodRequest("Store", "dc-4", { JobOrder: jobOrder("dc-huge") })
      const first = yield* Effect.provideService(runOnce(request, { storedReply: () => huge }), DedupeStore, service)
      expect(first._tag).toBe("Processed")
      expect(marks).toEqual([huge, undefined])
      expect(yield* runOnce(request)).toEqual({ _tag: "Duplicate", reason: "done", reply: undefined })
    })
  )
})
