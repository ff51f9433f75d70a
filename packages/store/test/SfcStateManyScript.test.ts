import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Result } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { scriptKeys, sfcCompareAndSetMany } from "@microdcs/lua-scripts"
import { SfcStateDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { casWith, snapshotOf } from "./SfcStateKit.js"

// The sfc-cas-many script's refusal of malformed arguments, and SfcStateDao.getMany.

const prefix = randomPrefix()
const services = SfcStateDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

const state = (n: number) => JSON.stringify({ status: "running", n })

const everything = snapshotOf(prefix)

describe("sfc-cas-many arguments", () => {
  it.effect("malformed arguments are an error of the whole call, raised before any job is written", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const keysOf = (jobId: string) =>
        Effect.all({ state: valkey.key("sfcState", { jobId }), work: valkey.key("sfcWork", { scope: "m" }), due: valkey.key("sfcDue", { scope: "m" }), active: valkey.key("sfcActive", { scope: "m" }) })
      const one = (jobId: string) =>
        Effect.map(keysOf(jobId), (keys) => ({ keys, expectedVersion: 0, scope: "m", jobId, op: `op-${jobId}`, doc: "{}", due: null, active: true, nudge: true, events: [], waitsJoin: [], waitsLeave: [], entries: [[["type", "x"]] as const] }))
      const args = { nudgeChannel: "", eventLifetimeMs: 1000, jobs: [yield* one("m-1"), yield* one("m-2")] }
      const keys = scriptKeys(sfcCompareAndSetMany, {}, args)
      const argv = sfcCompareAndSetMany.encodeArgs(args).map(String)
      const raw = (k: ReadonlyArray<string>, a: ReadonlyArray<string>) =>
        unsafeCommand(valkey, "raw sfc-cas-many", (c) => c.eval(sfcCompareAndSetMany.source, k.length, ...k, ...a).then(() => "ok", (e: Error) => e.message))
      const before = yield* everything
      const secondVersion = 3 + 19 + 4
      const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, ReadonlyArray<string>]> = [
        ["a non-numeric version of the second job", keys, argv.map((a, i) => (i === secondVersion ? "two" : a))],
        ["a job id twice", keys, argv.map((a, i) => (i === secondVersion + 2 ? "m-1" : a))],
        ["one argument too many", keys, [...argv, "extra"]],
        ["one argument too few", keys, argv.slice(0, -1)],
        ["a key too many", [...keys, "k"], argv],
        ["a job count that is no count", keys, argv.map((a, i) => (i === 1 ? "1.5" : a))],
        ["an odd entry item count", keys, argv.map((a, i) => (i === secondVersion + 20 ? "3" : a))],
        ["a keyed wait count that is no count", keys, argv.map((a, i) => (i === secondVersion + 17 ? "x" : a))],
        ["a keyed wait more than the arguments hold", keys, argv.map((a, i) => (i === secondVersion + 18 ? "1" : a))],
        ["a move flag with no move", keys, argv.map((a, i) => (i === secondVersion + 15 ? "1" : a))],
        ["a response flag with no response", keys, argv.map((a, i) => (i === secondVersion + 16 ? "1" : a))],
        ["a flag that is neither 0 nor 1", keys, argv.map((a, i) => (i === secondVersion + 6 ? "yes" : a))]
      ]
      for (const [what, k, a] of cases) expect(yield* raw(k, a), what).toMatch(/sfc-cas-many: malformed arguments/)
      expect(yield* everything).toEqual(before)
      // The same arguments unharmed write both jobs.
      expect(yield* raw(keys, argv)).toBe("ok")
      expect((yield* (yield* SfcStateDao).getMany(["m-1", "m-2"])).map((r) => Result.isSuccess(r) && Option.isSome(r.success))).toEqual([true, true])
    }).pipe(Effect.provide(services))
  )
})

describe("SfcStateDao.getMany", () => {
  it.effect("reads present, missing, wrong-type and unnameable states in one call, in order", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const valkey = yield* Valkey
      yield* dao.compareAndSet(casWith("g-1", "g", 0, state(1)))
      const broken = yield* valkey.key("sfcState", { jobId: "g-broken" })
      yield* unsafeCommand(valkey, "corrupt", (c) => c.set(broken, "not a hash"))
      const reads = yield* dao.getMany(["g-1", "g-missing", "g-broken", "", "g-1"])
      expect(reads.map((r) => Result.match(r, { onFailure: (e) => e._tag, onSuccess: (o) => (Option.isSome(o) ? o.value.version : "none") }))).toEqual([
        1,
        "none",
        "WrongType",
        "InvalidInput",
        1
      ])
      expect(reads[0]).toEqual(Result.succeed(Option.some({ id: "g-1", scope: "g", version: 1, op: expect.any(String), doc: state(1) })))
      expect(Result.flip(reads[2]!)).toEqual(Result.succeed(expect.objectContaining({ key: broken, actual: "string", expected: "hash" })))
      expect(yield* dao.getMany([])).toEqual([])
    }).pipe(Effect.provide(services))
  )
})
