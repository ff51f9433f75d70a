import { Effect, Layer } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { TriggerStore } from "@microdcs/store"
import { randomPrefix, until } from "@microdcs/test-utils"
import { testStore } from "@microdcs/testkit"
import { type TriggerChange, TriggerChangeAnnouncer, TRIGGER_CONFIG_EVENT_TYPE, TriggerEditRelay } from "@microdcs/job-control"
import { handle, request, world } from "./Kit.js"

/**
 * Every trigger edit is announced once, wherever it was made: two instances relay (each with its
 * own connections and announcer, one island), a processor announces its own edits, and an edit
 * made through the store alone (the admin CLI) is announced by exactly one of the two.
 */

/** An announcer that records what it announced, under a name. */
const recording = (name: string, into: Array<readonly [string, TriggerChange]>) =>
  Layer.succeed(TriggerChangeAnnouncer, { announce: (change) => Effect.sync(() => void into.push([name, change])) })

const trigger = (id: string) => ({ id, scope: "relay", type: "com.example.bin.empty.v1", workMasterId: "wm-restock" })

describe("trigger edits announced once", () => {
  it.live("an edit through the store alone is relayed by one of two instances; a processor's own edit by none", () => {
    const prefix = randomPrefix("relay")
    const announced: Array<readonly [string, TriggerChange]> = []
    const instance = (name: string) => TriggerEditRelay({ connectionName: `relay-${name}` }).pipe(Layer.provide(recording(name, announced)), Layer.provide(testStore({ prefix })))
    const processor = world({}, { prefix }).pipe(Layer.provideMerge(recording("processor", announced)))
    const ofTrigger = (id: string) => announced.filter(([, c]) => c.id === id)
    const untilAnnounced = (id: string, count: number) => until(Effect.sync(() => ofTrigger(id).length), (n) => n >= count, { what: `${count} announcement(s) of ${id}` })

    return Effect.gen(function* () {
      yield* Layer.build(Layer.merge(instance("a"), instance("b")))
      const store = yield* TriggerStore
      // Like the admin CLI: a write with no announcer; its nudge says nobody announced it.
      const created = yield* store.put(trigger("t-cli"))
      yield* untilAnnounced("t-cli", 1)
      yield* store.disable("t-cli")
      yield* untilAnnounced("t-cli", 2)
      yield* store.remove("t-cli")
      yield* untilAnnounced("t-cli", 3)
      // A processor with an announcer announces its edit itself; the relays leave it alone.
      const put = yield* handle(request(TRIGGER_CONFIG_EVENT_TYPE, "relay", { id: "t-jc", type: "com.example.bin.empty.v1", workMasterId: "wm-restock" }))
      expect(put.reply.data["Version"]).toBe(1)
      // A later edit through the store: once it is relayed, both relays have passed the processor's edit.
      yield* store.put(trigger("t-marker"))
      yield* untilAnnounced("t-marker", 1)
      yield* Effect.sleep("300 millis") // room for a duplicate, should either relay have sent one
      expect(ofTrigger("t-cli").map(([, c]) => [c.change, c.version])).toEqual([["put", created.version], ["put", 2], ["delete", undefined]])
      expect(ofTrigger("t-cli").every(([name]) => name === "a" || name === "b")).toBe(true)
      expect(ofTrigger("t-jc")).toEqual([["processor", { id: "t-jc", scope: "relay", change: "put", version: 1 }]])
      expect(ofTrigger("t-marker")).toHaveLength(1)
    }).pipe(Effect.scoped, Effect.provide(processor))
  })
})
