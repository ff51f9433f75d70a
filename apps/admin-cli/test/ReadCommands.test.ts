import { Effect, Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { inject } from "vitest"
import { Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix } from "@microdcs/test-utils"
import { type Cli, makeCli } from "./Cli.js"
import { decodeJobResponse } from "@microdcs/job-state"
import { OTHER_SCOPE, RESPONSE_T0, responseDocs, SCOPE, seedIsland, withStore } from "./Seed.js"

// Read-only commands against one seeded island: nothing here writes, so the tests share it.
const url = inject("valkeyUrl")
const prefix = randomPrefix("cli-read")
let cli: Cli

beforeAll(async () => {
  ;[cli] = await Promise.all([makeCli(url, prefix), seedIsland(url, prefix)])
})
afterAll(() => cli?.dispose())

const changesLength = () =>
  withStore(
    url,
    prefix,
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const key = yield* valkey.key("changes", { scope: SCOPE })
      return yield* unsafeCommand(valkey, "xlen", (c) => c.xlen(key))
    })
  )

/** The lines of a table, each split on runs of two or more blanks (cells are single-spaced inside). */
const rows = (text: string) => text.trimEnd().split("\n").map((line) => line.trim().split(/\s{2,}/))

describe("scopes, job orders, job responses", () => {
  it("scopes list: a table and the same counts as JSON", async () => {
    const [table, json] = await Promise.all([cli.run(["scopes", "list"]), cli.json(["scopes", "list"])])
    expect(table.code).toBe(0)
    expect(rows(table.stdout)[0]).toEqual(["SCOPE", "JOB ORDERS", "RESPONSES", "WORK MASTERS", "ACTIVE", "CHANGES", "SFC WORK"])
    expect(rows(table.stdout).slice(1).map((r) => r.slice(0, 5))).toEqual([
      [SCOPE, "3", "3", "2", "1"],
      [OTHER_SCOPE, "1", "0", "0", "0"]
    ])
    expect(json.scopes).toMatchObject([
      { scope: SCOPE, jobOrders: 3, jobResponses: 3, workMasters: 2, activeExecutions: 1, sfcWork: 3 },
      { scope: OTHER_SCOPE, jobOrders: 1, jobResponses: 0 }
    ])
  })

  it("joborders list: priority order, --state filter, --limit, unknown state is a usage error", async () => {
    const [table, running, limited, badState] = await Promise.all([
      cli.run(["joborders", "list", "--scope", SCOPE]),
      cli.json(["joborders", "list", "--scope", SCOPE, "--state", "Running"]),
      cli.json(["joborders", "list", "--limit", "2", "--scope", SCOPE]),
      cli.run(["joborders", "list", "--scope", SCOPE, "--state", "Runing"])
    ])
    expect(rows(table.stdout)).toEqual([
      ["ID", "STATE", "PRIORITY", "VERSION", "WORK MASTER"],
      ["jo-2", "Running", "7", "2", "wm-1"],
      ["jo-1", "AllowedToStart_Ready", "5", "2", "wm-1"],
      ["jo-4", "Ended_Completed", "2", "3", "wm-1"]
    ])
    // jo-3 was cleared and retired: it left the list.
    expect(running.jobOrders).toMatchObject([{ id: "jo-2", state: "Running", priority: 7, workMasterId: "wm-1", scope: SCOPE }])
    expect(limited.jobOrders.map((j: { id: string }) => j.id)).toEqual(["jo-2", "jo-1"])
    expect(badState.code).toBe(2)
    expect(badState.stderr).toContain("unknown state 'Runing'")
  })

  it("joborders list pages with a cursor: --after takes the 'next' of the previous page, with or without --state", async () => {
    const first = await cli.json(["joborders", "list", "--scope", SCOPE, "--limit", "2"])
    expect([first.jobOrders.map((j: { id: string }) => j.id), first.next]).toEqual([["jo-2", "jo-1"], "2"])
    const [second, table, running, runningAfter, bad] = await Promise.all([
      cli.json(["joborders", "list", "--scope", SCOPE, "--limit", "2", "--after", first.next]),
      cli.run(["joborders", "list", "--scope", SCOPE, "--limit", "2"]),
      cli.json(["joborders", "list", "--scope", SCOPE, "--state", "Running", "--limit", "1"]),
      cli.json(["joborders", "list", "--scope", SCOPE, "--state", "Running", "--limit", "1", "--after", "1"]),
      cli.run(["joborders", "list", "--scope", SCOPE, "--after", "jo-1"])
    ])
    expect([second.jobOrders.map((j: { id: string }) => j.id), second.next]).toEqual([["jo-4"], null])
    expect(table.stdout.trim().split("\n").at(-1)).toBe("more: --after 2")
    expect([running.jobOrders.map((j: { id: string }) => j.id), running.next]).toEqual([["jo-2"], "1"])
    expect([runningAfter.jobOrders, runningAfter.next]).toEqual([[], null])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--after takes the 'next' cursor")
  })

  it("joborders show: decoded state, document, change history; exit 3 on an unknown id", async () => {
    const [table, json, missing, missingJson] = await Promise.all([
      cli.run(["joborders", "show", "jo-3"]),
      cli.json(["joborders", "show", "jo-3"]),
      cli.run(["joborders", "show", "no-such-order"]),
      cli.run(["joborders", "show", "no-such-order", "--json"])
    ])
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^state:\s+EndState$/m)
    expect(table.stdout).toMatch(/^retired:\s+yes, expires in 6d 23h$/m)
    expect(table.stdout).toContain('"JobOrderID": "jo-3"')
    const history = table.stdout.slice(table.stdout.indexOf("History"))
    expect(rows(history).slice(2).map((r) => r[2])).toEqual(["StoreAndStart", "Run", "Stop", "Clear"])
    expect(json).toMatchObject({ id: "jo-3", scope: SCOPE, state: "EndState", version: 4, retired: true, problem: null })
    expect(json.document.JobOrder.JobOrderID).toBe("jo-3")
    expect(json.history.map((h: { change: string; version: number }) => [h.change, h.version])).toEqual([
      ["StoreAndStart", 1], ["Run", 2], ["Stop", 3], ["Clear", 4]
    ])
    expect(missing.code).toBe(3)
    expect(missing.stdout).toBe("")
    expect(missing.stderr).toContain("job order no-such-order does not exist")
    expect(missingJson.code).toBe(3)
    expect(JSON.parse(missingJson.stderr)).toMatchObject({ error: "NotFound", exitCode: 3 })
  })

  it("jobresponses list (by start time and by state), show, by-order; exit 3 on unknown ids", async () => {
    const [table, byState, show, byOrder, old, unknown, unknownOrder] = await Promise.all([
      cli.run(["jobresponses", "list", "--scope", SCOPE]),
      cli.json(["jobresponses", "list", "--scope", SCOPE, "--state", "Ended_Completed"]),
      cli.run(["jobresponses", "show", "jr-2"]),
      cli.json(["jobresponses", "by-order", "jo-4"]),
      cli.json(["jobresponses", "show", "jr-3"]),
      cli.run(["jobresponses", "show", "jr-none"]),
      cli.run(["jobresponses", "by-order", "jo-none"])
    ])
    expect(rows(table.stdout)).toEqual([
      ["ID", "JOB ORDER", "STATE", "VERSION"],
      ["jr-2", "jo-2", "Running", "1"],
      ["jr-3", "jo-3", "Ended_Completed", "1"],
      ["jr-4", "jo-4", "Ended_Completed", "1"]
    ])
    expect(byState.jobResponses.map((r: { id: string }) => r.id)).toEqual(["jr-3", "jr-4"])
    expect(show.stdout).toMatch(/^job order:\s+jo-2$/m)
    expect(show.stdout).toMatch(/ResultUpdate/)
    expect(byOrder).toMatchObject({ id: "jr-4", orderId: "jo-4", state: "Ended_Completed", scope: SCOPE, problems: null })
    expect(byOrder.document).toEqual(responseDocs(RESPONSE_T0).v2)
    expect(byOrder.history).toHaveLength(1)
    // A response the previous release stored (v1) is shown in the current form.
    expect(old.document).toEqual(Result.getOrThrow(decodeJobResponse(responseDocs(RESPONSE_T0).v1)))
    expect(old.document).toMatchObject({ JobResponseID: "jr-3", JobResponseData: [{ ID: "torque", Value: 86 }] })
    // One that does not decode is shown as stored, with every problem.
    expect(show.stdout).toMatch(/^start time:\s+2023-11-14T22:13:22\.000Z$/m)
    expect(show.stdout).toContain("Problems (the document does not decode)\nEndTime: Missing key\nJobState: Missing key\nData: Missing key\n")
    expect([unknown.code, unknownOrder.code]).toEqual([3, 3])
  })
})

