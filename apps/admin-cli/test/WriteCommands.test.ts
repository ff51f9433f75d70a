import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { inject } from "vitest"
import {
  DedupeStore,
  JobAcceptanceDao,
  PublisherCursors,
  PublisherLease,
  ReferenceListDao,
  StartLease,
  Valkey,
  WorkMasterDao
} from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix } from "@microdcs/test-utils"
import { type Cli, makeCli } from "./Cli.js"
import { brokenWorkMaster, SCOPE, seedIsland, withStore, workMaster } from "./Seed.js"

// Commands that write, each checked through the store itself; refusals must change nothing.
const url = inject("valkeyUrl")
const prefix = randomPrefix("cli-write")
const files = mkdtempSync(join(tmpdir(), "microdcs-admin-files-"))
let cli: Cli

const file = (name: string, content: unknown) => {
  const path = join(files, name)
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content))
  return path
}
const store = <A, E>(effect: Parameters<typeof withStore<A, E>>[2]) => withStore(url, prefix, effect)

beforeAll(async () => {
  ;[cli] = await Promise.all([makeCli(url, prefix), seedIsland(url, prefix)])
})
afterAll(() => {
  cli?.dispose()
  rmSync(files, { recursive: true, force: true })
})

const members = () => store(Effect.flatMap(ReferenceListDao, (dao) => dao.members("equipment", SCOPE)))

