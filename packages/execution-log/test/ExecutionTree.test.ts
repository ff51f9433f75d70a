import { expect, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { randomPrefix } from "@microdcs/test-utils"
import { ExecutionLogStore } from "@microdcs/store"
import { ExecutionNotFound, executionTree, retainExecutions, type TreeRow } from "@microdcs/execution-log"
import { execution, logWorld, node, startRole, storedBytes, until, writeExecution } from "./LogKit.js"

/** Generous: the whole suite shares two cores, and the SIGKILL test starts a process under tsx. */
const TEST_TIMEOUT_MS = 90_000
const prefix = randomPrefix("exectree")

/** What a client draws: indentation and a label per row. */
const drawn = (rows: ReadonlyArray<TreeRow>) =>
  rows.map((r) => "  ".repeat(r.depth) + (r.type === "node" ? `${r.record.seq} ${r.record.kind} ${r.record.name}` : `${r.type} ${r.executionId}`))

/**
 * A job's execution with a simultaneous branch: the branch node (seq 1) started two child
 * executions; the first child's node 1 is still open (the child runs).
 */
const writeJob = (root: string, openedAt: number) =>
  Effect.gen(function* () {
    const [a, b] = [`${root}.b1.p1.1`, `${root}.b1.p2.1`]
    const keys = [
      ...(yield* writeExecution(execution(root, 2, { openedAt }), [
        node(0, { name: "load" }),
        node(1, { kind: "branch", name: "b1", children: [a, b] }),
        node(2, { name: "unload" })
      ])),
      ...(yield* writeExecution(execution(a, 1, { openedAt: openedAt + 1, parent: { executionId: root, seq: 1 }, status: "running" }), [
        node(0, { kind: "action", name: "press" }),
        node(1, { name: "wait", closedAt: undefined })
      ])),
      ...(yield* writeExecution(execution(b, 0, { openedAt: openedAt + 2, parent: { executionId: root, seq: 1 } }), [node(0, { kind: "event", name: "part.done" })]))
    ]
    return keys
  })

layer(logWorld(prefix), { timeout: 60_000, excludeTestServices: true })("executionTree", (it) => {
  it.effect("walks depth first through the delegating node into the children, as flat rows with depth; Valkey or storage give the same rows", () =>
    Effect.gen(function* () {
      const store = yield* ExecutionLogStore
      const keys = yield* writeJob("job7", 1_000)
      const fromValkey = yield* executionTree("job7")
      expect(drawn(fromValkey)).toEqual([
        "execution job7",
        "  0 step load",
        "  1 branch b1",
        "    execution job7.b1.p1.1",
        "      0 action press",
        "      1 step wait",
        "    execution job7.b1.p2.1",
        "      0 event part.done",
        "  2 step unload"
      ])
      // A running execution shows the node it is in: open, no close time.
      expect(fromValkey[5]).toMatchObject({ type: "node", record: { name: "wait" } })
      expect(fromValkey[5]!.type === "node" && fromValkey[5]!.record.closedAt).toBeUndefined()

      yield* startRole()
      yield* store.commit("line-1", keys)
      yield* until(storedBytes(keys), (rows) => rows.size === keys.length, { what: "the job's keys stored" })

      // Retention at a cap of 1 removes the closed ones (the root and the second child) from Valkey
      // and keeps the first child, which runs: the tree now comes from both places, with the same rows.
      expect(yield* retainExecutions(1)).toEqual(["job7", "job7.b1.p2.1"])
      expect(yield* store.readExec("job7")).toMatchObject({ _tag: "None" })
      expect(yield* store.readNodes("job7", 0, 2)).toEqual([])
      expect(yield* executionTree("job7")).toEqual(fromValkey)
      expect(yield* retainExecutions(0)).toEqual([])
      // A child tree on its own starts at depth 0 (this one from storage alone).
      expect(drawn(yield* executionTree("job7.b1.p2.1"))).toEqual(["execution job7.b1.p2.1", "  0 event part.done"])
    }).pipe(Effect.scoped),
    TEST_TIMEOUT_MS
  )

  it.effect("an execution in neither place is ExecutionNotFound; a child in neither place is a missing row", () =>
    Effect.gen(function* () {
      expect(yield* Effect.exit(executionTree("nowhere"))).toEqual(Exit.fail(new ExecutionNotFound({ executionId: "nowhere" })))
      yield* writeExecution(execution("lonely", 0), [node(0, { kind: "branch", name: "b1", children: ["lonely.b1.p1.1"] })])
      expect(drawn(yield* executionTree("lonely"))).toEqual(["execution lonely", "  0 branch b1", "    missing lonely.b1.p1.1"])
    }),
    TEST_TIMEOUT_MS
  )

  it.effect("a value that is no record of the encoding is LogRecordInvalid, naming the key", () =>
    Effect.gen(function* () {
      const store = yield* ExecutionLogStore
      const key = yield* store.execKey("garbled")
      yield* store.write([{ key, value: new TextEncoder().encode(`{"v":99}`) }])
      const exit = yield* Effect.exit(executionTree("garbled"))
      expect(exit).toMatchObject({ _tag: "Failure", cause: { reasons: [{ _tag: "Fail", error: { _tag: "LogRecordInvalid", key } }] } })
    }),
    TEST_TIMEOUT_MS
  )
})
