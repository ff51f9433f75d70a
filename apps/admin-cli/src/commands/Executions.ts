import { Argument, Command, Flag } from "effect/cli"
import { Effect } from "effect"
import { originText } from "@microdcs/job-state"
import type { ActionRun, ActiveStep, ExecutionState, InterventionRecord, StepRecord } from "@microdcs/sfc"
import { ExecutionLookup } from "@microdcs/execution-log"
import { SfcStateDao, type StoredDocument } from "@microdcs/store"
import { humanDuration, isoTime } from "../Format.js"
import { island } from "../Island.js"
import { parseJson } from "../Json.js"
import { renderTree, withExecutionLog } from "../ExecutionLogReader.js"
import { emit } from "../Output.js"
import { renderFields, renderTable, section, sections } from "../Table.js"
import { interventionCommands } from "./Interventions.js"

/**
 * The engine owns the codec of the state document; the CLI only reads it. A document without
 * the fields shown here is reported as malformed instead of failing the command.
 */
const asExecutionState = (document: unknown): ExecutionState | undefined => {
  const d = document as Partial<Record<keyof ExecutionState, unknown>> | null
  return d !== null &&
    typeof d === "object" &&
    typeof d.status === "string" &&
    Array.isArray(d.active) &&
    Array.isArray(d.actions) &&
    Array.isArray(d.history)
    ? (document as ExecutionState)
    : undefined
}

const branchOf = (s: ActiveStep) => (s.branch ? `${s.branch.name}/${s.branch.path}` : "")

const historySection = (state: ExecutionState): string =>
  section(
    "Step history",
    renderTable(
      [
        { header: "STEP", value: (h: StepRecord) => h.step },
        { header: "VISIT", value: (h) => h.visit, align: "right" },
        { header: "ENTERED", value: (h) => isoTime(h.enteredAt) },
        { header: "LEFT", value: (h) => isoTime(h.leftAt) }
      ],
      state.history
    )
  )

/** The operator's interventions: when, what, who and why. */
const interventionsSection = (state: ExecutionState): string =>
  section(
    "Interventions",
    renderTable(
      [
        { header: "TIME", value: (i: InterventionRecord) => isoTime(i.at) },
        { header: "INTERVENTION", value: (i) => i.intervention },
        { header: "NAME", value: (i) => i.name },
        { header: "BY", value: (i) => originText(i.by) },
        { header: "REASON", value: (i) => i.reason }
      ],
      state.interventions ?? []
    )
  )

const renderState = (stored: StoredDocument, state: ExecutionState, now: number): string =>
  sections(
    renderFields([
      ["job", stored.id],
      ["scope", stored.scope],
      ["status", state.status],
      ["work master", state.workMasterId],
      ["recipe digest", state.recipeDigest],
      ["started", isoTime(state.startedAt)],
      ["ended", isoTime(state.endedAt)],
      ["paused", isoTime(state.pausedAt)],
      ["error", state.error],
      ["revision", state.revision],
      ["version", stored.version]
    ]),
    section(
      "Active steps",
      renderTable(
        [
          { header: "STEP", value: (s: ActiveStep) => s.step },
          { header: "VISIT", value: (s) => s.visit, align: "right" },
          { header: "ENTERED", value: (s) => isoTime(s.enteredAt) },
          { header: "BRANCH/PATH", value: branchOf }
        ],
        state.active
      )
    ),
    section(
      "Actions",
      renderTable(
        [
          { header: "ACTION", value: (a: ActionRun) => a.action },
          { header: "STEP", value: (a) => a.step },
          { header: "VISIT", value: (a) => a.visit, align: "right" },
          { header: "STATE", value: (a) => a.state },
          { header: "ATTEMPTS", value: (a) => a.attempts, align: "right" },
          { header: "DEADLINE IN", value: (a) => (a.deadline === undefined ? undefined : humanDuration(Math.max(0, a.deadline - now))) },
          { header: "ERROR", value: (a) => a.error }
        ],
        state.actions
      )
    ),
    historySection(state),
    interventionsSection(state)
  )

