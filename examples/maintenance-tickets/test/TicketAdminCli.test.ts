import { execFile } from "node:child_process"
import { dirname } from "node:path"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { Effect, Layer } from "effect"
import { describe, expect, inject, it } from "vitest"
import { IndexMaintenance, IndexRegistry } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { indexedFamilies } from "../src/index.js"
import { ticketIsland } from "./Island.js"
import { breakTicketIndexes, repairedContents, seedTickets, ticketIndexContents } from "./TicketIndexes.js"

// The operator's side: `microdcs-admin index check|rebuild` with MICRODCS_EXTENSIONS naming this
// package's module. The CLI runs from source as `pnpm start` does (tsx, the source condition), so
// it imports the extension's TypeScript and its lua/ folder as they are here.
const prefix = randomPrefix("tickets-cli")
const cliDir = dirname(createRequire(import.meta.url).resolve("@microdcs/admin-cli/package.json"))
const extension = fileURLToPath(new URL("../src/index.ts", import.meta.url))

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const admin = (args: ReadonlyArray<string>): Promise<Run> =>
  new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = {}
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("VALKEY_") && k !== "MICRODCS_EXTENSIONS") env[k] = v
    Object.assign(env, { VALKEY_URL: inject("valkeyUrl"), VALKEY_PREFIX: prefix, MICRODCS_EXTENSIONS: extension, NO_COLOR: "1" })
    const argv = ["--import", "tsx/esm", "--conditions=source", "src/main.ts", ...args]
    const child = execFile(process.execPath, argv, { cwd: cliDir, env, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr })
    )
    child.stdin?.end()
  })

/** Runs an effect on this test's island, with the ticket family registered. */
const onIsland = <A, E>(effect: Effect.Effect<A, E, IndexMaintenance | Layer.Success<ReturnType<typeof ticketIsland>>>) =>
  Effect.runPromise(
    Effect.scoped(
      effect.pipe(
        Effect.provide(IndexMaintenance.Default.pipe(Layer.provide(IndexRegistry.with(...indexedFamilies)), Layer.provideMerge(ticketIsland(prefix))))
      )
    )
  )

describe("microdcs-admin index with MICRODCS_EXTENSIONS naming the example", () => {
  it("check reports the broken ticket index (exit 1), rebuild repairs it", async () => {
    const expected = await onIsland(Effect.andThen(seedTickets, breakTicketIndexes))

    const checked = await admin(["index", "check", "--json"])
    expect(checked.code, checked.stderr).toBe(1)
    const report = JSON.parse(checked.stdout) as { consistent: boolean; inconsistencies: ReadonlyArray<Record<string, unknown>> }
    expect(report.consistent).toBe(false)
    expect(report.inconsistencies.map((i) => `${i["kind"]} ${i["member"]}`).sort()).toEqual(expected.map((e) => `${e.kind} ${e.member}`).sort())

    const rebuilt = await admin(["index", "rebuild", "--yes", "--json"])
    expect(rebuilt.code, rebuilt.stderr).toBe(0)
    expect(JSON.parse(rebuilt.stdout)).toMatchObject({ repaired: 2, removed: 2, deletedKeys: [], unrepaired: [] })

    const after = await onIsland(Effect.flatMap(IndexMaintenance, (m) => Effect.zip(m.check(), ticketIndexContents)))
    expect(after).toEqual([[], repairedContents])
  }, 60_000)
})