describe("config", () => {
  it("references add and remove; remove is refused without --yes", async () => {
    const added = await cli.json(["config", "references", "add", "--kind", "equipment", "--scope", SCOPE, "eq-3", "eq-1"])
    expect(added).toEqual({ kind: "equipment", scope: SCOPE, ids: ["eq-3", "eq-1"], added: 1 })
    const [refused, table, badKind] = await Promise.all([
      cli.run(["config", "references", "remove", "--kind", "equipment", "--scope", SCOPE, "eq-3"]),
      cli.run(["config", "references", "add", "--kind", "personnel", "--scope", SCOPE, "op-2"]),
      cli.run(["config", "references", "add", "--kind", "robots", "--scope", SCOPE, "r-1"])
    ])
    expect(refused.code).toBe(5)
    expect(refused.stderr).toContain("--yes")
    expect(await members()).toEqual(["eq-1", "eq-2", "eq-3"])
    expect(table.stdout.trim()).toBe(`added 1 of 1 ids to personnel in ${SCOPE}`)
    expect(badKind.code).toBe(2)
    const removed = await cli.run(["config", "references", "remove", "--kind", "equipment", "--scope", SCOPE, "eq-3", "--yes"])
    expect(removed.stdout.trim()).toBe(`removed 1 of 1 ids from equipment in ${SCOPE}`)
    expect(await members()).toEqual(["eq-1", "eq-2"])
  })

  it("workmasters validate lists every recipe problem (exit 1), put refuses an invalid recipe", async () => {
    const good = file("good.json", workMaster("wm-new"))
    const broken = file("broken.json", brokenWorkMaster("wm-broken"))
    const [valid, invalidTable, invalidJson, notJson, missing, putBroken] = await Promise.all([
      cli.run(["config", "workmasters", "validate", good]),
      cli.run(["config", "workmasters", "validate", broken]),
      cli.json(["config", "workmasters", "validate", broken], 1),
      cli.run(["config", "workmasters", "validate", file("text.json", "{not json")]),
      cli.run(["config", "workmasters", "validate", join(files, "absent.json")]),
      cli.run(["config", "workmasters", "put", broken, "--scope", SCOPE])
    ])
    expect(valid.code).toBe(0)
    expect(valid.stdout.trim()).toBe(`${good}: valid recipe`)
    expect(invalidTable.code).toBe(1)
    expect(invalidTable.stdout).toMatch(/^RULE\s+PATH\s+PROBLEM$/m)
    expect(invalidJson.recipe).toBe("invalid")
    expect(invalidJson.problems.map((p: { rule: string }) => p.rule).sort()).toEqual(["qualifier", "unknown-reference"])
    expect(invalidJson.problems.find((p: { rule: string }) => p.rule === "qualifier").path).toBe("Actions[0].Qualifier")
    expect([notJson.code, missing.code]).toEqual([2, 2])
    // A missing Actions does not hide the condition that does not parse.
    const { Actions: _actions, ...noActions } = workMaster("wm-gap").data as Record<string, unknown>
    const gap = { ...workMaster("wm-gap"), data: { ...noActions, Transitions: [{ Source: "Init", Target: "Work", Condition: "x >" }] } }
    const gapped = await cli.json(["config", "workmasters", "validate", file("gap.json", gap)], 1)
    expect(gapped.problems.map((p: { rule: string; path: string }) => `${p.rule} ${p.path}`)).toEqual(["structure Actions", "condition Transitions[0].Condition"])
    expect(notJson.stderr).toContain("is not JSON")
    expect(putBroken.code).toBe(1)
    expect(putBroken.stdout).toContain("not stored")
    const stored = await store(Effect.flatMap(WorkMasterDao, (dao) => dao.list(SCOPE)))
    expect(stored).not.toContain("wm-broken")
  })

  it("workmasters put, show and delete (refused without --yes, exit 3 for an unknown id)", async () => {
    const good = file("put.json", workMaster("wm-put"))
    const put = await cli.json(["config", "workmasters", "put", good, "--scope", SCOPE])
    expect(put).toEqual({ id: "wm-put", scope: SCOPE, stored: true, version: 1, recipe: "valid" })
    const [noId, refused, unknown] = await Promise.all([
      cli.run(["config", "workmasters", "put", file("noid.json", { Description: "x" }), "--scope", SCOPE]),
      cli.run(["config", "workmasters", "delete", "wm-put"]),
      cli.run(["config", "workmasters", "delete", "wm-unknown", "--yes"])
    ])
    expect(noId.code).toBe(2)
    expect(refused.code).toBe(5)
    expect(unknown.code).toBe(3)
    expect((await store(Effect.flatMap(WorkMasterDao, (dao) => dao.get("wm-put")))).version).toBe(1)
    const deleted = await cli.run(["config", "workmasters", "delete", "wm-put", "--yes"])
    expect(deleted.stdout.trim()).toBe(`deleted work master wm-put from ${SCOPE}`)
    expect(await store(Effect.flatMap(WorkMasterDao, (dao) => dao.list(SCOPE)))).toEqual(["wm-1", "wm-plain"])
  })

  it("acceptance set, get, clear", async () => {
    const limit = () => store(Effect.flatMap(JobAcceptanceDao, (dao) => dao.get(SCOPE)))
    const set = await cli.run(["config", "acceptance", "set", "--scope", SCOPE, "3"])
    expect(set.stdout.trim()).toBe(`${SCOPE}: acceptance limit set to 3`)
    const [get, refused, negative] = await Promise.all([
      cli.run(["config", "acceptance", "get", "--scope", SCOPE]),
      cli.run(["config", "acceptance", "clear", "--scope", SCOPE]),
      cli.run(["config", "acceptance", "set", "--scope", SCOPE, "--", "-1"])
    ])
    expect(get.stdout.trim()).toBe(`${SCOPE}: 3 job orders`)
    expect(refused.code).toBe(5)
    expect(negative.code).toBe(2)
    expect(await limit()).toEqual(Option.some(3))
    expect(await cli.json(["config", "acceptance", "clear", "--scope", SCOPE, "--yes"])).toEqual({ scope: SCOPE, cleared: true })
    expect(await limit()).toEqual(Option.none())
    expect(await cli.json(["config", "acceptance", "get", "--scope", SCOPE])).toEqual({ scope: SCOPE, limit: null })
  })
})

