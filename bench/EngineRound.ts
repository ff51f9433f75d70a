import { Effect } from "effect"
import { SfcStateDao, Valkey } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { Redis } from "iovalkey"
import { BENCH_SCOPE, engineInstance, putWorkMaster, submitJobs } from "./EngineIsland.js"
import { JOBS, SINGLE_JOBS, STEPS, systemRound, type SystemRound } from "./Figures.js"
import { countSendsOf } from "./SentCommands.js"
import type { ServerProbe } from "./ServerProbe.js"
import type { StateWriteSample } from "./StateWriteLimit.js"
import { StepLog } from "./StepLog.js"
import { openWindow } from "./Window.js"

/**
 * The state document of job-0 and the last command entry the engine appended, as written;
 * `undefined` when the engine's trim already removed every entry (a slow run on a loaded machine).
 */
const stateWriteSample = (probe: ServerProbe) =>
  Effect.gen(function* () {
    const states = yield* SfcStateDao
    const valkey = yield* Valkey
    const state = yield* states.get("job-0")
    const work = valkey.keys.key("sfcWork", { scope: BENCH_SCOPE }) as string
    const recent = yield* Effect.promise(() => probe.client.xrevrange(work, "+", "-", "COUNT", 50))
    const fields = recent.map(([, flat]) => flat).find((flat) => flat[0] === "type" && flat[1] === "command")
    if (!fields) return undefined
    const entry: Array<readonly [string, string]> = []
    for (let i = 0; i < fields.length; i += 2) entry.push([fields[i]!, fields[i + 1]!])
    return { doc: state.doc, entry } satisfies StateWriteSample
  })

/**
 * One island on a fresh prefix with one engine in this process; submits `jobs` of a `steps`-step
 * recipe and waits for them.
 */
const island = (url: string, probe: ServerProbe, jobs: number, oneAtATime: boolean, executionLog: boolean, steps = STEPS) =>
  Effect.gen(function* () {
    const log = new StepLog()
    const layer = engineInstance({ url, prefix: randomPrefix("bench-engine"), consumer: "engine-0", steps: log, executionLog })
    return yield* Effect.gen(function* () {
      yield* putWorkMaster(steps)
      const window = yield* Effect.promise(() => openWindow(probe))
      yield* submitJobs(probe, jobs, oneAtATime, { steps })
      const figures = yield* Effect.promise(() => window.close())
      return { figures, gaps: StepLog.gaps(log.times), sample: yield* stateWriteSample(probe) }
    }).pipe(Effect.provide(layer))
  })

/** Only the throughput run: JOBS jobs of a `steps`-step recipe at once, the execution log on. */
export const runEngineLoad = (url: string, probe: ServerProbe, steps: number) =>
  Effect.gen(function* () {
    countSendsOf(Redis.prototype)
    return (yield* island(url, probe, JOBS, false, true, steps)).figures
  })

/**
 * One engine round: event to next dispatch one job at a time, then JOBS jobs at once. The
 * execution log is on (the production default) unless `executionLog` is false.
 */
export const runEngineRound = (url: string, probe: ServerProbe, executionLog = true) =>
  Effect.gen(function* () {
    countSendsOf(Redis.prototype)
    const single = yield* island(url, probe, SINGLE_JOBS, true, executionLog)
    const loaded = yield* island(url, probe, JOBS, false, executionLog)
    const round: SystemRound = systemRound(JOBS * STEPS, loaded.figures, single.gaps, loaded.gaps)
    return { round, sample: loaded.sample ?? single.sample }
  })
