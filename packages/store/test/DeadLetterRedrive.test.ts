import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { DeadLetterRedrive, EXECUTION_LOG_COMMIT_KIND, type ScopedFamily, Valkey, ValkeyLayer, ValkeyStreams } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

const prefix = randomPrefix("redrive")
const world = Layer.mergeAll(ValkeyStreams.Default, DeadLetterRedrive.Default).pipe(
  Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix }))
)

/** A work stream (or the `family` stream of `kind`) with `count` entries dead-lettered by group `g` (consumer `c`), as the poller does. */
const deadLettered = (scope: string, count: number, kind = "sfc", family: ScopedFamily = "sfcWork") =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const streams = yield* ValkeyStreams
    const stream = yield* valkey.key(family, { scope })
    const deadLetter = yield* streams.deadLetterKey(kind, scope)
    yield* streams.ensureGroup(stream, "g")
    for (let i = 0; i < count; i++) {
      yield* unsafeCommand(valkey, "xadd", (c) => c.xadd(stream, "*", "job", `j${i}`, "n", String(i)) as Promise<string>)
    }
    const [batch] = yield* streams.readGroup({ streams: [stream], group: "g", consumer: "c", count })
    for (const entry of batch!.entries) {
      yield* streams.deadLetter({ stream, deadLetter, group: "g", id: entry.id, consumer: "c", error: "boom" })
    }
    const page = yield* streams.readDeadLetters(kind, scope)
    return { stream, deadLetter, page }
  })

const newEntries = (stream: string) =>
  Effect.flatMap(ValkeyStreams, (streams) => streams.readGroup({ streams: [stream], group: "g", consumer: "c2", count: 100 }))

