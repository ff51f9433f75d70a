import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { DeadLetterRedrive, Valkey, ValkeyLayer, ValkeyStreams } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

const prefix = randomPrefix("redrive")
const world = Layer.mergeAll(ValkeyStreams.Default, DeadLetterRedrive.Default).pipe(
  Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix }))
)

/** A work stream with `count` entries dead-lettered by group `g` (consumer `c`), as the poller does. */
const deadLettered = (scope: string, count: number) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const streams = yield* ValkeyStreams
    const stream = yield* valkey.key("sfcWork", { scope })
    const deadLetter = yield* streams.deadLetterKey("sfc", scope)
    yield* streams.ensureGroup(stream, "g")
    for (let i = 0; i < count; i++) {
      yield* unsafeCommand(valkey, "xadd", (c) => c.xadd(stream, "*", "job", `j${i}`, "n", String(i)) as Promise<string>)
    }
    const [batch] = yield* streams.readGroup({ streams: [stream], group: "g", consumer: "c", count })
    for (const entry of batch!.entries) {
      yield* streams.deadLetter({ stream, deadLetter, group: "g", id: entry.id, consumer: "c", error: "boom" })
    }
    const page = yield* streams.readDeadLetters("sfc", scope)
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
