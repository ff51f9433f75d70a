import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { makeStorageAvailability } from "@microdcs/execution-log"

describe("StorageAvailability", () => {
  it.effect("a database being started stays Starting when a commit finds it away; its own start failure makes it Waiting until it answers", () =>
    Effect.gen(function* () {
      const availability = yield* makeStorageAvailability({ _tag: "Starting" })
      // The storage role's commits fail while the database starts: readiness still says starting.
      yield* availability.waiting("the execution log's database is not started yet")
      expect(yield* availability.state).toEqual({ _tag: "Starting" })
      yield* TestClock.adjust("1 second")
      yield* availability.startFailed("ECONNREFUSED")
      yield* TestClock.adjust("1 second")
      yield* availability.startFailed("ETIMEDOUT")
      expect(yield* availability.state).toEqual({ _tag: "Waiting", since: 1000, reason: "ETIMEDOUT" })
      yield* availability.available
      expect(yield* availability.state).toEqual({ _tag: "Available" })
    })
  )

  it.effect("an available database a commit finds away is Waiting from then on, with the first reason, until it answers again", () =>
    Effect.gen(function* () {
      const availability = yield* makeStorageAvailability()
      yield* TestClock.adjust("5 seconds")
      yield* availability.waiting("Connection terminated unexpectedly")
      yield* TestClock.adjust("1 second")
      yield* availability.waiting("connect ECONNREFUSED")
      expect(yield* availability.state).toEqual({ _tag: "Waiting", since: 5000, reason: "Connection terminated unexpectedly" })
      yield* availability.available
      expect(yield* availability.state).toEqual({ _tag: "Available" })
    })
  )

  it.effect("a lost database is Waiting whatever the state said, its reason over the one a call reported first, until it answers again", () =>
    Effect.gen(function* () {
      const availability = yield* makeStorageAvailability()
      yield* TestClock.adjust("2 seconds")
      yield* availability.waiting("PgConnection: Connection closed")
      yield* TestClock.adjust("1 second")
      yield* availability.lost("the embedded PostgreSQL's thread ended (exit code 1)")
      expect(yield* availability.state).toEqual({ _tag: "Waiting", since: 2000, reason: "the embedded PostgreSQL's thread ended (exit code 1)" })
      yield* availability.available
      yield* availability.lost("the embedded PostgreSQL's thread ended (exit code 3)")
      expect(yield* availability.state).toEqual({ _tag: "Waiting", since: 3000, reason: "the embedded PostgreSQL's thread ended (exit code 3)" })
    })
  )
})
