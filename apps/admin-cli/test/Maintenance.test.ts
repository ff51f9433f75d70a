import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { inject } from "vitest"
import { IndexMaintenance, JobOrderDao, JobResponseDao, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix } from "@microdcs/test-utils"
import { type Cli, makeCli } from "./Cli.js"
import { SCOPE, seedIsland, withStore } from "./Seed.js"

// index check / rebuild on a deliberately broken index, and purge of cleared job orders.
const url = inject("valkeyUrl")
const prefix = randomPrefix("cli-maint")
let cli: Cli

const store = <A, E>(effect: Parameters<typeof withStore<A, E>>[2]) => withStore(url, prefix, effect)

/** Two inconsistencies: jo-1 missing from its scope list, a by-state member without document. */
const breakIndex = () =>
  store(
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const list = yield* valkey.key("jobOrderList", { scope: SCOPE })
      const running = yield* valkey.key("jobResponseByState", { scope: SCOPE, state: "Running" })
      yield* unsafeCommand(valkey, "break index", (c) => c.multi().zrem(list, "jo-1").sadd(running, "ghost").exec())
    })
  )

const inconsistencies = () => store(Effect.flatMap(IndexMaintenance, (m) => m.check()))

beforeAll(async () => {
  ;[cli] = await Promise.all([makeCli(url, prefix), seedIsland(url, prefix)])
})
afterAll(() => cli?.dispose())

describe("index", () => {
  it("check exits 1 on a broken index; rebuild is refused without --yes; rebuild --yes repairs it", async () => {
    await breakIndex()
    const [table, json, refused] = await Promise.all([
      cli.run(["index", "check"]),
      cli.json(["index", "check", "--scope", SCOPE], 1),
      cli.run(["index", "rebuild"])
    ])
    expect(table.code).toBe(1)
    const lines = table.stdout.trim().split("\n")
    expect(lines[0]).toMatch(/^KIND\s+KEY\s+MEMBER\s+EXPECTED\s+FOUND$/)
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0]).sort()).toEqual(["document-missing-from-index", "index-entry-without-document"])
    expect(table.stderr).toContain("2 index inconsistencies found")
    expect(json.consistent).toBe(false)
    expect(json.inconsistencies.map((i: { member: string }) => i.member).sort()).toEqual(["ghost", "jo-1"])
    expect(refused.code).toBe(5)
    expect(await inconsistencies()).toHaveLength(2)

    const rebuilt = await cli.run(["index", "rebuild", "--yes"])
    expect(rebuilt.code).toBe(0)
    expect(rebuilt.stdout).toMatch(/^repaired:\s+1$/m)
    expect(rebuilt.stdout).toMatch(/^removed:\s+1$/m)
    // Not a terminal: one progress line per phase, the bar filling up to the last phase.
    const progress = rebuilt.stderr.trim().split("\n")
    expect(progress[0]).toMatch(/^\[#+-+\] 1\/7 scopes/)
    expect(progress[progress.length - 1]).toMatch(/^\[#+-*\] 7\/7 references\s+scanned \d+, repaired 1, removed 1$/)
    const after = await cli.run(["index", "check"])
    expect(after.code).toBe(0)
    expect(after.stdout.trim()).toBe("no inconsistencies")
    // The whole island rebuilt: every phase recorded, so a daemon's upgrade at start walks nothing.
    const versions = await store(Effect.flatMap(IndexMaintenance, (m) => m.versions))
    expect(versions.filter((v) => v.recorded !== v.version)).toEqual([])
  })

  it("rebuild --scope --yes --json reports the repair of that scope", async () => {
    await breakIndex()
    const summary = await cli.json(["index", "rebuild", "--scope", SCOPE, "--yes"])
    expect(summary).toMatchObject({ scope: SCOPE, repaired: 1, removed: 1, deletedKeys: [], unrepaired: [] })
    expect(await inconsistencies()).toEqual([])
  })
})

describe("purge", () => {
  const exists = (id: string) =>
    store(Effect.flatMap(JobOrderDao, (dao) => dao.get(id)).pipe(Effect.as(true), Effect.catchTag("NotFound", () => Effect.succeed(false))))

  it("lists cleared job orders with --dry-run, refuses without --yes, keeps recent ones with --older-than", async () => {
    const [dryTable, dryJson, refused, recent, badDuration] = await Promise.all([
      cli.run(["purge", "--scope", SCOPE, "--dry-run"]),
      cli.json(["purge", "--scope", SCOPE, "--dry-run"]),
      cli.run(["purge", "--scope", SCOPE]),
      cli.json(["purge", "--scope", SCOPE, "--older-than", "1h", "--yes"]),
      cli.run(["purge", "--scope", SCOPE, "--older-than", "soon", "--yes"])
    ])
    const rows = dryTable.stdout.trim().split("\n")
    expect(rows[0]).toMatch(/^ID\s+STATE\s+EXPIRES IN\s+LAST CHANGE\s+RESPONSE\s+RESULT$/)
    expect(rows[1]).toMatch(/^jo-3\s+EndState\s+6d 23h\s+\S+\s+jr-3\s+would delete$/)
    expect(rows[2]).toBe("would delete 1 job order(s)")
    expect(dryJson).toMatchObject({ dryRun: true, deleted: 0, jobOrders: [{ id: "jo-3", state: "EndState", responseId: "jr-3", outcome: "would delete" }] })
    expect(refused.code).toBe(5)
    expect(recent).toMatchObject({ deleted: 0, jobOrders: [] })
    expect(badDuration.code).toBe(2)
    expect(await exists("jo-3")).toBe(true)
  })

  it("deletes the cleared job order and its response with --yes", async () => {
    const purged = await cli.json(["purge", "--scope", SCOPE, "--yes"])
    expect(purged).toMatchObject({ dryRun: false, deleted: 1, jobOrders: [{ id: "jo-3", outcome: "deleted" }] })
    expect(await exists("jo-3")).toBe(false)
    const response = await store(
      Effect.flatMap(JobResponseDao, (dao) => dao.get("jr-3")).pipe(Effect.as("present"), Effect.catchTag("NotFound", () => Effect.succeed("gone")))
    )
    expect(response).toBe("gone")
    // Live job orders are untouched, and the purge left the indexes consistent.
    expect(await Promise.all(["jo-1", "jo-2", "jo-4"].map(exists))).toEqual([true, true, true])
    expect(await inconsistencies()).toEqual([])
    const again = await cli.run(["purge", "--scope", SCOPE, "--yes"])
    expect(again.stdout.trim()).toBe(`(nothing to purge in scope ${SCOPE})`)
  })
})
