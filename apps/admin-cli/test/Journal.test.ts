import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { inject } from "vitest"
import { Journal, JournalClock, type JournalEvent, JournalOptions } from "@microdcs/journal"
import { eventConditions } from "@microdcs/sfc"
import { Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix } from "@microdcs/test-utils"
import { type Cli, makeCli } from "./Cli.js"

// journal list|show|recall|counter|check|rebuild|configure|remove, tables and --json.
const url = inject("valkeyUrl")
const prefix = randomPrefix("cli-journal")
let cli: Cli

const config = {
  name: "torque",
  types: ["com.example.station.torque.v1"],
  searchKeys: [{ name: "tool", path: "data.tool_id" }],
  retention: { maxAge: "7d" },
  compression: "lz4",
  counters: [{ name: "nok_1h", searchKey: "tool", window: "1h", resolution: "minute" }]
}
const configFile = join(tmpdir(), `${prefix}-journal.json`)
const badFile = join(tmpdir(), `${prefix}-bad.json`)

const event = (i: number): JournalEvent => ({
  id: `e-${i}`,
  source: "urn:station:1",
  type: "com.example.station.torque.v1",
  time: new Date(Date.now() - (10 - i) * 1000).toISOString(),
  data: { tool_id: "nr-3", torque: 20 + i }
})

const withJournal = <A, E>(effect: Effect.Effect<A, E, Journal | Valkey>) =>
  Effect.runPromise(
    Effect.scoped(
      effect.pipe(
        Effect.provide(
          Journal.Default.pipe(
            // The daemon's condition language, as every process that reads journal configurations has it.
            Layer.provide(Layer.merge(JournalClock.fixed(() => Date.now()), JournalOptions.layer({ conditions: eventConditions }))),
            Layer.provideMerge(ValkeyLayer.layer({ url, prefix }))
          )
        )
      )
    )
  )

beforeAll(async () => {
  writeFileSync(configFile, JSON.stringify(config))
  writeFileSync(badFile, JSON.stringify({ ...config, retention: { maxAge: "never" }, compression: "gzip" }))
  cli = await makeCli(url, prefix)
})
afterAll(() => cli?.dispose())