describe("executions, configuration", () => {
  it("executions show and list", async () => {
    const [table, json, list, listJson, missing] = await Promise.all([
      cli.run(["executions", "show", "jo-2"]),
      cli.json(["executions", "show", "jo-2"]),
      cli.run(["executions", "list", "--scope", SCOPE]),
      cli.json(["executions", "list", "--scope", SCOPE]),
      cli.run(["executions", "show", "jo-1"])
    ])
    expect(table.stdout).toMatch(/^status:\s+running$/m)
    const active = table.stdout.slice(table.stdout.indexOf("Active steps"), table.stdout.indexOf("Actions"))
    expect(rows(active)[2]?.[0]).toBe("Work")
    const actions = table.stdout.slice(table.stdout.indexOf("Actions"), table.stdout.indexOf("Step history"))
    expect(rows(actions)[2]?.slice(0, 5)).toEqual(["tighten", "Work", "1", "dispatched", "1"])
    const history = table.stdout.slice(table.stdout.indexOf("Step history"), table.stdout.indexOf("Interventions"))
    expect(rows(history).slice(2).map((r) => r[0])).toEqual(["Init", "Work"])
    expect(json).toMatchObject({ jobId: "jo-2", scope: SCOPE, state: { status: "running", workMasterId: "wm-1" } })
    expect(json.state.history.map((h: { step: string }) => h.step)).toEqual(["Init", "Work"])
    expect(table.stdout.slice(table.stdout.indexOf("Interventions"))).toBe("Interventions\n(none)\n")
    expect(rows(list.stdout)[1]?.slice(0, 4)).toEqual(["jo-2", "running", "wm-1", "Work"])
    expect(listJson.executions).toMatchObject([{ jobId: "jo-2", status: "running", activeSteps: ["Work"] }])
    expect(missing.code).toBe(3)
  })

  it("config references list, workmasters list and show, acceptance get", async () => {
    const [refs, equipment, wms, wmsJson, wm, wmTable, wmMissing, acceptance, noLimit] = await Promise.all([
      cli.run(["config", "references", "list", "--scope", SCOPE]),
      cli.json(["config", "references", "list", "--scope", SCOPE, "--kind", "equipment"]),
      cli.run(["config", "workmasters", "list", "--scope", SCOPE]),
      cli.json(["config", "workmasters", "list", "--scope", SCOPE]),
      cli.json(["config", "workmasters", "show", "wm-1"]),
      cli.run(["config", "workmasters", "show", "wm-1"]),
      cli.run(["config", "workmasters", "show", "wm-none"]),
      cli.json(["config", "acceptance", "get", "--scope", SCOPE]),
      cli.run(["config", "acceptance", "get", "--scope", OTHER_SCOPE])
    ])
    expect(rows(refs.stdout)).toEqual([["KIND", "ID"], ["equipment", "eq-1"], ["equipment", "eq-2"], ["personnel", "op-1"]])
    expect(equipment.references).toEqual({ equipment: ["eq-1", "eq-2"] })
    expect(rows(wms.stdout)).toEqual([["ID", "VERSION", "RECIPE"], ["wm-1", "1", "valid recipe"], ["wm-plain", "1", "no recipe (left to the MES)"]])
    expect(wmsJson.workMasters.map((w: { id: string; recipe: string }) => [w.id, w.recipe])).toEqual([["wm-1", "valid"], ["wm-plain", "none"]])
    expect(wm).toMatchObject({ id: "wm-1", scope: SCOPE, recipe: "valid", problems: [], document: { ID: "wm-1" } })
    expect(wmTable.stdout).toMatch(/^recipe:\s+valid recipe$/m)
    expect(wmTable.stdout).toContain('"dataschema"')
    expect(wmMissing.code).toBe(3)
    expect(acceptance).toEqual({ scope: SCOPE, limit: 10 })
    expect(noLimit.stdout).toContain("no limit of its own")
  })
})