layer(world)("DeadLetterRedrive", (it) => {
  it.effect("redrives one dead letter: its fields come back at the stream's end, and it leaves the dead-letter stream", () =>
    Effect.gen(function* () {
      const redrive = yield* DeadLetterRedrive
      const { stream, page } = yield* deadLettered("one", 2)
      const first = page.entries[0]!
      const outcome = yield* redrive.redrive("sfc", "one", first.id)
      expect(outcome).toMatchObject({ status: "redriven", stream, deadLetterId: first.id })
      const [batch] = yield* newEntries(stream)
      expect(batch!.entries.map((e) => e.fields)).toEqual([{ job: "j0", n: "0" }])
      const left = yield* Effect.flatMap(ValkeyStreams, (s) => s.readDeadLetters("sfc", "one"))
      expect(left.entries.map((e) => e.id)).toEqual([page.entries[1]!.id])
      // A second redrive of the same id finds nothing: never delivered twice.
      expect(yield* Effect.flip(redrive.redrive("sfc", "one", first.id))).toMatchObject({ _tag: "NotFound" })
    })
  )

  it.effect("redrives all, oldest first, over more than one page", () =>
    Effect.gen(function* () {
      const redrive = yield* DeadLetterRedrive
      const { stream } = yield* deadLettered("all", 130)
      const summary = yield* redrive.redriveAll("sfc", "all")
      expect({ redriven: summary.redriven, skipped: summary.skipped }).toEqual({ redriven: 130, skipped: 0 })
      const [batch] = yield* newEntries(stream)
      expect(batch!.entries.map((e) => e.fields.n)).toEqual(Array.from({ length: 100 }, (_, i) => String(i)))
      expect((yield* Effect.flatMap(ValkeyStreams, (s) => s.readDeadLetters("sfc", "all"))).entries).toEqual([])
    })
  )

  it.effect("redrives the execution log's commit requests (dagcommit) back to dag:commits:{scope}", () =>
    Effect.gen(function* () {
      const redrive = yield* DeadLetterRedrive
      const { stream, page } = yield* deadLettered("commits", 3, EXECUTION_LOG_COMMIT_KIND, "executionLogCommits")
      expect(stream).toContain(":dag:commits:")
      expect(yield* redrive.redrive(EXECUTION_LOG_COMMIT_KIND, "commits", page.entries[0]!.id)).toMatchObject({ status: "redriven", stream })
      const rest = yield* redrive.redriveAll(EXECUTION_LOG_COMMIT_KIND, "commits")
      expect({ redriven: rest.redriven, skipped: rest.skipped }).toEqual({ redriven: 2, skipped: 0 })
      const [batch] = yield* newEntries(stream)
      expect(batch!.entries.map((e) => e.fields.n)).toEqual(["0", "1", "2"])
      expect((yield* Effect.flatMap(ValkeyStreams, (s) => s.readDeadLetters(EXECUTION_LOG_COMMIT_KIND, "commits"))).entries).toEqual([])
    })
  )

  it.effect("a dead letter goes back only to its own kind's stream; an unknown kind is refused, naming the kinds", () =>
    Effect.gen(function* () {
      const redrive = yield* DeadLetterRedrive
      const valkey = yield* Valkey
      // A dead letter under dlq:sfc:... that names the scope's change stream: not the sfc work stream, refused.
      const { deadLetter } = yield* deadLettered("mixed", 1)
      const changes = yield* valkey.key("changes", { scope: "mixed" })
      const misfiled = yield* unsafeCommand(valkey, "xadd", (c) =>
        c.xadd(deadLetter, "*", "dlq.stream", changes, "dlq.group", "g", "dlq.id", "1-1", "dlq.deliveries", "1", "dlq.consumer", "c", "dlq.error", "x", "dlq.ts", "0", "job", "j") as Promise<string>
      )
      expect(yield* Effect.flip(redrive.redrive("sfc", "mixed", misfiled))).toMatchObject({ _tag: "InvalidInput", field: "deadLetter" })
      expect(yield* unsafeCommand(valkey, "xlen", (c) => c.xlen(changes))).toBe(0)
      const unknown = yield* Effect.flip(redrive.redriveAll("bogus", "mixed"))
      expect(unknown).toMatchObject({ _tag: "InvalidInput", field: "kind" })
      expect(unknown.message).toContain("changes, sfc, dagcommit")
      expect(yield* Effect.flip(redrive.redrive("bogus", "mixed", misfiled))).toMatchObject({ _tag: "InvalidInput", field: "kind" })
    })
  )

  it.effect("bad input changes nothing: a malformed id, a bad scope, a wrong-type key, a dead letter naming a foreign stream", () =>
    Effect.gen(function* () {
      const redrive = yield* DeadLetterRedrive
      const valkey = yield* Valkey
      const { deadLetter, page } = yield* deadLettered("bad", 1)
      expect(yield* Effect.flip(redrive.redrive("sfc", "bad", "not-an-id"))).toMatchObject({ _tag: "InvalidInput", field: "id" })
      expect(yield* Effect.flip(redrive.redrive("sfc", "", page.entries[0]!.id))).toMatchObject({ _tag: "InvalidInput" })
      // A hand-written dead letter that points outside the island is refused, and stays.
      const forged = yield* unsafeCommand(valkey, "xadd", (c) =>
        c.xadd(deadLetter, "*", "dlq.stream", "elsewhere:stream", "dlq.group", "g", "dlq.id", "1-1", "dlq.deliveries", "1", "dlq.consumer", "c", "dlq.error", "x", "dlq.ts", "0", "job", "j") as Promise<string>
      )
      expect(yield* Effect.flip(redrive.redrive("sfc", "bad", forged))).toMatchObject({ _tag: "InvalidInput", field: "deadLetter" })
      expect(yield* unsafeCommand(valkey, "xlen", (c) => c.xlen(deadLetter))).toBe(2)
      const wrong = yield* valkey.key("deadLetterStream", { kind: "sfc", scope: "wrongtype" })
      yield* unsafeCommand(valkey, "set", (c) => c.set(wrong, "x"))
      expect(yield* Effect.flip(redrive.redriveAll("sfc", "wrongtype"))).toMatchObject({ _tag: "WrongType", key: wrong })
    })
  )
})
