import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { encodeJobOrderRecord, JobStates } from "@microdcs/job-state"
import { JobOrderDao } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { testStore } from "@microdcs/testkit"
import { JobOrderTransitions } from "@microdcs/sfc-runtime"
import { jobOrderFor, SCOPE } from "./RuntimeKit.js"

// A write's read of its job order (the gate of its sends) may leave the document out when this
// process holds a copy at that version: the copy answers then, and only then.

const layer = JobOrderTransitions.Default.pipe(Layer.provideMerge(testStore({ prefix: randomPrefix("sfc-held") })))
const recordIn = (state: keyof typeof JobStates) => encodeJobOrderRecord(jobOrderFor("jo-held", "wm-held"), JobStates[state])

describe("JobOrderTransitions: the held copy of a job order", () => {
  it.effect("answers a read at its version without the document, takes a read's document as the new copy, and never answers for another version", () =>
    Effect.gen(function* () {
      yield* (yield* JobOrderDao).put({ id: "jo-held", scope: SCOPE, priority: 1, expectedVersion: 0, doc: recordIn("Running") })
      const transitions = yield* JobOrderTransitions
      expect(transitions.heldVersion("jo-held")).toBeUndefined()
      // Nothing held: a read without the document cannot be answered here (read again).
      expect(transitions.mainAfterWrite("jo-held", SCOPE, { version: 1, doc: undefined })).toBe(false)

      yield* transitions.load("jo-held")
      expect(transitions.heldVersion("jo-held")).toBe(1)
      expect(transitions.mainAfterWrite("jo-held", SCOPE, { version: 1, doc: undefined })).toBe("Running")
      // The job order moved on past the copy: the copy does not answer for that version.
      expect(transitions.mainAfterWrite("jo-held", SCOPE, { version: 2, doc: undefined })).toBe(false)

      // A read with its document: that is the copy now.
      expect(transitions.mainAfterWrite("jo-held", SCOPE, { version: 2, doc: recordIn("Interrupted_Suspended") })).toBe("Interrupted")
      expect(transitions.heldVersion("jo-held")).toBe(2)
      expect(transitions.mainAfterWrite("jo-held", SCOPE, { version: 2, doc: undefined })).toBe("Interrupted")

      // A read at the copy's version is answered by the copy, with or without its document.
      expect(transitions.mainAfterWrite("jo-held", SCOPE, { version: 2, doc: recordIn("Interrupted_Suspended") })).toBe("Interrupted")

      // A document that does not decode: no state, and no copy kept.
      expect(transitions.mainAfterWrite("jo-held", SCOPE, { version: 3, doc: "{" })).toBeUndefined()
      expect(transitions.heldVersion("jo-held")).toBeUndefined()
    }).pipe(Effect.provide(layer))
  )
})
