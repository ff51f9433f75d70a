import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { documentProblem, jsonDocument, WorkMasterDao, ValkeyLayer } from "@microdcs/store"

// Issue 11: a text the store's `jsonDocument` built is JSON by construction, so the document
// check does not parse it again (the engine's ~1 kB state text, once per step). Every other
// text is still parsed and refused when it is not JSON.

const prefix = randomPrefix()
const layer = WorkMasterDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

describe("jsonDocument", () => {
  it("is JSON.stringify's text; its first check does not parse it, a second one does", () => {
    const value = { id: "wm-1", steps: [1, 2, 3], note: "caf\u00e9 \ud83d\ude00" }
    const text = jsonDocument(value)
    expect(text).toBe(JSON.stringify(value))
    const parse = vi.spyOn(JSON, "parse")
    try {
      expect(documentProblem("doc", text, 1_000_000)).toBeUndefined()
      expect(parse).not.toHaveBeenCalled()
      // Remembered until its first check only: the same text again is parsed like any other.
      expect(documentProblem("doc", text, 1_000_000)).toBeUndefined()
      expect(parse).toHaveBeenCalledTimes(1)
    } finally {
      parse.mockRestore()
    }
  })

  it("skips no other check: a built text over the size limit is refused", () => {
    const text = jsonDocument({ big: "x".repeat(400) })
    expect(documentProblem("doc", text, 100)?.message).toMatch(/bytes; the limit is 100/)
  })

  it("a lone surrogate comes out escaped, so the text is well-formed", () => {
    const text = jsonDocument({ broken: "\ud800" })
    expect(text.isWellFormed()).toBe(true)
    expect(documentProblem("doc", text, 1_000_000)).toBeUndefined()
  })

  it.effect("a put of a built text stores it as given; a text that is not JSON is still refused and changes nothing", () =>
    Effect.gen(function* () {
      const workMasters = yield* WorkMasterDao
      const doc = jsonDocument({ ID: "wm-json", data: { Steps: [] } })
      yield* workMasters.put({ id: "wm-json", scope: "line-1", doc, expectedVersion: -1 })
      expect((yield* workMasters.get("wm-json")).doc).toBe(doc)
      const refused = yield* workMasters.put({ id: "wm-json", scope: "line-1", doc: "{not json", expectedVersion: -1 }).pipe(Effect.flip)
      expect(refused._tag).toBe("InvalidInput")
      expect((yield* workMasters.get("wm-json")).doc).toBe(doc)
    }).pipe(Effect.provide(layer))
  )
})
