import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, References, Result } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { type SfcCompareAndSetMany, SfcStateDao, UnknownOutcome, Valkey, type ValkeyService, ValkeyLayer } from "@microdcs/store"
import { withReplica, waitCalls } from "./ReplicaKit.js"
import { casWith, manyWith } from "./SfcStateKit.js"
import { dedicated } from "../src/RawDoor.js"

// compareAndSetMany when the call's reply is lost: each job is resolved by its op, as
// compareAndSet resolves its one write; a landed write is never reported failed, nor the reverse.

const prefix = randomPrefix()
const valkeyLayer = ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })
const services = SfcStateDao.Default.pipe(Layer.provideMerge(valkeyLayer))

const job = (jobId: string, scope: string, expectedVersion: number, extra: Partial<SfcCompareAndSetMany> = {}): SfcCompareAndSetMany =>
  manyWith(jobId, scope, expectedVersion, "{}", { entries: [{ type: "w", jobId }], ...extra })

const summary = (result: Result.Result<{ readonly version: number }, { readonly _tag: string }>) =>
  Result.match(result, { onFailure: (e) => e._tag, onSuccess: (w) => w.version })

const lost = new UnknownOutcome({ operation: "sfc-cas-many", message: "reply lost (test)" })

/**
 * The DAO over a `Valkey` whose script calls lose their reply: `lose(n)` says for call n (from 0)
 * whether the reply is lost after the script ran ("after"), before it was sent ("before"), or not.
 * `calls` records how many jobs each call carried.
 */
const losingDao = (lose: (n: number) => "after" | "before" | "no") =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const calls: Array<number> = []
    const script: ValkeyService["script"] = (descriptor, keys, args) =>
      Effect.suspend(() => {
        const n = calls.push((args as { readonly jobs?: ReadonlyArray<unknown> }).jobs?.length ?? 1) - 1
        const mode = lose(n)
        if (mode === "before") return Effect.fail(lost)
        const run = valkey.script(descriptor, keys, args)
        return mode === "after" ? Effect.andThen(run, Effect.fail(lost)) : run
      })
    const dao = yield* Effect.provide(SfcStateDao.make, Layer.succeed(Valkey, { ...valkey, script }))
    return { dao, calls }
  })

