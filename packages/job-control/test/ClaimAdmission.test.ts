import { Effect, Result, Option, Tracer } from "effect"
import { expect, layer } from "@effect/vitest"
import { ClaimResult, DedupeStore, Valkey, WrongType } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { admissionTarget, exactlyOnce, JobControl, parsedRequest } from "@microdcs/job-control"
import { configRequest, handleOk, methodRequest, store, world } from "./Kit.js"

const jobOrder = (id: string) => ({ JobOrderID: id, Priority: 1 })

layer(world())("the claim with the admission reads (Store, StoreAndStart)", (it) => {
  it.effect("reads whether the id is taken and the scope's limit, once the claim is taken", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      yield* handleOk(configRequest("jobacceptance", "adm-1", { Limit: 5 }))
      yield* store("adm-1", jobOrder("taken"))
      const taken = yield* dedupe.claimWithAdmission("urn:mes", "a-1", "tok-1", 5_000, { id: "taken", scope: "adm-1" })
      expect(taken).toEqual(ClaimResult.Claimed({ key: taken.key, alreadyHeld: false, admission: Result.succeed({ exists: true, limit: Option.some(5) }) }))
      const fresh = yield* dedupe.claimWithAdmission("urn:mes", "a-2", "tok-2", 5_000, { id: "new", scope: "adm-unset" })
      expect(fresh).toEqual(ClaimResult.Claimed({ key: fresh.key, alreadyHeld: false, admission: Result.succeed({ exists: false, limit: Option.none() }) }))
      // The same token again holds it already; a done event answers with the reply kept.
      const again = yield* dedupe.claimWithAdmission("urn:mes", "a-2", "tok-2", 5_000, { id: "new", scope: "adm-unset" })
      expect(again._tag === "Claimed" && again.alreadyHeld).toBe(true)
      yield* dedupe.markDone("urn:mes", "a-2", "tok-2", 60_000, '{"kept":1}')
      const done = yield* dedupe.claimWithAdmission("urn:mes", "a-2", "tok-3", 5_000, { id: "new", scope: "adm-unset" })
      expect(done).toEqual(ClaimResult.Done({ key: done.key, reply: '{"kept":1}' }))
      // Another token's live claim is Busy, as with `claim`.
      const busy = yield* Effect.flip(dedupe.claimWithAdmission("urn:mes", "a-1", "tok-4", 5_000, { id: "taken", scope: "adm-1" }))
      expect(busy._tag).toBe("Busy")
    })
  )

  it.effect("reads which of the named work masters the scope lists, in the order asked", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      yield* handleOk(configRequest("workmaster", "adm-wm", { ID: "wm-a" }))
      const claimed = yield* dedupe.claimWithAdmission("urn:mes", "a-wm", "tok-wm", 5_000, { id: "j-wm", scope: "adm-wm", workMasters: ["wm-x", "wm-a", "wm-y"] })
      expect(claimed._tag === "Claimed" && claimed.admission).toEqual(Result.succeed({ exists: false, limit: Option.none(), unknownWorkMasters: ["wm-x", "wm-y"] }))
      // A work master list of another type fails the admission as the processor's own read would.
      const valkey = yield* Valkey
      const list = valkey.keys.key("workMasterList", { scope: "adm-wm-bad" }) as string
      yield* unsafeCommand(valkey, "corrupt the list", (c) => c.set(list, "not a set"))
      const corrupt = yield* dedupe.claimWithAdmission("urn:mes", "a-wm-2", "tok-wm-2", 5_000, { id: "j-wm", scope: "adm-wm-bad", workMasters: ["wm-a"] })
      const read = corrupt._tag === "Claimed" ? corrupt.admission : undefined
      expect(read !== undefined && Result.isFailure(read) && read.failure).toBeInstanceOf(WrongType)
      // Named none: the list is neither checked nor read.
      const none = yield* dedupe.claimWithAdmission("urn:mes", "a-wm-3", "tok-wm-3", 5_000, { id: "j-wm", scope: "adm-wm-bad", workMasters: [] })
      expect(none._tag === "Claimed" && none.admission).toEqual(Result.succeed({ exists: false, limit: Option.none() }))
    })
  )

  it.effect("Store through the claim's reads refuses an unknown work master as without them, and stores a known one", () =>
    Effect.gen(function* () {
      const jobControl = yield* JobControl
      yield* handleOk(configRequest("workmaster", "adm-wm-4", { ID: "wm-known" }))
      const run = (id: string, workMaster: string) => {
        const request = { ...methodRequest("Store", "adm-wm-4", { JobOrder: { ...jobOrder(id), WorkMasterID: [{ ID: workMaster }] } }), id: `r-${id}` }
        const parsed = parsedRequest(request)
        const admitJobOrder = parsed !== undefined && Result.isSuccess(parsed.command) ? admissionTarget(parsed.command.success) : undefined
        expect(admitJobOrder?.workMasters).toEqual([workMaster])
        return exactlyOnce({ source: "urn:mes", id: request.id, admitJobOrder }, (claimed) => jobControl.handle(request, claimed)).pipe(
          Effect.map((outcome) => (outcome._tag === "Processed" ? { status: outcome.value.reply.data["ReturnStatus"], kind: outcome.value.reply.error?.kind, text: outcome.value.reply.error?.message } : outcome))
        )
      }
      expect(yield* run("j-unknown", "wm-gone")).toMatchObject({ status: 16, kind: "UnknownReference", text: expect.stringContaining("unknown workmaster: wm-gone") })
      expect(yield* run("j-known", "wm-known")).toEqual({ status: 1, kind: undefined, text: undefined })
    })
  )

  it.effect("a job order id that names no key claims without the reads; the processor's own read refuses it", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const claimed = yield* dedupe.claimWithAdmission("urn:mes", "a-3", "tok-5", 5_000, { id: "bad\uD800id", scope: "adm-2" })
      expect(claimed).toEqual(ClaimResult.Claimed({ key: claimed.key, alreadyHeld: false }))
    })
  )

  it.effect("a job order key of another type: claimed, the admission fails with WrongType, and the claim is given back", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const jobControl = yield* JobControl
      const key = valkey.keys.key("jobOrder", { id: "corrupt" }) as string
      yield* unsafeCommand(valkey, "corrupt the job order", (c) => c.set(key, "not a hash"))
      const request = methodRequest("Store", "adm-3", { JobOrder: jobOrder("corrupt") })
      const parsed = parsedRequest(request)
      const admitJobOrder = parsed !== undefined && Result.isSuccess(parsed.command) ? admissionTarget(parsed.command.success) : undefined
      expect(admitJobOrder).toEqual({ id: "corrupt", scope: "adm-3", workMasters: [] })
      const failed = yield* Effect.flip(exactlyOnce({ source: "urn:mes", id: "a-4", admitJobOrder }, (claimed) => jobControl.handle(request, claimed)))
      expect(failed).toBeInstanceOf(WrongType)
      // Given back: the redelivery claims at once (after the key is repaired, it is stored).
      yield* unsafeCommand(valkey, "repair", (c) => c.del(key))
      const again = yield* exactlyOnce({ source: "urn:mes", id: "a-4", admitJobOrder }, (claimed) => jobControl.handle(request, claimed))
      expect(again._tag === "Processed" && again.value.reply.data["ReturnStatus"]).toBe(1)
    })
  )

  it.effect("Store through the claim's reads answers as without them: an existing id, the limit", () =>
    Effect.gen(function* () {
      const jobControl = yield* JobControl
      yield* handleOk(configRequest("jobacceptance", "adm-4", { Limit: 1 }))
      const run = (id: string, requestId: string) => {
        const request = { ...methodRequest("Store", "adm-4", { JobOrder: jobOrder(id) }), id: requestId }
        const parsed = parsedRequest(request)
        const admitJobOrder = parsed !== undefined && Result.isSuccess(parsed.command) ? admissionTarget(parsed.command.success) : undefined
        return exactlyOnce({ source: "urn:mes", id: requestId, admitJobOrder }, (claimed) => jobControl.handle(request, claimed)).pipe(
          Effect.map((outcome) => (outcome._tag === "Processed" ? { status: outcome.value.reply.data["ReturnStatus"], kind: outcome.value.reply.error?.kind } : outcome))
        )
      }
      expect(yield* run("j-1", "s-1")).toEqual({ status: 1, kind: undefined })
      expect(yield* run("j-1", "s-2")).toEqual({ status: 16, kind: "AlreadyExists" })
      expect(yield* run("j-2", "s-3")).toEqual({ status: 16, kind: "LimitReached" })
    })
  )
})

