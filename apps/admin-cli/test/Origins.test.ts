import { hostname, userInfo } from "node:os"
import { Effect } from "effect"
import { describe, expect, inject, it } from "vitest"
import { encodeJobOrderRecord, JobStates } from "@microdcs/job-state"
import { RECIPE_SCHEMA_ID } from "@microdcs/sfc"
import { JobOrderDao } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { engineBeside, readUntil } from "./EngineBeside.js"
import { SCOPE, withStore } from "./Seed.js"

// Issue 21: an abort from the CLI was logged as "aborted by the MES", a pause from the CLI looked
// like one from the MES. The CLI names the operator (`--actor`, default user@host): the history of
// `joborders show` and the execution log of `executions tree` say who it was. An engine runs here,
// on the CLI's prefix, so the log is the one the island writes.
const url = inject("valkeyUrl")
const prefix = randomPrefix("cli-origins")

/** A job that waits for an event no station sends: it stays Running until an operator acts. */
const waiting = {
  ID: "wm-wait",
  dataschema: RECIPE_SCHEMA_ID,
  data: {
    Steps: [{ Name: "Wait", Initial: true }],
    Transitions: [],
    Actions: [{ Name: "await", Step: "Wait", Qualifier: "N", Interaction: "pull_event", TypeId: "com.example.never.v1", TimeoutSeconds: 600 }]
  }
}

const beside = engineBeside(url, prefix, { consumer: "cli-origins", workMaster: waiting })
const stateOf = beside.stateOf

/** Submits a job as the MES's StoreAndStart would have written it, and waits until it runs. */
const running = async (id: string) => {
  const doc = encodeJobOrderRecord({ JobOrderID: id, WorkMasterID: [{ ID: waiting.ID }] }, JobStates.AllowedToStart_Ready)
  await withStore(url, prefix, Effect.flatMap(JobOrderDao, (dao) => dao.put({ id, scope: SCOPE, doc, priority: 0, expectedVersion: 0, change: "StoreAndStart" })))
  await readUntil(() => stateOf(id), (s) => s === "Running", `${id} Running`)
}

interface TreeNode {
  readonly type: string
  readonly record: { readonly kind?: string; readonly name?: string; readonly detail?: Record<string, unknown> }
}

/** The job's log node of `kind`, once the engine has written it. */
const logNode = (id: string, kind: string) =>
  readUntil(
    async () => ((await beside.cli.json<{ rows: ReadonlyArray<TreeNode> }>(["executions", "tree", id])).rows ?? []).find((r) => r.type === "node" && r.record.kind === kind),
    (node) => node !== undefined,
    `${kind} node of ${id}`
  )

describe("who did it: the operator's origin", () => {
  it("abort --actor names the operator in the history and in the log's error node, not the MES", async () => {
    await running("jo-op-1")
    const aborted = await beside.cli.json(["joborders", "abort", "jo-op-1", "--scope", SCOPE, "--yes", "--actor", "alice@host", "--comment", "tool broke"])
    expect(aborted).toMatchObject({ method: "Abort", state: "Aborted" })
    const error = await logNode("jo-op-1", "error")
    // Who, from where (this host: the CLI's machine) and why; never "aborted by the MES".
    expect(error!.record.detail).toEqual({ error: "aborted by cli:alice@host", by: "cli:alice@host", from: hostname(), comment: "tool broke" })
    const shown = await beside.cli.json<{ history: ReadonlyArray<{ change: string; origin: unknown }> }>(["joborders", "show", "jo-op-1"])
    expect(shown.history.map((e) => [e.change, e.origin])).toEqual([
      ["StoreAndStart", null],
      ["Run", { kind: "engine", id: "sfc" }],
      ["Abort", { kind: "cli", id: "alice@host", comment: "tool broke", from: hostname() }]
    ])
    const table = await beside.cli.run(["joborders", "show", "jo-op-1"])
    expect(table.stdout).toMatch(/Abort\s+\d+\s+cli:alice@host\s+tool broke/)
  })

  it("pause without --actor names the OS user on this host, in the history and the pause node", async () => {
    await running("jo-op-2")
    expect(await beside.cli.json(["joborders", "pause", "jo-op-2", "--scope", SCOPE])).toMatchObject({ state: "Interrupted_Suspended" })
    const me = `${userInfo().username}@${hostname()}`
    const pause = await logNode("jo-op-2", "pause")
    expect(pause!.record.detail).toEqual({ by: `cli:${me}`, from: hostname() })
    const shown = await beside.cli.json<{ history: ReadonlyArray<{ change: string; origin: unknown }> }>(["joborders", "show", "jo-op-2"])
    expect(shown.history.at(-1)).toMatchObject({ change: "Pause", origin: { kind: "cli", id: me, from: hostname() } })
  })

  it("a bad --actor is refused with every problem named (exit 2), and nothing changes", async () => {
    await running("jo-op-3")
    const refused = await beside.cli.run(["joborders", "abort", "jo-op-3", "--scope", SCOPE, "--yes", "--actor", `bad\tname${"x".repeat(300)}`])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain("--actor")
    expect(refused.stderr).toContain("at most 256")
    expect(refused.stderr).toContain("control characters")
    expect(await stateOf("jo-op-3")).toBe("Running")
  })
})
