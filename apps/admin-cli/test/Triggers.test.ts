import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { inject } from "vitest"
import { TriggerStore, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix } from "@microdcs/test-utils"
import { type Cli, makeCli } from "./Cli.js"
import { withStore } from "./Seed.js"

// The trigger commands, each checked through the store; refusals must change nothing.
const url = inject("valkeyUrl")
const prefix = randomPrefix("cli-trg")
const files = mkdtempSync(join(tmpdir(), "microdcs-admin-triggers-"))
let cli: Cli

const file = (name: string, content: unknown) => {
  const path = join(files, name)
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content))
  return path
}
const store = <A, E>(effect: Parameters<typeof withStore<A, E>>[2]) => withStore(url, prefix, effect)
const rawTriggers = () => store(Effect.flatMap(Valkey, (v) => Effect.flatMap(v.key("triggers", {}), (key) => unsafeCommand(v, "hgetall", (c) => c.hgetall(key)))))

beforeAll(async () => {
  cli = await makeCli(url, prefix)
})
afterAll(() => {
  cli?.dispose()
  rmSync(files, { recursive: true, force: true })
})

describe("trigger commands", () => {
  it("put, list, show, disable, enable and delete (refused without --yes, exit 3 for an unknown id)", async () => {
    const put = await cli.json(["trigger", "put", file("t.json", { id: "t-cli", type: "com.example.bin.empty.v1", workMasterId: "wm-restock" }), "--scope", "line-1"])
    expect(put).toMatchObject({ stored: true, trigger: { id: "t-cli", scope: "line-1", enabled: true, version: 1 } })
    const listed = await cli.json(["trigger", "list"])
    expect(listed.triggers.map((t: { id: string }) => t.id)).toEqual(["t-cli"])
    const table = await cli.run(["trigger", "list"])
    expect(table.stdout).toMatch(/ID\s+SCOPE\s+TYPE\s+SUBJECT\s+WORK MASTER\s+ENABLED\s+VERSION/)
    expect(table.stdout).toContain("t-cli")
    expect(await cli.json(["trigger", "disable", "t-cli"])).toMatchObject({ enabled: false, version: 2 })
    expect(await cli.json(["trigger", "enable", "t-cli"])).toMatchObject({ enabled: true, version: 3 })
    // A row shown as JSON can be put back as it is; --expect-version guards against a lost update.
    const shown = await cli.json(["trigger", "show", "t-cli"])
    expect(shown).toMatchObject({ id: "t-cli", workMasterId: "wm-restock", version: 3 })
    const stale = await cli.run(["trigger", "put", file("shown.json", shown), "--expect-version", "2"])
    expect(stale.code).toBe(6)
    expect(await cli.json(["trigger", "put", file("shown.json", { ...shown, priority: 3 }), "--expect-version", "3"])).toMatchObject({ trigger: { priority: 3, version: 4 } })

    const [refused, unknown, missing] = await Promise.all([
      cli.run(["trigger", "delete", "t-cli"]),
      cli.run(["trigger", "delete", "t-unknown", "--yes"]),
      cli.run(["trigger", "show", "t-unknown"])
    ])
    expect(refused.code).toBe(5)
    expect(unknown.code).toBe(3)
    expect(missing.code).toBe(3)
    expect((await store(Effect.flatMap(TriggerStore, (s) => s.get("t-cli")))).version).toBe(4)
    const deleted = await cli.run(["trigger", "delete", "t-cli", "--yes"])
    expect(deleted.stdout.trim()).toBe("deleted trigger t-cli")
    expect(await rawTriggers()).toEqual({})
  })

  it("a bad trigger is refused with every problem listed (exit 1), and nothing is stored", async () => {
    const before = await rawTriggers()
    const bad = await cli.json(["trigger", "put", file("bad.json", { id: "t bad", type: "", workMasterId: "", enabled: "yes" })], 1)
    expect(bad.stored).toBe(false)
    expect(bad.problems).toHaveLength(5)
    expect(bad.problems.join("\n")).toMatch(/id must start[\s\S]*scope must be[\s\S]*workMasterId[\s\S]*type must be[\s\S]*enabled must be/)
    const human = await cli.run(["trigger", "put", file("bad.json", { id: "t bad" })])
    expect(human.code).toBe(1)
    expect(human.stdout).toContain("not stored")
    const notJson = await cli.run(["trigger", "put", file("nojson.json", "{")])
    expect(notJson.code).toBe(2)
    expect(await rawTriggers()).toEqual(before)
  })
})
