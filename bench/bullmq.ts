/**
 * The anchor of the engine figures: BullMQ five-step chains on the same server, in the same run.
 * A chain is five jobs; the processor of step i adds step i+1 of the same chain, then returns.
 * BullMQ is a dev dependency of this package only; nothing else in the tree uses it.
 */
import { Queue, Worker } from "bullmq"
import IORedis from "ioredis"
import { randomPrefix } from "@microdcs/test-utils"
import { JOBS, SINGLE_JOBS, STEPS, systemRound, type SystemRound } from "./Figures.js"
import { countSendsOf } from "./SentCommands.js"
import type { ServerProbe } from "./ServerProbe.js"
import { StepLog, wallClock } from "./StepLog.js"
import { openWindow, type WindowFigures } from "./Window.js"

export const BULLMQ_CONCURRENCY = 64
const STALL_MS = 60_000

interface ChainData {
  readonly chain: string
  readonly step: number
}

/** One queue and one worker on a fresh prefix: `chains` chains, all at once or one after another. */
const runChains = async (url: string, probe: ServerProbe, chains: number, oneAtATime: boolean) => {
  countSendsOf(IORedis.prototype)
  const { hostname, port } = new URL(url)
  const connection = { host: hostname, port: Number(port), maxRetriesPerRequest: null }
  const prefix = randomPrefix("bench-bullmq")
  const queue = new Queue<ChainData>("chains", { connection, prefix })
  const steps = new StepLog()
  let finished = 0
  const waiting: Array<{ readonly count: number; readonly resolve: () => void; readonly reject: (error: Error) => void }> = []
  const worker = new Worker<ChainData>(
    "chains",
    async (job) => {
      const startedAt = wallClock()
      const { chain, step } = job.data
      if (step < STEPS - 1) await queue.add("step", { chain, step: step + 1 })
      steps.record(chain, step, startedAt, wallClock())
    },
    { connection, prefix, concurrency: BULLMQ_CONCURRENCY }
  )
  worker.on("completed", (job) => {
    if (job.data.step !== STEPS - 1) return
    finished++
    for (const w of waiting.filter((w) => finished >= w.count)) {
      waiting.splice(waiting.indexOf(w), 1)
      w.resolve()
    }
  })
  // An 'error' event without a listener would throw; a connection error is worth a line, not a crash.
  worker.on("error", (error) => console.error(`BullMQ worker: ${error.message}`))
  queue.on("error", (error) => console.error(`BullMQ queue: ${error.message}`))
  // A failed step would leave its chain unfinished for ever: it ends the run instead.
  worker.on("failed", (job, error) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`BullMQ bench: step ${job?.data.step} of ${job?.data.chain} failed: ${error.message}`))
  })
  // So does a run where no chain finishes for STALL_MS.
  let progress = { finished: 0, at: performance.now() }
  const watchdog = setInterval(() => {
    if (finished !== progress.finished) progress = { finished, at: performance.now() }
    else if (waiting.length > 0 && performance.now() - progress.at > STALL_MS) {
      for (const w of waiting.splice(0)) w.reject(new Error(`BullMQ bench: no chain finished for ${STALL_MS / 1000} s (${finished} done)`))
    }
  }, 1000)
  const untilFinished = (count: number) =>
    finished >= count ? Promise.resolve() : new Promise<void>((resolve, reject) => waiting.push({ count, resolve, reject }))
  try {
    await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()])
    const window = await openWindow(probe)
    if (oneAtATime) {
      for (let c = 0; c < chains; c++) {
        await queue.add("step", { chain: `chain-${c}`, step: 0 })
        await untilFinished(c + 1)
      }
    } else {
      await Promise.all(Array.from({ length: chains }, (_, c) => queue.add("step", { chain: `chain-${c}`, step: 0 })))
      await untilFinished(chains)
    }
    const figures: WindowFigures = await window.close()
    return { figures, gaps: StepLog.gaps(steps.times) }
  } finally {
    clearInterval(watchdog)
    await worker.close()
    await queue.close()
  }
}

/** One BullMQ round: the step gap one chain at a time, then JOBS chains at once. */
export const runBullmqRound = async (url: string, probe: ServerProbe): Promise<SystemRound> => {
  const single = await runChains(url, probe, SINGLE_JOBS, true)
  const loaded = await runChains(url, probe, JOBS, false)
  return systemRound(JOBS * STEPS, loaded.figures, single.gaps, loaded.gaps)
}