describe("compareAndSetMany with its reply lost", () => {
  it.effect("after the script ran: landed jobs are written (entryIds null), refused ones sent once more, undetermined ones UnknownOutcome", () =>
    Effect.gen(function* () {
      const plain = yield* SfcStateDao
      const held = { source: "station", id: "held" }
      yield* plain.compareAndSet(casWith("a-up", "a", 0, "{}"))
      yield* plain.compareAndSet(casWith("a-dup", "a", 0, "{}"))
      yield* plain.compareAndSet(casWith("a-holder", "a", 0, "{}", { appliedEvent: held }))
      yield* plain.compareAndSet(casWith("a-stale", "a", 0, "{}"))
      yield* plain.compareAndSet(casWith("a-stale", "a", 1, "{}"))
      const { dao, calls } = yield* losingDao((n) => (n === 0 ? "after" : "no"))
      const results = yield* dao.compareAndSetMany([
        job("a-up", "a", 1, { op: "op-up" }),
        job("a-dup", "a", 1, { appliedEvents: [held] }),
        job("a-stale", "a", 1),
        job("a-new", "a", 0, { op: "op-new" })
      ])
      expect(results.map(summary)).toEqual([2, "DuplicateEvent", "UnknownOutcome", 1])
      expect(results[0]).toEqual(Result.succeed({ version: 2, op: "op-up", entryIds: null }))
      expect(results[3]).toEqual(Result.succeed({ version: 1, op: "op-new", entryIds: null }))
      expect(Result.flip(results[1]!)).toEqual(Result.succeed(expect.objectContaining({ jobId: "a-holder", eventIndex: 0 })))
      expect(Result.flip(results[2]!)).toEqual(Result.succeed(lost))
      // The duplicate's job still had the version it expected: it alone was sent again.
      expect(calls).toEqual([4, 1])
      expect((yield* plain.get("a-up")).version).toBe(2)
      expect((yield* plain.get("a-dup")).version).toBe(1)
    }).pipe(Effect.provide(services))
  )

  it.effect("before the script ran: the jobs that provably did not land are sent once more, together; a stale one stays unknown", () =>
    Effect.gen(function* () {
      const plain = yield* SfcStateDao
      yield* plain.compareAndSet(casWith("b-up", "b", 0, "{}"))
      const { dao, calls } = yield* losingDao((n) => (n === 0 ? "before" : "no"))
      const results = yield* dao.compareAndSetMany([job("b-up", "b", 1), job("b-new", "b", 0), job("b-conflict", "b", 4)])
      // b-conflict's state is not at the version it expected: its op check cannot rule out a write.
      expect(results.map(summary)).toEqual([2, 1, "UnknownOutcome"])
      expect(results.map((r) => Result.isSuccess(r) && r.success.entryIds?.length)).toEqual([1, 1, false])
      expect(calls).toEqual([3, 2])
    }).pipe(Effect.provide(services))
  )

  it.effect("when no job's outcome can be learnt, the whole call fails as compareAndSet would", () =>
    Effect.gen(function* () {
      const plain = yield* SfcStateDao
      yield* plain.compareAndSet(casWith("c-moved", "c", 0, "{}"))
      yield* plain.compareAndSet(casWith("c-moved", "c", 1, "{}"))
      // The only job's state moved past the version it expected, and not by its op: undetermined.
      const undetermined = yield* losingDao((n) => (n === 0 ? "after" : "no"))
      expect(yield* Effect.flip(undetermined.dao.compareAndSetMany([job("c-moved", "c", 1)]))).toBe(lost)
      expect(undetermined.calls).toEqual([1])
      // Not landed, and the resend lost too: that resend's error, as compareAndSet's resend gives it.
      const resendLost = yield* losingDao(() => "before")
      expect(yield* Effect.flip(resendLost.dao.compareAndSetMany([job("c-new", "c", 0), job("c-moved", "c", 2)]))).toBe(lost)
      expect(resendLost.calls).toEqual([2, 2])
      expect((yield* plain.getMany(["c-new"])).map((r) => Result.isSuccess(r) && r.success._tag)).toEqual(["None"])
    }).pipe(Effect.provide(services))
  )
})