describe("journal", () => {
  it("configures from a file, lists, shows, recalls and reads a counter, as tables and as JSON", async () => {
    const refused = await cli.run(["journal", "configure", "--scope", "line-1", badFile])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/retention\.maxAge must be a duration.*compression must be none or lz4/)
    expect((await cli.json(["journal", "list"])).journals).toEqual([])

    expect(await cli.json(["journal", "configure", "--scope", "line-1", configFile])).toMatchObject({ scope: "line-1", created: true })
    await withJournal(Effect.gen(function* () {
      const journal = yield* Journal
      yield* journal.reload()
      for (let i = 0; i < 5; i++) yield* journal.insert("line-1", "torque", event(i))
    }))

    const listed = await cli.json(["journal", "list"])
    expect(listed.journals).toMatchObject([{ scope: "line-1", journal: "torque", searchKeys: ["tool"], counters: ["nok_1h"], entries: 5, retention: "7d" }])
    const table = await cli.run(["journal", "list"])
    expect(table.stdout).toMatch(/SCOPE\s+JOURNAL\s+SEARCH KEYS[\s\S]*line-1\s+torque\s+tool\s+nok_1h\s+7d\s+5/)

    expect(await cli.json(["journal", "show", "--scope", "line-1", "-j", "torque"])).toMatchObject({ name: "torque", entries: 5, counters: [{ name: "nok_1h", window: 3_600_000 }] })
    expect((await cli.run(["journal", "show", "--scope", "line-1", "-j", "torque"])).stdout).toMatch(/count by tool over 1h \(minute buckets\)/)

    const recalled = await cli.json(["journal", "recall", "--scope", "line-1", "-j", "torque", "--key", "tool", "--value", "nr-3", "--limit", "2"])
    expect(recalled.entries.map((e: { event: { id: string } }) => e.event.id)).toEqual(["e-4", "e-3"])
    expect((await cli.run(["journal", "recall", "--scope", "line-1", "-j", "torque", "--key", "tool", "--value", "nr-3"])).stdout).toMatch(/TIME\s+TYPE\s+EVENT ID\s+DATA[\s\S]*e-4[\s\S]*"torque":24/)

    expect(await cli.json(["journal", "counter", "--scope", "line-1", "-j", "torque", "--counter", "nok_1h", "--value", "nr-3"])).toMatchObject({ total: 5 })
    expect((await cli.run(["journal", "counter", "--scope", "line-1", "-j", "torque", "--counter", "nope", "--value", "nr-3"])).code).toBe(3)
    expect((await cli.run(["journal", "show", "--scope", "line-1", "-j", "nothing"])).code).toBe(3)
    expect((await cli.run(["journal", "recall", "--scope", "line-1", "-j", "torque", "--key", "tool", "--value", "nr-3", "--since", "yesterday"])).code).toBe(2)
  })

  it("check finds a counter total that lies and rebuild repairs it; remove needs --yes", async () => {
    expect(await cli.json(["journal", "check"])).toMatchObject({ consistent: true })
    await withJournal(Effect.flatMap(Valkey, (v) => unsafeCommand(v, "break", (c) => c.hincrbyfloat(`${prefix}:counter:line-1:torque:nok_1h`, "nr-3", 2))))
    const broken = await cli.json(["journal", "check", "--scope", "line-1"], 1)
    expect(broken.inconsistencies).toMatchObject([{ kind: "wrong-score", member: "nr-3", expected: 5, found: 7 }])
    expect((await cli.run(["journal", "rebuild"])).code).toBe(5)
    expect(await cli.json(["journal", "rebuild", "--yes"])).toMatchObject({ repaired: 1, unrepaired: [] })
    expect(await cli.json(["journal", "check"])).toMatchObject({ consistent: true })

    expect((await cli.run(["journal", "remove", "--scope", "line-1", "-j", "torque"])).code).toBe(5)
    expect(await cli.json(["journal", "remove", "--scope", "line-1", "-j", "torque", "--yes"])).toEqual({ scope: "line-1", journal: "torque", removed: true })
    expect((await cli.json(["journal", "list"])).journals).toEqual([])
  })

  it("reads the demo's journal, whose counter has a `when`, as the daemon does; one stored that cannot be read is listed with why (exit 1)", async () => {
    const demoJournal = fileURLToPath(new URL("../../island-daemon/fixtures/journal-torque.json", import.meta.url))
    expect(await cli.json(["journal", "configure", "--scope", "line-when", demoJournal])).toMatchObject({ created: true, config: { counters: [{ name: "nok_torque_1h", when: "!torque_ok" }, { name: "torque_1h" }] } })
    const torque = (i: number, ok: boolean): JournalEvent => ({ ...event(i), id: `w-${i}`, data: { tool_id: "nr-7", torque_ok: ok } })
    await withJournal(
      Effect.gen(function* () {
        const journal = yield* Journal
        yield* journal.reload()
        for (const [i, ok] of [[1, false], [2, true], [3, false]] as const) yield* journal.insert("line-when", "torque", torque(i, ok))
      })
    )
    expect((await cli.json(["journal", "list", "--scope", "line-when"])).journals).toMatchObject([{ scope: "line-when", journal: "torque", counters: ["nok_torque_1h", "torque_1h"], entries: 3 }])
    const args = ["--scope", "line-when", "-j", "torque"]
    expect(await cli.json(["journal", "counter", ...args, "--counter", "nok_torque_1h", "--value", "nr-7"])).toMatchObject({ total: 2 })
    expect(await cli.json(["journal", "counter", ...args, "--counter", "torque_1h", "--value", "nr-7"])).toMatchObject({ total: 3 })
    expect((await cli.json(["journal", "recall", ...args, "--key", "tool", "--value", "nr-7"])).entries).toHaveLength(3)
    expect((await cli.run(["journal", "show", ...args])).stdout).toMatch(/count by tool over 1h \(minute buckets\) when !torque_ok/)

    // Edited by hand into something no writer stores: listed with its problems, never left out silently.
    await withJournal(
      Effect.flatMap(Valkey, (v) =>
        unsafeCommand(v, "break", async (c) => {
          await c.hset(`${prefix}:journal:config:line-when`, "hand-edited", JSON.stringify({ name: "hand-edited", types: [] }))
        })
      )
    )
    const listed = await cli.json(["journal", "list", "--scope", "line-when"], 1)
    expect(listed.journals.map((j: { journal: string }) => j.journal)).toEqual(["torque"])
    expect(listed.unreadable).toEqual([{ scope: "line-when", journal: "hand-edited", problems: expect.arrayContaining(["types must be a non-empty list of CloudEvent types"]) }])
    const table = await cli.run(["journal", "list", "--scope", "line-when"])
    expect(table.code).toBe(1)
    expect(table.stdout).toMatch(/Stored but not readable[\s\S]*line-when\s+hand-edited\s+.*types must be a non-empty list/)
    const shown = await cli.run(["journal", "show", "--scope", "line-when", "-j", "hand-edited"])
    expect(shown.code).toBe(1)
    expect(shown.stderr).toContain("journal 'hand-edited' of scope 'line-when' is stored but cannot be read: ")
  })
})
