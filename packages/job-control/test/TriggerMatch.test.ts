import { describe, expect, it } from "vitest"
import { MethodEventTypes } from "@microdcs/job-state"
import type { TriggerRow } from "@microdcs/store"
import { compileTrigger, matchingTriggers, subjectPattern, triggerJobOrderId, triggerRequest } from "@microdcs/job-control"

const row = (extra: Partial<TriggerRow> = {}): TriggerRow => ({
  id: "t-1",
  scope: "line-1",
  type: "com.example.bin.empty.v1",
  workMasterId: "wm-restock",
  enabled: true,
  version: 1,
  updatedAt: "2026-01-01T00:00:00.000Z",
  ...extra
})

const event = { source: "urn:station:7", id: "ev-1", type: "com.example.bin.empty.v1", subject: "line-1/bin-3" }

describe("trigger matching (pure)", () => {
  it("fires on the type; without a subject pattern only for events of the trigger's scope", () => {
    const triggers = [compileTrigger(row())]
    expect(matchingTriggers(triggers, event).map((t) => t.id)).toEqual(["t-1"])
    expect(matchingTriggers(triggers, { ...event, subject: "line-1" })).toHaveLength(1)
    expect(matchingTriggers(triggers, { ...event, subject: "line-2/bin-3" })).toEqual([])
    expect(matchingTriggers(triggers, { ...event, type: "com.example.bin.full.v1" })).toEqual([])
    // No subject: the scope the transport found (a station topic's level) decides.
    expect(matchingTriggers(triggers, { ...event, subject: undefined, scope: "line-1" })).toHaveLength(1)
  })

  it("a subject pattern: * is any run of characters, the rest literal (dots and brackets included)", () => {
    expect(subjectPattern("line-1/bin-*").test("line-1/bin-3")).toBe(true)
    expect(subjectPattern("line-1/bin-*").test("line-1/bin-")).toBe(true)
    expect(subjectPattern("line-1/bin-*").test("line-2/bin-3")).toBe(false)
    expect(subjectPattern("a.b").test("axb")).toBe(false)
    expect(subjectPattern("[x]+").test("[x]+")).toBe(true)
    expect(subjectPattern("*").test("")).toBe(true)
    const wide = [compileTrigger(row({ subject: "*/bin-*" }))]
    expect(matchingTriggers(wide, { ...event, subject: "line-9/bin-1" })).toHaveLength(1)
    expect(matchingTriggers(wide, { ...event, subject: undefined })).toEqual([])
  })

  it("a disabled trigger fires for nothing", () => {
    expect(matchingTriggers([compileTrigger(row({ enabled: false }))], event)).toEqual([])
  })

  it("derives the job order id from the trigger and the event's (source, id), unambiguously", () => {
    const id = triggerJobOrderId("t-1", event)
    expect(id).toMatch(/^trg-t-1-[0-9a-f]{32}$/)
    expect(triggerJobOrderId("t-1", { ...event })).toBe(id)
    expect(triggerJobOrderId("t-2", event)).not.toBe(id)
    expect(triggerJobOrderId("t-1", { source: "a:b", id: "c" })).not.toBe(triggerJobOrderId("t-1", { source: "a", id: "b:c" }))
  })

  it("builds a StoreAndStart of the trigger's work master with its defaults, in its scope", () => {
    const request = triggerRequest(row({ priority: 7, requirements: { EquipmentRequirements: [{ ID: "agv-1" }] } }), event, "urn:island", "a1")
    expect(request).toMatchObject({
      type: MethodEventTypes.StoreAndStart,
      subject: "line-1",
      source: "urn:island",
      id: `${triggerJobOrderId("t-1", event)}.a1`,
      data: {
        JobOrder: {
          JobOrderID: triggerJobOrderId("t-1", event),
          WorkMasterID: [{ ID: "wm-restock" }],
          Priority: 7,
          EquipmentRequirements: [{ ID: "agv-1" }]
        }
      }
    })
  })
})