describe("compareAndSetMany under CLIENT KILL", () => {
  const stressName = `sfc-many-stress-${prefix}`
  const stressLayer = SfcStateDao.Default.pipe(
    Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix, connectionName: stressName, commandTimeoutMs: 10_000 }))
  )

  it.live(
    "every job reported written landed once, every job reported refused left no entry",
    () =>
      Effect.gen(function* () {
        const valkey = yield* Valkey
        const dao = yield* SfcStateDao
        const admin = yield* dedicated(valkey, "sfc-many-stress-killer")
        const scope = "stress"
        const written: Array<string> = []
        const refused: Array<string> = []
        const unsure: Array<string> = []
        const killer = yield* Effect.promise(async () => {
          const list = String(await admin.client("LIST"))
          for (const line of list.split("\n")) {
            const id = line.includes(` name=${stressName} `) ? /\bid=(\d+)/.exec(line)?.[1] : undefined
            if (id) await admin.client("KILL", "ID", id).catch(() => undefined)
          }
        }).pipe(Effect.andThen(Effect.sleep(Duration.millis(150))), Effect.forever, Effect.forkChild)
        const deadline = Date.now() + 5_000
        const writer = (w: number) =>
          Effect.gen(function* () {
            for (let i = 0; i < 200 && Date.now() < deadline; i++) {
              const ids = [0, 1, 2].map((k) => `doc-${(w + i + k) % 4}`)
              // A failed read makes create-only writes: true conflicts where the states exist.
              const reads = yield* Effect.result(dao.getMany(ids))
              const ops = ids.map((_, k) => `op-${w}-${i}-${k}`)
              const inputs = ids.map((id, k) => {
                const read = Result.isSuccess(reads) ? reads.success[k]! : undefined
                const version = read && Result.isSuccess(read) && read.success._tag === "Some" ? read.success.value.version : 0
                return job(id, scope, version, { op: ops[k], entries: [{ type: "w", op: ops[k]! }] })
              })
              const results = yield* Effect.result(dao.compareAndSetMany(inputs))
              if (Result.isFailure(results)) {
                unsure.push(...ops)
                continue
              }
              results.success.forEach((result, k) => {
                if (Result.isSuccess(result)) written.push(ops[k]!)
                else if (result.failure._tag === "VersionConflict") refused.push(ops[k]!)
                else unsure.push(ops[k]!)
              })
            }
          })
        yield* Effect.all([0, 1, 2, 3].map(writer), { concurrency: "unbounded", discard: true })
        yield* Fiber.interrupt(killer)

        const work = yield* valkey.key("sfcWork", { scope })
        const entries = yield* Effect.promise(() => admin.xrange(work, "-", "+"))
        const landed = new Map<string, number>()
        for (const [, fields] of entries) {
          const op = fields[fields.indexOf("op") + 1]!
          landed.set(op, (landed.get(op) ?? 0) + 1)
        }
        expect(written.length).toBeGreaterThan(0)
        for (const op of written) expect(landed.get(op), `written ${op}`).toBe(1)
        for (const op of refused) expect(landed.get(op), `refused ${op}`).toBeUndefined()
        for (const op of unsure) expect(landed.get(op) ?? 0, `unsure ${op}`).toBeLessThanOrEqual(1)
      }).pipe(Effect.scoped, Effect.provide(stressLayer), Effect.provideService(References.MinimumLogLevel, "Error")),
    60_000
  )
})

describe("compareAndSetMany with minReplicasAck", () => {
  it.live("without a replica: the call is UnknownOutcome, and no op check calls its jobs landed", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const failed = yield* Effect.flip(dao.compareAndSetMany([job("r-1", "r", 0, { op: "op-r-1" }), job("r-2", "r", 0)]))
      expect(failed._tag).toBe("UnknownOutcome")
      const check = yield* Effect.result(dao.outcome("r-1", "op-r-1"))
      expect(Result.isFailure(check) && check.failure._tag).toBe("UnknownOutcome")
    }).pipe(
      Effect.provide(
        SfcStateDao.Default.pipe(
          Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: randomPrefix("sm-ra"), minReplicasAck: 1, replicaAckTimeoutMs: 100 }))
        )
      )
    )
  )

  it.live("with a replica: the whole batch is confirmed by one WAIT", () =>
    withReplica((primary) =>
      Effect.gen(function* () {
        const dao = yield* SfcStateDao
        // The first call loads the script (NOSCRIPT fallback: a WAIT of its own).
        expect((yield* dao.compareAndSetMany([job("warm", "s", 0)])).map(summary)).toEqual([1])
        const before = yield* Effect.promise(() => waitCalls(primary))
        const results = yield* dao.compareAndSetMany(["j-1", "j-2", "j-3", "j-4", "j-5"].map((id) => job(id, "s", 0)))
        expect(results.map(summary)).toEqual([1, 1, 1, 1, 1])
        expect((yield* Effect.promise(() => waitCalls(primary))) - before).toBe(1)
      }).pipe(
        Effect.provide(
          SfcStateDao.Default.pipe(
            Layer.provideMerge(ValkeyLayer.layer({ url: primary.url, prefix: randomPrefix("sm-ra"), minReplicasAck: 1, replicaAckTimeoutMs: 2000 }))
          )
        )
      )
    )
  )
})
