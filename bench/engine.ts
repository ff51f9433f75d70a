/**
 * The engine suite: the SFC engine against its anchor, BullMQ five-step chains, on the same server
 * in the same run (alternating rounds), the physical limit of a step (the engine's own state write
 * pipelined raw), the engine's cost split by recipe length (per step, per job), and the engine in N
 * child processes on one island.
 */
import { Effect } from "effect"
import { BULLMQ_CONCURRENCY, runBullmqRound } from "./bullmq.js"
import { printComparison } from "./ComparisonTable.js"
import { printExecutionLogCost } from "./ExecutionLogCost.js"
import { runEngineProcesses } from "./EngineProcesses.js"
import { runEngineRound } from "./EngineRound.js"
import { printEngineSplit, runEngineSplit, SPLIT } from "./EngineSplit.js"
import { JOBS, SINGLE_JOBS, STEPS, type SystemRound } from "./Figures.js"
import { ServerProbe } from "./ServerProbe.js"
import { printStateWrite, stateWriteLimit, type StateWriteSample } from "./StateWriteLimit.js"

const ROUNDS = Math.max(1, Number(process.env["BENCH_ROUNDS"] ?? 2))
/**
 * Unmeasured rounds of each system first (BENCH_WARMUP_ROUNDS, default 1), so the measured
 * rounds compare warm processes, as the engine children get their warm-up jobs: a cold first
 * round measured mostly the JIT compiling either system's code.
 */
const WARMUP_ROUNDS = Math.max(0, Number(process.env["BENCH_WARMUP_ROUNDS"] ?? 1))
/** BENCH_ENGINE_LOG_ONLY=1: only the engine with its execution log on and off (no BullMQ, no limit, no processes). */
const LOG_ONLY = process.env["BENCH_ENGINE_LOG_ONLY"] === "1"

interface Rounds {
  readonly engine: Array<SystemRound>
  readonly engineLogOff: Array<SystemRound>
  readonly bullmq: Array<SystemRound>
  readonly sample: StateWriteSample | undefined
}

/** The warm-up rounds, then the measured ones: engine, BullMQ and the engine with its log off. */
const runRounds = async (url: string, probe: ServerProbe): Promise<Rounds> => {
  const engine: Array<SystemRound> = []
  const engineLogOff: Array<SystemRound> = []
  const bullmq: Array<SystemRound> = []
  let sample: StateWriteSample | undefined
  // The engine with its execution log off runs in the same rounds (the log's cost), before the
  // engine in odd rounds and after BullMQ in even ones, so neither gets the warmer process.
  const logOff = async () => engineLogOff.push((await Effect.runPromise(runEngineRound(url, probe, false))).round)
  for (let r = 0; r < WARMUP_ROUNDS; r++) {
    await Effect.runPromise(runEngineRound(url, probe))
    await Effect.runPromise(runEngineRound(url, probe, false))
    if (!LOG_ONLY) await runBullmqRound(url, probe)
  }
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 1) await logOff()
    const e = await Effect.runPromise(runEngineRound(url, probe))
    engine.push(e.round)
    sample = e.sample ?? sample
    if (!LOG_ONLY) bullmq.push(await runBullmqRound(url, probe))
    if (r % 2 === 0) await logOff()
    console.log(
      `  round ${r + 1}: engine ${engine[r]!.stepsPerSecond.toFixed(0)} steps/s (log off ${engineLogOff[r]!.stepsPerSecond.toFixed(0)})` +
        (LOG_ONLY ? "" : `, BullMQ ${bullmq[r]!.stepsPerSecond.toFixed(0)} steps/s`)
    )
  }
  return { engine, engineLogOff, bullmq, sample }
}

export const runEngineBench = async (url: string): Promise<void> => {
  const probe = await ServerProbe.connect(url)
  try {
    console.log(
      `\nSFC engine vs BullMQ: ${STEPS}-step chains, ${SINGLE_JOBS} one at a time, then ${JOBS} at once; ` +
        `${ROUNDS} alternating round${ROUNDS > 1 ? "s" : ""} (median, range in brackets)` +
        (WARMUP_ROUNDS > 0 ? ` after ${WARMUP_ROUNDS} unmeasured warm-up round${WARMUP_ROUNDS > 1 ? "s" : ""} of each` : "")
    )
    console.log(`  engine: one process, a linear recipe, an instant in-process station; BullMQ: one worker, concurrency ${BULLMQ_CONCURRENCY}`)
    const { engine, engineLogOff, bullmq, sample } = await runRounds(url, probe)
    if (LOG_ONLY) return printExecutionLogCost(engine, engineLogOff, JOBS)
    if (!sample) throw new Error("no command entry was left in any round's work stream to model the state write on")
    const limit = await stateWriteLimit(url, sample)
    printComparison(engine, bullmq, limit, JOBS)
    printStateWrite(sample, limit, STEPS)
    printExecutionLogCost(engine, engineLogOff, JOBS)
    // After the main rounds, so their figures are as before; the engine is warm by then.
    if (SPLIT) printEngineSplit(await runEngineSplit(url, probe, ROUNDS), bullmq, JOBS)
    await runEngineProcesses(url, probe)
  } finally {
    await probe.close()
  }
}
