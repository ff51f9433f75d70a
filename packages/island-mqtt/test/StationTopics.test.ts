import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { commandFilters, makeCloudEvent, topicMatches } from "@microdcs/cloudevents-mqtt"
import {
  commandEvent,
  scopeOfStationTopic,
  stationCommandFilter,
  stationCommandTopic,
  stationEventsFilter,
  stationEventsTopic,
  stationFailure
} from "@microdcs/island-mqtt"

const config = { prefix: "plant/island", discriminator: "d1", wildcardLevels: 3 }

describe("station topics", () => {
  it("lays out commands and events under P/station/{scope}[/D]", () => {
    expect(Result.getOrThrow(stationCommandTopic(config, "line-1"))).toBe("plant/island/station/line-1/d1/command")
    expect(Result.getOrThrow(stationEventsTopic(config, "line-1"))).toBe("plant/island/station/line-1/d1/events")
    expect(Result.getOrThrow(stationCommandFilter(config))).toBe("plant/island/station/+/d1/command")
    expect(Result.getOrThrow(stationEventsFilter({ ...config, stationLevel: "cells" }))).toBe("plant/island/cells/+/d1/events")
    expect(scopeOfStationTopic(config, "plant/island/station/line-1/d1/events")).toBe("line-1")
    expect(scopeOfStationTopic(config, "elsewhere/line-1/events")).toBeUndefined()
  })

  it("never matches the island's own command filters", () => {
    const filters = Result.getOrThrow(commandFilters(config))
    for (const scope of ["line-1", "station", "commands", "a.b"]) {
      const topic = Result.getOrThrow(stationCommandTopic(config, scope))
      expect(filters.some((f) => topicMatches(f, topic)), topic).toBe(false)
      expect(topicMatches(Result.getOrThrow(stationCommandFilter(config)), topic)).toBe(true)
    }
  })

  it("refuses a scope that would widen a subscription or span levels", () => {
    for (const scope of ["+", "#", "a/b", "", "$sys"]) {
      expect(Result.isFailure(stationCommandTopic(config, scope)), scope).toBe(true)
    }
  })
})

describe("station messages", () => {
  it("builds a push command: type, data, subject, correlation id, job id, a per-attempt id", () => {
    const event = commandEvent("urn:island", {
      type: "command", jobId: "jo-1", action: "drill", correlationId: "0f8fad5b-d9cb-469f-a165-70867728950e",
      typeId: "com.example.drill.v1", parameters: { depth: 3 }, subject: "line-1", attempt: 2
    })
    expect(event).toMatchObject({
      id: "0f8fad5b-d9cb-469f-a165-70867728950e.2",
      source: "urn:island",
      type: "com.example.drill.v1",
      subject: "line-1",
      data: { depth: 3 },
      extensions: { jobid: "jo-1", action: "drill", attempt: "2", correlationid: "0f8fad5b-d9cb-469f-a165-70867728950e" }
    })
  })

  it("reads a failure from the error extensions or an error field", () => {
    const base = { source: "urn:station", type: "com.example.drill.v1.reply" }
    expect(stationFailure(makeCloudEvent({ ...base, extensions: { mdcserrorkind: "StationError", mdcserrormessage: "jammed" } }))).toBe("StationError: jammed")
    expect(stationFailure(makeCloudEvent({ ...base, data: { error: "jammed" } }))).toBe("jammed")
    expect(stationFailure(makeCloudEvent({ ...base, data: { error: { code: 7 } } }))).toBe('{"code":7}')
    expect(stationFailure(makeCloudEvent({ ...base, data: { error: null, ok: true } }))).toBeUndefined()
    expect(stationFailure(makeCloudEvent({ ...base, data: [1, 2] }))).toBeUndefined()
  })
})
