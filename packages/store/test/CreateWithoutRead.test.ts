import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { JobResponseDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { IndexReadHook } from "@microdcs/store/testing"

// Issue 11: a create-only put of a document whose index keys depend on stored fields (a job
// response) sends no read first: a document that does not exist has none of them. One that
// exists makes the script refuse the create, so nothing is written twice.

const prefix = randomPrefix()
const layer = JobResponseDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

const response = (id: string, state: string, expectedVersion: number) => ({
  id, scope: "line-1", orderId: `jo-${id}`, state, startTime: 5, expectedVersion,
  doc: JSON.stringify({ ID: id, JobOrderID: `jo-${id}`, JobState: state })
})

describe("a create-only put", () => {
  it.effect("reads no stored fields; a second create of the same id is a VersionConflict that changes nothing; an update reads", () =>
    Effect.gen(function* () {
      const responses = yield* JobResponseDao
      const valkey = yield* Valkey
      const reads: Array<string> = []
      const hook = { afterRead: (key: string) => Effect.sync(() => void reads.push(key)) }
      const key = yield* valkey.key("jobResponse", { id: "r-1" })

      expect((yield* responses.put(response("r-1", "Ended_Completed", 0)).pipe(Effect.provideService(IndexReadHook, hook))).version).toBe(1)
      expect(reads).toEqual([])

      const again = yield* Effect.flip(responses.put(response("r-1", "Aborted", 0)).pipe(Effect.provideService(IndexReadHook, hook)))
      expect(again._tag).toBe("VersionConflict")
      expect(yield* responses.get("r-1")).toMatchObject({ version: 1, doc: response("r-1", "Ended_Completed", 0).doc })

      expect((yield* responses.put(response("r-1", "Aborted", 1)).pipe(Effect.provideService(IndexReadHook, hook))).version).toBe(2)
      expect(reads).toContain(key)
    }).pipe(Effect.provide(layer))
  )
})
