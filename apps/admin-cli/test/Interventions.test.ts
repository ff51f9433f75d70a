import { hostname } from "node:os"
import { Effect } from "effect"
import { describe, expect, inject, it } from "vitest"
import { encodeJobOrderRecord, JobStates } from "@microdcs/job-state"
import { RECIPE_SCHEMA_ID } from "@microdcs/sfc"
import { JobOrderDao } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { engineBeside, readUntil } from "./EngineBeside.js"
import { SCOPE, withStore } from "./Seed.js"

// The operator's audited interventions from the CLI: skip a step, force a transition, set a
// result, retry an action, each on a job that waits (its station never answers), each visible with
// who and why in `executions show` and in the execution log (`executions tree`). An engine runs
// here on the CLI's prefix, so the job is the one the island would run.
const url = inject("valkeyUrl")
const prefix = randomPrefix("cli-interventions")

const pushAction = (Name: string, Step: string) => ({ Name, Step, Qualifier: "N", Interaction: "push_command", TypeId: `com.example.${Name}.v1`, TimeoutSeconds: 600 })

/** Load, then Press, which goes to Done on a good press and to Rework on a bad one. */
const workMaster = {
  ID: "wm-iv",
  dataschema: RECIPE_SCHEMA_ID,
  data: {
    Steps: ["Load", "Press", "Rework", "Done"].map((Name, i) => ({ Name, Initial: i === 0 })),
    Transitions: [
      { Source: "Load", Target: "Press", Condition: "true" },
      { Source: "Press", Target: "Done", Condition: "press.ok == true", Priority: 1 },
      { Source: "Press", Target: "Rework", Condition: "press.ok == false", Priority: 2 },
      { Source: "Rework", Target: "Done", Condition: "true" }
    ],
    Actions: [pushAction("load", "Load"), pushAction("press", "Press"), pushAction("rework", "Rework"), pushAction("done", "Done")]
  }
}

const beside = engineBeside(url, prefix, { consumer: "cli-interventions", station: { onCommand: () => "silent" }, workMaster: workMaster })
const stateOf = beside.stateOf

interface Shown {
  readonly version: number
  readonly state: { readonly status: string; readonly active: ReadonlyArray<{ step: string }>; readonly results: Record<string, unknown>; readonly interventions?: ReadonlyArray<Record<string, unknown>> }
}
const show = (id: string) => beside.cli.json<Shown>(["executions", "show", id])

/** Submits a job as the MES's StoreAndStart would, and waits until its execution is in Load. */
const waitingInLoad = async (id: string) => {
  const doc = encodeJobOrderRecord({ JobOrderID: id, WorkMasterID: [{ ID: workMaster.ID }] }, JobStates.AllowedToStart_Ready)
  await withStore(url, prefix, Effect.flatMap(JobOrderDao, (dao) => dao.put({ id, scope: SCOPE, doc, priority: 0, expectedVersion: 0, change: "StoreAndStart" })))
  await readUntil(() => stateOf(id), (s) => s === "Running", `${id} Running`)
}

interface TreeNode {
  readonly type: string
  readonly record: { readonly kind?: string; readonly name?: string; readonly detail?: Record<string, unknown> }
}

/** The job's log nodes of `kind` (the CLI writes its own before it exits). */
const logNodes = async (id: string, kind: string) =>
  ((await beside.cli.json<{ rows: ReadonlyArray<TreeNode> }>(["executions", "tree", id])).rows ?? []).filter((r) => r.type === "node" && r.record.kind === kind).map((r) => r.record)

const alice = ["--actor", "alice@host", "--yes"]