layer(world())("JobControl.handle with a claim's reads", (it) => {
  it.effect("uses them only when they were read for the request's own job order", () =>
    Effect.gen(function* () {
      const jobControl = yield* JobControl
      const takenElsewhere = { jobOrder: { id: "other", scope: "adm-5" }, read: Result.succeed({ exists: true, limit: Option.none() }) }
      const request = methodRequest("Store", "adm-5", { JobOrder: jobOrder("mine") })
      const result = yield* jobControl.handle(request, { admission: takenElsewhere })
      expect(result.reply.data["ReturnStatus"]).toBe(1)
      // Read for this job order, they are what the store method judges by.
      const taken = { jobOrder: { id: "mine-2", scope: "adm-5" }, read: Result.succeed({ exists: true, limit: Option.none() }) }
      const refused = yield* jobControl.handle(methodRequest("Store", "adm-5", { JobOrder: jobOrder("mine-2") }), { admission: taken })
      expect(refused.reply.error?.kind).toBe("AlreadyExists")
    })
  )
})

layer(world())("the JobControl.handle span", (it) => {
  it.effect("is recorded when a tracer is installed", () =>
    Effect.gen(function* () {
      const names: Array<string> = []
      const native = yield* Effect.tracer
      const recording = Tracer.make({
        span: (options) => {
          names.push(options.name)
          return native.span(options)
        }
      })
      yield* store("span-1", jobOrder("sp-1")).pipe(Effect.withTracer(recording))
      expect(names).toContain("JobControl.handle")
    })
  )
})