describe("runtime state", () => {
  it("dedupe forget: refused without --yes, then forgotten; exit 3 when absent", async () => {
    const remaining = () => store(Effect.flatMap(DedupeStore, (dao) => dao.leaseRemaining("urn:mes", "evt-1")))
    const refused = await cli.run(["dedupe", "forget", "--source", "urn:mes", "--id", "evt-1"])
    expect(refused.code).toBe(5)
    expect(await remaining()).toBeGreaterThan(0)
    const forgotten = await cli.json(["dedupe", "forget", "--source", "urn:mes", "--id", "evt-1", "--yes"])
    expect(forgotten).toMatchObject({ forgotten: true, was: "processing" })
    expect(await remaining()).toBe(0)
    const [again, table] = await Promise.all([
      cli.run(["dedupe", "forget", "--source", "urn:mes", "--id", "evt-1", "--yes"]),
      cli.run(["dedupe", "forget", "--source", "urn:mes", "--id", "evt-2", "--yes"])
    ])
    expect(again.code).toBe(3)
    expect(table.stdout.trim()).toBe("forgot done entry of urn:mes / evt-2")
  })

  it("leases release: refused without --yes, released as the holder read, exit 3 when free", async () => {
    const holder = () => store(Effect.flatMap(PublisherLease, (lease) => lease.holder))
    const [refused, both] = await Promise.all([
      cli.run(["leases", "release", "--publisher"]),
      cli.run(["leases", "release", "--publisher", "--start", "cfg-1", "--yes"])
    ])
    expect(refused.code).toBe(5)
    expect(both.code).toBe(2)
    expect(await holder()).toEqual(Option.some("publisher-a"))
    expect(await cli.json(["leases", "release", "--publisher", "--yes"])).toMatchObject({ released: true, holder: "publisher-a" })
    expect(await holder()).toEqual(Option.none())
    const [again, start] = await Promise.all([
      cli.run(["leases", "release", "--publisher", "--yes"]),
      cli.run(["leases", "release", "--start", "cfg-1", "-y"])
    ])
    expect(again.code).toBe(3)
    expect(start.stdout.trim()).toBe("released the post-start lease of cfg-1 held by host-a")
    expect(await store(Effect.flatMap(StartLease, (lease) => lease.holder("cfg-1")))).toEqual(Option.none())
  })

  it("publisher republish resets the cursor to 0 (refused without --yes)", async () => {
    const cursor = () => store(Effect.flatMap(PublisherCursors, (c) => c.get(SCOPE)))
    const before = await cursor()
    const refused = await cli.run(["publisher", "republish", "--scope", SCOPE])
    expect(refused.code).toBe(5)
    expect(await cursor()).toEqual(before)
    const table = await cli.run(["publisher", "republish", "--scope", SCOPE, "--yes"])
    expect(table.stdout.trim()).toBe(`publisher cursor of ${SCOPE} reset from ${Option.getOrThrow(before)} to 0`)
    expect(await cursor()).toEqual(Option.some("0"))
    const { cursors } = await cli.json(["publisher", "cursors"])
    const changes = await store(
      Effect.gen(function* () {
        const valkey = yield* Valkey
        const key = yield* valkey.key("changes", { scope: SCOPE })
        return yield* unsafeCommand(valkey, "xlen", (c) => c.xlen(key))
      })
    )
    expect(cursors[0]).toMatchObject({ scope: SCOPE, cursor: "0", behind: changes })
  })

  it("streams trim removes only what every group acknowledged (refused without --yes)", async () => {
    const length = () =>
      store(
        Effect.gen(function* () {
          const valkey = yield* Valkey
          const key = yield* valkey.key("sfcWork", { scope: SCOPE })
          return yield* unsafeCommand(valkey, "xlen", (c) => c.xlen(key))
        })
      )
    expect(await length()).toBe(3)
    const refused = await cli.run(["streams", "trim", "--scope", SCOPE])
    expect(refused.code).toBe(5)
    expect(await length()).toBe(3)
    const trimmed = await cli.json(["streams", "trim", "--scope", SCOPE, "--yes"])
    // The first entry was dead-lettered (acknowledged); the other two are still pending.
    expect(trimmed.trimmed).toMatchObject([{ scope: SCOPE, stream: "sfc", removed: 1 }])
    expect(await length()).toBe(2)
  })
})