const show = Command.make("show", { jobId: Argument.String("job-id") }, ({ jobId }) =>
  island(
    Effect.gen(function* () {
      const stored = yield* (yield* SfcStateDao).get(jobId)
      const document = parseJson(stored.doc)
      const state = asExecutionState(document)
      const base = { jobId, scope: stored.scope, version: stored.version, op: stored.op }
      const now = Date.now()
      if (state === undefined) {
        yield* emit({ ...base, malformed: true, document }, () => `execution state of ${jobId} is malformed:\n${stored.doc}`)
        return
      }
      yield* emit({ ...base, state }, () => renderState(stored, state, now))
    })
  )
).pipe(Command.withDescription("the execution state of a job: status, active steps, actions, step history and interventions"))

interface ActiveRow {
  readonly jobId: string
  readonly status: string
  readonly workMasterId: string | null
  readonly activeSteps: ReadonlyArray<string>
  readonly startedAt: number | null
}

const list = Command.make("list", { scope: Flag.String("scope") }, ({ scope }) =>
  island(
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const jobIds = [...(yield* dao.listActive(scope))].sort()
      const rows = yield* Effect.forEach(
        jobIds,
        (jobId) =>
          dao.get(jobId).pipe(
            Effect.map((stored): ActiveRow => {
              const state = asExecutionState(parseJson(stored.doc))
              return {
                jobId,
                status: state?.status ?? "(malformed)",
                workMasterId: state?.workMasterId ?? null,
                activeSteps: state?.active.map((s) => s.step) ?? [],
                startedAt: state?.startedAt ?? null
              }
            }),
            Effect.catchTag("NotFound", () =>
              Effect.succeed<ActiveRow>({ jobId, status: "(state missing)", workMasterId: null, activeSteps: [], startedAt: null })
            )
          ),
        { concurrency: 16 }
      )
      yield* emit({ scope, executions: rows }, () =>
        renderTable(
          [
            { header: "JOB", value: (r: ActiveRow) => r.jobId },
            { header: "STATUS", value: (r) => r.status },
            { header: "WORK MASTER", value: (r) => r.workMasterId },
            { header: "ACTIVE STEPS", value: (r) => r.activeSteps.join(",") },
            { header: "STARTED", value: (r) => isoTime(r.startedAt) }
          ],
          rows,
          `(no active executions in scope ${scope})`
        )
      )
    })
  )
).pipe(Command.withDescription("the active (not terminal) executions of a scope"))

/**
 * `executions tree JOB|EXECUTION`: the execution log as an indented table,
 * Valkey first, then storage at `PG_URL`. A job id shows each of its executions' trees, oldest
 * first; a running execution shows its open node.
 */
const tree = Command.make("tree", { id: Argument.String("job-or-execution-id") }, ({ id }) =>
  island(
    withExecutionLog(
      Effect.gen(function* () {
        const lookup = yield* ExecutionLookup
        const found = yield* lookup.tree(id)
        const now = Date.now()
        yield* emit({ ...found, storage: lookup.searchesStorage ? "postgres" : "valkey-only" }, () =>
          sections(
            renderFields([
              [found.resolvedAs === "job" ? "job" : "execution", id],
              ["executions", found.executions.join(", ")],
              ["storage", lookup.searchesStorage ? "Valkey, then PostgreSQL (PG_URL)" : "Valkey only (no PG_URL)"]
            ]),
            renderTree(found.rows, now)
          )
        )
      })
    )
  )
).pipe(Command.withDescription("the execution log tree of a job or an execution: nodes in run order, child executions indented"))

export const executionsCommand = Command.make("executions").pipe(
  Command.withDescription("SFC execution state and its log tree; an operator's interventions (skip a step, force a transition, set a result, retry an action)"),
  Command.withSubcommands([show, list, tree, ...interventionCommands])
)
