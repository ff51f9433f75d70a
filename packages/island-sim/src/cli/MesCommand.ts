import { Data, Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { runMes } from "../Mes.js"
import { readMesInput } from "../MesInput.js"
import { allCompleted, formatReport } from "../MesReport.js"
import { connectionFlags, mqttOptionsOf, topicsOf } from "./Connection.js"

/** The batch ran, but not every job order completed: the report says which and why. */
export class JobsNotCompleted extends Data.TaggedError("JobsNotCompleted")<{ readonly message: string }> {}

const flags = {
  ...connectionFlags,
  orders: Flag.String("orders").pipe(
    Flag.withMetavar("PATH"),
    Flag.withDescription("A job order file (one order or a list), or a directory of them (*.json); repeat for several."),
    Flag.atLeast(1)
  ),
  config: Flag.String("config").pipe(
    Flag.withMetavar("PATH"),
    Flag.withDescription("Configuration requests sent first, in order: a file of {type, data} or {type, file} entries, or a directory of them; repeat for several."),
    Flag.between(0, 256)
  ),
  scope: Flag.String("scope").pipe(Flag.withMetavar("SCOPE"), Flag.withDescription("The scope the requests go to."), Flag.withDefault("line-1")),
  count: Flag.Int("count").pipe(Flag.withDescription("Send this many copies of each job order, numbered {JobOrderID}-0001, -0002, ..."), Flag.optional),
  concurrency: Flag.Int("concurrency").pipe(Flag.withDescription("StoreAndStart requests in flight at once."), Flag.withDefault(8)),
  timeout: Flag.Int("timeout").pipe(Flag.withMetavar("SECONDS"), Flag.withDescription("How long to wait for the jobs to end after the last was submitted."), Flag.withDefault(120)),
  json: Flag.Boolean("json").pipe(Flag.withDescription("Print the report as JSON on stdout."), Flag.withDefault(false))
}

const progressLine = (p: { readonly total: number; readonly submitted: number; readonly completed: number; readonly failed: number }) =>
  `  submitted ${p.submitted}/${p.total}  completed ${p.completed}  failed ${p.failed}`

export const mesCommand = Command.make("mes", flags, (f) =>
  Effect.gen(function* () {
    const input = yield* readMesInput({ orders: f.orders, config: f.config, count: f.count._tag === "Some" ? f.count.value : undefined })
    const say = (line: string) => void process.stderr.write(`${line}\n`)
    const report = yield* runMes({
      mqtt: yield* mqttOptionsOf(f.url),
      topics: yield* topicsOf(f.prefix, f.discriminator),
      scope: f.scope,
      input,
      concurrency: Math.max(1, f.concurrency),
      timeoutMs: Math.max(1, f.timeout) * 1000,
      log: say,
      onProgress: (p) => say(progressLine(p))
    })
    process.stdout.write(f.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report)}\n`)
    if (!allCompleted(report)) return yield* Effect.fail(new JobsNotCompleted({ message: `${report.submitted - report.completed} of ${report.submitted} job orders did not complete` }))
  })
).pipe(Command.withDescription("An MES over MQTT: sends the configuration, submits job orders with StoreAndStart, follows them to their end and reports."))