describe("interventions from the CLI", () => {
  it("skip-step and force-transition move the job; who and why are in the state and the log", async () => {
    await waitingInLoad("jo-iv-1")
    const skipped = await beside.cli.json(["executions", "skip-step", "jo-iv-1", "Load", "--reason", "load cell broken", ...alice])
    expect(skipped).toMatchObject({ jobId: "jo-iv-1", intervention: "skip-step", step: "Load", by: { kind: "cli", id: "alice@host", from: hostname() }, reason: "load cell broken", status: "running", activeSteps: ["Press"] })
    expect(await logNodes("jo-iv-1", "skip-step")).toEqual([
      expect.objectContaining({ name: "Load", detail: { by: "cli:alice@host", from: hostname(), reason: "load cell broken", target: "Press", abandoned: ["load"] } })
    ])
    const forced = await beside.cli.json(["executions", "force-transition", "jo-iv-1", "--from", "Press", "--to", "Rework", "--reason", "part visibly bent", ...alice])
    expect(forced).toMatchObject({ intervention: "force-transition", transition: { source: "Press", target: "Rework" }, activeSteps: ["Rework"] })
    expect(await beside.cli.json(["executions", "force-transition", "jo-iv-1", "--index", "3", "--reason", "reworked by hand", ...alice])).toMatchObject({ activeSteps: ["Done"] })
    const { state } = await show("jo-iv-1")
    expect(state.interventions?.map((i) => [i["intervention"], i["name"], i["by"], i["reason"]])).toEqual([
      ["skip-step", "Load", { kind: "cli", id: "alice@host", from: hostname() }, "load cell broken"],
      ["force-transition", "Press -> Rework", { kind: "cli", id: "alice@host", from: hostname() }, "part visibly bent"],
      ["force-transition", "Rework -> Done", { kind: "cli", id: "alice@host", from: hostname() }, "reworked by hand"]
    ])
    expect((await logNodes("jo-iv-1", "force-transition")).map((n) => [n.name, n.detail?.["by"], n.detail?.["reason"]])).toEqual([
      ["Press -> Rework", "cli:alice@host", "part visibly bent"],
      ["Rework -> Done", "cli:alice@host", "reworked by hand"]
    ])
    const table = await beside.cli.run(["executions", "show", "jo-iv-1"])
    expect(table.stdout).toMatch(/Interventions\nTIME\s+INTERVENTION\s+NAME\s+BY\s+REASON/)
    expect(table.stdout).toMatch(/skip-step\s+Load\s+cli:alice@host\s+load cell broken/)
  })

  it("set-result completes an open action and the step's transitions follow it; retry-action resends, audited", async () => {
    await waitingInLoad("jo-iv-2")
    const retried = await beside.cli.json(["executions", "retry-action", "jo-iv-2", "load", "--reason", "station rebooted", ...alice])
    expect(retried).toMatchObject({ intervention: "retry", action: "load", attempt: 2, activeSteps: ["Load"] })
    expect((await logNodes("jo-iv-2", "retry"))[0]?.detail).toEqual({ by: "cli:alice@host", from: hostname(), reason: "station rebooted", attempt: 2 })
    await beside.cli.json(["executions", "set-result", "jo-iv-2", "load", "--result", "{}", "--reason", "loaded by hand", ...alice])
    const set = await beside.cli.json(["executions", "set-result", "jo-iv-2", "press", "--result", '{"ok":false}', "--reason", "press gauge shows nok", ...alice])
    expect(set).toMatchObject({ intervention: "set-result", action: "press", result: { ok: false }, activeSteps: ["Rework"] })
    expect((await show("jo-iv-2")).state.results).toEqual({ load: {}, press: { ok: false } })
    expect((await logNodes("jo-iv-2", "set-result")).map((n) => n.detail)).toEqual([
      { by: "cli:alice@host", from: hostname(), reason: "loaded by hand", result: {} },
      { by: "cli:alice@host", from: hostname(), reason: "press gauge shows nok", result: { ok: false } }
    ])
  })

  it("refuses with exit codes like the other commands, and changes nothing", async () => {
    await waitingInLoad("jo-iv-3")
    const before = await show("jo-iv-3")
    const code = async (args: ReadonlyArray<string>) => (await beside.cli.run(["executions", ...args])).code
    // No reason, a blank one, no --yes, both ways of naming a transition, a result that is not JSON.
    expect(await code(["skip-step", "jo-iv-3", "Load", "--yes"])).toBe(2)
    expect(await code(["skip-step", "jo-iv-3", "Load", "--reason", " ", "--yes"])).toBe(2)
    expect(await code(["skip-step", "jo-iv-3", "Load", "--reason", "why"])).toBe(5)
    expect(await code(["force-transition", "jo-iv-3", "--index", "0", "--from", "Load", "--to", "Press", "--reason", "why", "--yes"])).toBe(2)
    expect(await code(["set-result", "jo-iv-3", "load", "--result", "{nope", "--reason", "why", "--yes"])).toBe(2)
    // Names the recipe lacks: exit 3, as for a job without an execution.
    const unknown = await beside.cli.run(["executions", "skip-step", "jo-iv-3", "Nope", "--reason", "why", "--yes"])
    expect([unknown.code, unknown.stderr]).toEqual([3, "error: skip-step refused: step Nope is not in the recipe\n"])
    expect(await code(["retry-action", "jo-iv-3", "nope", "--reason", "why", "--yes"])).toBe(3)
    expect(await code(["skip-step", "jo-none", "Load", "--reason", "why", "--yes"])).toBe(3)
    // What the job's state does not allow: exit 6.
    const inactive = await beside.cli.run(["executions", "skip-step", "jo-iv-3", "Rework", "--reason", "why", "--yes"])
    expect([inactive.code, inactive.stderr]).toEqual([6, "error: skip-step refused: step Rework is not active (active: Load)\n"])
    // Several problems: each named; the input's own (no target for a step with two transitions) decides the code.
    const both = await beside.cli.run(["executions", "skip-step", "jo-iv-3", "Press", "--reason", "why", "--yes"])
    expect([both.code, both.stderr]).toEqual([2, "error: skip-step refused: step Press has 2 transitions (to Done, Rework): name the target; step Press is not active (active: Load)\n"])
    expect(await code(["retry-action", "jo-iv-3", "press", "--reason", "why", "--yes"])).toBe(6)
    expect(await show("jo-iv-3")).toEqual(before)
    // A finished job.
    await beside.cli.json(["joborders", "abort", "jo-iv-3", "--scope", SCOPE, "--yes"])
    await readUntil(async () => (await show("jo-iv-3")).state.status, (s) => s === "aborted", "jo-iv-3 aborted")
    const ended = await beside.cli.run(["executions", "set-result", "jo-iv-3", "load", "--result", "1", "--reason", "why", "--yes", "--json"])
    expect(ended.code).toBe(6)
    expect(JSON.parse(ended.stderr)).toEqual({ error: "Conflict", message: "set-result refused: the job has ended (aborted): nothing is left to intervene in", exitCode: 6 })
  })
})
