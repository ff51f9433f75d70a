import { describe, expect, it as base, layer } from "@effect/vitest"
import { Effect, Metric } from "effect"
import { ExecutionLogStore, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { executionLogDroppedCounter, ExecutionLogWriter } from "@microdcs/sfc-runtime"
import { randomPrefix, startInstance } from "@microdcs/test-utils"
import { engineWorld, eventually, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import { executionOf, jobOrderFor, linearRecipe, pull, push, recipeWorkMaster, SCOPE, stepJson, transition, untilExecution, untilJobOrderIs } from "./RuntimeKit.js"
import { executionIdOf, executionTree, hasExecutionRecord, keysOfExecution, treeLines, treeStorage, type TreeRow, withLogStore } from "./ExecutionLogKit.js"

/** The engine writes the execution log, read back as the tree. */

/** The tree of the job's execution once `ready` holds for its rows (the log is written off the critical path). */
const untilTree = (jobId: string, ready: (rows: ReadonlyArray<TreeRow>) => boolean) =>
  Effect.gen(function* () {
    const executionId = yield* eventually(executionIdOf(jobId))
    const rows = yield* eventually(
      executionTree(executionId).pipe(
        Effect.map((rows) => (ready(rows) ? rows : undefined)),
        Effect.catchTag("ExecutionNotFound", () => Effect.succeed(undefined))
      )
    )
    return { executionId, rows }
  })

const closedWith = (status: string) => (rows: ReadonlyArray<TreeRow>) => rows[0]?.type === "execution" && rows[0].record.status === status

layer(treeStorage, { timeout: 60_000, excludeTestServices: true })("SFC engine: the execution log", (it) => {
  it.effect("a loop through a simultaneous branch: child executions per path and visit, nodes in run order", () => {
    let checks = 0
    const world = engineWorld({
      onCommand: (command) => ({ data: command.action === "check" ? { ok: ++checks > 1 } : { done: command.action } }),
      events: { "com.example.qa.v1": () => ({ passed: true }) }
    })
    const recipe = {
      Steps: ["Load", "Fit", "Tighten", "Qa", "Check", "Unload"].map((name, i) => stepJson(name, i === 0)),
      Branches: [{ Name: "Work", Type: "simultaneous", Branches: [["Fit", "Tighten"], ["Qa"]] }],
      Transitions: [
        transition("Load", "Work"),
        transition("Work", "Check"),
        transition("Check", "Work", "ok == false", 0),
        transition("Check", "Unload", "ok == true", 1)
      ],
      Actions: [push("load", "Load"), push("fit", "Fit"), push("tighten", "Tighten"), pull("qa", "Qa"), push("check", "Check"), push("unload", "Unload")]
    }
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-loop", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-loop", "wm-loop"))
      yield* untilJobOrderIs("jo-loop", "Ended_Completed")
      const { executionId, rows } = yield* untilTree("jo-loop", closedWith("completed"))
      // Chosen at start, kept in the state: the job id with a start time and a random part.
      expect(executionId).toMatch(/^jo-loop\.\d+\.[0-9a-f]{8}$/)
      const path = (p: number, visit: number) => [
        `    exec X.Work.${p}.${visit} completed`,
        ...(p === 0
          ? [
              `      0 step Fit v${visit}`, `      1 action fit v${visit}`, `      2 event com.example.fit.v1.reply v${visit}`,
              `      3 step Tighten v${visit}`, `      4 action tighten v${visit}`, `      5 event com.example.tighten.v1.reply v${visit}`
            ]
          : [`      0 step Qa v${visit}`, `      1 action qa v${visit}`, `      2 event com.example.qa.v1 v${visit}`])
      ]
      expect(treeLines(rows)).toEqual([
        "exec X completed",
        "  0 step Load v1", "  1 action load v1", "  2 event com.example.load.v1.reply v1", "  3 transition Load -> Work",
        "  4 branch Work v1", ...path(0, 1), ...path(1, 1),
        "  5 transition Work -> Check", "  6 step Check v1", "  7 action check v1", "  8 event com.example.check.v1.reply v1",
        "  9 transition Check -> Work",
        "  10 branch Work v2", ...path(0, 2), ...path(1, 2),
        "  11 transition Work -> Check", "  12 step Check v2", "  13 action check v2", "  14 event com.example.check.v1.reply v2",
        "  15 transition Check -> Unload", "  16 step Unload v1", "  17 action unload v1", "  18 event com.example.unload.v1.reply v1"
      ])
      // The link is the node that created the child: its children, and the child's parent.
      const branch = rows.find((r) => r.type === "node" && r.record.seq === 10 && r.executionId === executionId)
      expect(branch?.type === "node" && branch.record.children).toEqual([`${executionId}.Work.0.2`, `${executionId}.Work.1.2`])
      const child = rows.find((r) => r.type === "execution" && r.executionId === `${executionId}.Work.1.2`)
      expect(child?.type === "execution" && child.record).toMatchObject({ jobId: "jo-loop", scope: SCOPE, workMasterId: "wm-loop", parent: { executionId, seq: 10 }, lastSeq: 2 })
      const top = rows[0]!.type === "execution" ? rows[0]!.record : undefined
      expect(top).toMatchObject({ jobId: "jo-loop", scope: SCOPE, workMasterId: "wm-loop", lastSeq: 18, status: "completed" })
      expect(top?.recipeDigest).toMatch(/^[0-9a-f]{64}$/)
      expect(top?.closedAt).toBeGreaterThanOrEqual(top!.openedAt)
      // The action node holds the reply's data.
      const check = rows.find((r) => r.type === "node" && r.executionId === executionId && r.record.seq === 13)
      expect(check?.type === "node" && check.record.detail).toMatchObject({ typeId: "com.example.check.v1", attempts: 1, result: { ok: true } })
    }).pipe(Effect.provide(withLogStore(world.layer)))
  })

  it.effect("a running execution shows its open node; closing it overwrites the same key", () => {
    let released = false
    const world = engineWorld({ events: { "com.example.wait.v1": () => (released ? { arrived: true } : undefined) } })
    const recipe = linearRecipe(["Load", "Wait"], [push("load", "Load"), pull("wait", "Wait")])
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-wait", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-wait", "wm-wait"))
      const open = yield* untilTree("jo-wait", (rows) => rows.some((r) => r.type === "node" && r.record.name === "wait"))
      expect(treeLines(open.rows)).toEqual([
        "exec X running",
        "  0 step Load v1", "  1 action load v1", "  2 event com.example.load.v1.reply v1", "  3 transition Load -> Wait",
        "  4 step Wait v1 (open)", "  5 action wait v1 (open)"
      ])
      released = true
      yield* untilJobOrderIs("jo-wait", "Ended_Completed")
      const closed = yield* untilTree("jo-wait", closedWith("completed"))
      expect(closed.executionId).toBe(open.executionId)
      expect(treeLines(closed.rows)).toEqual([
        "exec X completed",
        "  0 step Load v1", "  1 action load v1", "  2 event com.example.load.v1.reply v1", "  3 transition Load -> Wait",
        "  4 step Wait v1", "  5 action wait v1", "  6 event com.example.wait.v1 v1"
      ])
      // Open and close went to one key each: the record and nodes 0..6, nothing more.
      expect(yield* keysOfExecution(closed.executionId)).toHaveLength(1 + 7)
    }).pipe(Effect.provide(withLogStore(world.layer)))
  })

  it.effect("a closed execution hands its keys to dag:commits:{scope}; a long result is cut with a marker", () => {
    const world = engineWorld({ onCommand: () => ({ data: { blob: "x".repeat(2000) } }) }, { engine: { executionLogDetailBytes: 256 } })
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-big", linearRecipe(["Only"], [push("only", "Only")])))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-big", "wm-big"))
      yield* untilJobOrderIs("jo-big", "Ended_Completed")
      const { executionId, rows } = yield* untilTree("jo-big", closedWith("completed"))
      const action = rows.find((r) => r.type === "node" && r.record.kind === "action")
      // The large field is cut, with a marker; the rest of the node stays readable.
      expect(action?.type === "node" && action.record.detail).toMatchObject({
        typeId: "com.example.only.v1",
        attempts: 1,
        result: { truncated: true, bytes: 2011, head: expect.stringMatching(/^\{"blob":"x+$/) }
      })
      const store = yield* ExecutionLogStore
      const valkey = yield* Valkey
      const stream = yield* valkey.key("executionLogCommits", { scope: SCOPE })
      const entries = yield* eventually(
        unsafeCommand(valkey, "xrange", (c) => c.xrange(stream, "-", "+")).pipe(Effect.map((e) => (e.length > 0 ? e : undefined)))
      )
      const keys = entries.map(([, fields]) => JSON.parse(fields[fields.indexOf("keys") + 1]!) as Array<string>)
      const expected = [yield* store.execKey(executionId), ...(yield* Effect.forEach([0, 1, 2], (seq) => store.nodeKey(executionId, seq)))]
      expect(keys).toEqual([expected])
      expect(yield* keysOfExecution(executionId)).toEqual([...expected].sort())
    }).pipe(Effect.provide(withLogStore(world.layer)))
  })

  it.effect("with the log queue full the job still completes, and the drops are counted", () => {
    const recipe = linearRecipe(["Load", "Unload"], [push("load", "Load"), push("unload", "Unload")])
    const run = (queueSize: number, jobId: string) =>
      Effect.gen(function* () {
        const world = engineWorld({}, { engine: { executionLogQueueSize: queueSize } })
        return yield* Effect.gen(function* () {
          const before = (yield* Metric.value(executionLogDroppedCounter)).count
          yield* putWorkMaster(SCOPE, recipeWorkMaster(`wm-${jobId}`, recipe))
          yield* putJobOrder(SCOPE, jobOrderFor(jobId, `wm-${jobId}`))
          yield* untilJobOrderIs(jobId, "Ended_Completed")
          const writer = yield* ExecutionLogWriter
          const stats = yield* eventually(Effect.sync(() => writer.stats()).pipe(Effect.map((s) => (s.queued === 0 ? s : undefined))))
          const after = (yield* Metric.value(executionLogDroppedCounter)).count
          const executionId = (yield* executionOf(jobId))?.state.log?.executionId
          return { stats, counted: after - before, executionId, stored: executionId === undefined ? false : yield* hasExecutionRecord(executionId) }
        }).pipe(Effect.provide(withLogStore(world.layer)))
      })
    return Effect.gen(function* () {
      const none = yield* run(0, "jo-full-0")
      expect(none.executionId).toBeDefined()
      expect(none.stats).toMatchObject({ installed: true, written: 0 })
      expect(none.stats.dropped).toBeGreaterThanOrEqual(5)
      expect(none.counted).toBeGreaterThanOrEqual(none.stats.dropped)
      expect(none.stored).toBe(false)
      const one = yield* run(1, "jo-full-1")
      expect(one.stats.dropped).toBeGreaterThan(0)
      expect(one.counted).toBeGreaterThanOrEqual(one.stats.dropped)
    })
  })

  it.effect("retention removes the oldest executions beyond the cap, on the 100th open", () => {
    // 4 jobs, then one whose simultaneous branch opens 95 child executions: 100 opens in all.
    const paths = Array.from({ length: 95 }, (_, i) => `P${String(i).padStart(2, "0")}`)
    const wide = {
      Steps: [stepJson("Begin", true), ...paths.map((p) => stepJson(p)), stepJson("End")],
      Branches: [{ Name: "Wide", Type: "simultaneous", Branches: paths.map((p) => [p]) }],
      Transitions: [transition("Begin", "Wide"), transition("Wide", "End")],
      Actions: [push("end", "End")]
    }
    const small = linearRecipe(["Only"], [push("only", "Only")])
    const world = engineWorld({}, { engine: { executionLogCap: 50 } })
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-small", small))
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-wide", wide))
      const early: Array<string> = []
      for (const n of [1, 2, 3, 4]) {
        yield* putJobOrder(SCOPE, jobOrderFor(`jo-early-${n}`, "wm-small"))
        yield* untilJobOrderIs(`jo-early-${n}`, "Ended_Completed")
        const { executionId } = yield* untilTree(`jo-early-${n}`, closedWith("completed"))
        early.push(executionId)
      }
      const store = yield* ExecutionLogStore
      expect(yield* store.oldestBeyond(0)).toEqual(early)
      yield* putJobOrder(SCOPE, jobOrderFor("jo-wide", "wm-wide"))
      yield* untilJobOrderIs("jo-wide", "Ended_Completed")
      const writer = yield* ExecutionLogWriter
      yield* eventually(Effect.sync(() => writer.stats()).pipe(Effect.map((s) => (s.removed > 0 && s.queued === 0 ? s : undefined))))
      expect(writer.stats()).toMatchObject({ opened: 100, removed: 50, dropped: 0, retentionFailures: 0 })
      // The cap holds, and the oldest (the four early jobs first) lost their record and nodes.
      expect(yield* store.oldestBeyond(0)).toHaveLength(50)
      for (const id of early) expect(yield* keysOfExecution(id)).toEqual([])
      const wideId = (yield* executionOf("jo-wide"))!.state.log!.executionId
      expect(yield* hasExecutionRecord(`${wideId}.Wide.94.1`)).toBe(true)
    }).pipe(Effect.provide(withLogStore(world.layer)))
  })

  it.effect("a state stored before the log (no execution id) runs on and gets an id on its first touch", () => {
    const prefix = randomPrefix("sfc-log")
    let released = false
    const script = { events: { "com.example.wait.v1": () => (released ? { arrived: true } : undefined) } }
    const recipe = linearRecipe(["Wait", "Unload"], [pull("wait", "Wait"), push("unload", "Unload")])
    return Effect.gen(function* () {
      // An engine without the log starts the job, as one before this change would have.
      const before = yield* startInstance(engineWorld(script, { prefix, engine: { executionLog: false } }).layer)
      yield* Effect.gen(function* () {
        yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-old", recipe))
        yield* putJobOrder(SCOPE, jobOrderFor("jo-old", "wm-old"))
        const waiting = yield* untilExecution("jo-old", (s) => s.actions.some((a) => a.state === "waiting"))
        expect(waiting.state.log).toBeUndefined()
        expect(waiting.state.active[0]?.logSeq).toBeUndefined()
      }).pipe(Effect.provide(before.context))
      yield* before.stop
      // The engine with the log takes over: the event touches the old state, which then runs to its end.
      released = true
      const after = engineWorld(script, { prefix })
      yield* Effect.gen(function* () {
        yield* untilJobOrderIs("jo-old", "Ended_Completed")
        const { executionId, rows } = yield* untilTree("jo-old", closedWith("completed"))
        expect(executionId).toMatch(/^jo-old\./)
        const state = (yield* executionOf("jo-old"))!.state
        expect(rows[0]?.type === "execution" && rows[0].record.openedAt).toBe(state.startedAt)
        // What ran before the log is not in it; what ran after is, from sequence 0.
        expect(treeLines(rows)).toEqual([
          "exec X completed",
          "  0 event com.example.wait.v1 v1", "  1 transition Wait -> Unload", "  2 step Unload v1", "  3 action unload v1",
          "  4 event com.example.unload.v1.reply v1"
        ])
      }).pipe(Effect.provide(withLogStore(after.layer)))
    })
  })
})

describe("SFC engine: the execution log off", () => {
  base.live("executionLog: false gives the state no execution id and writes nothing", () => {
    const world = engineWorld({}, { engine: { executionLog: false } })
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-off", linearRecipe(["Only"], [push("only", "Only")])))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-off", "wm-off"))
      yield* untilJobOrderIs("jo-off", "Ended_Completed")
      expect((yield* executionOf("jo-off"))?.state.log).toBeUndefined()
      expect((yield* ExecutionLogWriter).stats()).toMatchObject({ installed: false, written: 0, dropped: 0 })
      expect(yield* (yield* ExecutionLogStore).oldestBeyond(0)).toEqual([])
    }).pipe(Effect.provide(withLogStore(world.layer)))
  })
})