describe("streams, dedupe, leases, publisher", () => {
  it("streams info, pending and dead letters", async () => {
    const [info, infoJson, pending, pendingJson, dlq, dlqEntries, dlqTable] = await Promise.all([
      cli.run(["streams", "info", "--scope", SCOPE]),
      cli.json(["streams", "info"]),
      cli.run(["streams", "pending", "--scope", SCOPE]),
      cli.json(["streams", "pending", "--scope", SCOPE, "--group", "engine"]),
      cli.json(["streams", "deadletters"]),
      cli.json(["streams", "deadletters", "--kind", "sfc", "--scope", SCOPE]),
      cli.run(["streams", "deadletters", "--kind", "sfc", "--scope", SCOPE])
    ])
    const table = rows(info.stdout)
    expect(table[0]).toEqual(["SCOPE", "STREAM", "LENGTH", "GROUP", "CONSUMERS", "PENDING", "LAG", "LAST DELIVERED"])
    expect(table[1]?.slice(0, 7)).toEqual([SCOPE, "changes", table[1]![2], "engine-changes", "0", "0", table[1]![2]])
    expect(table[2]?.slice(0, 7)).toEqual([SCOPE, "sfc", "3", "engine", "1", "2", "0"])
    const work = infoJson.streams.find((s: { scope: string; kind: string }) => s.scope === SCOPE && s.kind === "sfc")
    expect(work).toMatchObject({ type: "stream", length: 3, groups: [{ group: "engine", consumers: 1, pending: 2, lag: 0 }] })
    // changes, sfc and the execution log's dag:commits, each scope
    expect(infoJson.streams.filter((s: { scope: string }) => s.scope === OTHER_SCOPE).map((s: { kind: string }) => s.kind)).toEqual(["changes", "sfc", "dagcommit"])
    expect(rows(pending.stdout).slice(1).map((r) => r.slice(0, 3))).toEqual([
      [SCOPE, "sfc", "engine"],
      [SCOPE, "sfc", "engine"]
    ])
    expect(pendingJson.pending).toMatchObject([{ consumer: "engine-a", deliveries: 1 }, { consumer: "engine-a", deliveries: 1 }])
    expect(dlq.deadLetterStreams).toMatchObject([{ kind: "sfc", scope: SCOPE, length: 1 }])
    expect(rows(dlqTable.stdout)[1]?.slice(2)).toEqual(["engine", "engine-a", "1", expect.any(String), "station unreachable"])
    expect(dlqEntries.entries).toMatchObject([{ group: "engine", consumer: "engine-a", error: "station unreachable", deliveries: 1 }])
  })

  it("dedupe check: processing, done, and exit 3 for an unknown event", async () => {
    const [processing, done, doneWithReply, table, unknown] = await Promise.all([
      cli.json(["dedupe", "check", "--source", "urn:mes", "--id", "evt-1"]),
      cli.json(["dedupe", "check", "--source", "urn:mes", "--id", "evt-2"]),
      cli.json(["dedupe", "check", "--source", "urn:mes", "--id", "evt-3"]),
      cli.run(["dedupe", "check", "--source", "urn:mes", "--id", "evt-1"]),
      cli.run(["dedupe", "check", "--source", "urn:mes", "--id", "evt-unknown"])
    ])
    expect(processing).toMatchObject({ state: "processing", token: "tok-1" })
    expect(processing.remainingMs).toBeGreaterThan(0)
    expect(done).toMatchObject({ state: "done", token: null })
    expect(doneWithReply).toMatchObject({ state: "done", token: null })
    expect(table.stdout).toMatch(/^state:\s+processing$/m)
    expect(table.stdout).toMatch(/^remaining:\s+\d+m\b/m)
    expect(unknown.code).toBe(3)
    expect(unknown.stdout).toMatch(/^state:\s+absent$/m)
  })

  it("leases show, publisher cursors", async () => {
    const [leases, leasesJson, cursors, cursorsJson] = await Promise.all([
      cli.run(["leases", "show"]),
      cli.json(["leases", "show"]),
      cli.run(["publisher", "cursors"]),
      cli.json(["publisher", "cursors"])
    ])
    expect(rows(leases.stdout).map((r) => r.slice(0, 3))).toEqual([
      ["LEASE", "CONFIG", "HOLDER"],
      ["publisher", "-", "publisher-a"],
      ["start", "cfg-1", "host-a"]
    ])
    expect(leasesJson.leases).toMatchObject([
      { lease: "publisher", holder: "publisher-a" },
      { lease: "start", configId: "cfg-1", holder: "host-a" }
    ])
    expect(rows(cursors.stdout)[0]).toEqual(["SCOPE", "CURSOR", "LATEST CHANGE", "BEHIND"])
    const [line1, line2] = cursorsJson.cursors
    // The cursor stands on the first change entry: every later one is still to publish.
    const changes = await changesLength()
    expect(line1).toMatchObject({ scope: SCOPE, behind: changes - 1, behindCapped: false })
    expect(line2).toMatchObject({ scope: OTHER_SCOPE, cursor: null, behind: 1 })
  })

  it("index check of a consistent island exits 0", async () => {
    const [table, json] = await Promise.all([cli.run(["index", "check"]), cli.json(["index", "check", "--scope", SCOPE])])
    expect(table.code).toBe(0)
    expect(table.stdout.trim()).toBe("no inconsistencies")
    expect(json).toEqual({ scope: SCOPE, consistent: true, inconsistencies: [] })
  })
})
