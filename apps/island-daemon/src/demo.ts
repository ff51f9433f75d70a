#!/usr/bin/env node
/**
 * The island demo (README quick start): embedded Valkey and Mosquitto, the island with every
 * role, the island-sim station (over MQTT alone, scripted by fixtures/demo/station.json), the
 * station configuration and the axle work master sent by the island-sim MES, with a journal of the torque results by tool whose counter `nok_torque_1h`
 * sends the tool to a check after its third NOK in an hour, then a batch of job orders submitted
 * with StoreAndStart. Shows live progress and ends with a summary (with the journal and the
 * counter). DEMO_JOBS sets the batch size (default 50).
 */
import { Effect } from "effect"
import { daemonConfig, daemonEnvironment } from "./DaemonConfig.js"
import { demoLogging } from "./DemoLogging.js"
import { startIsland } from "./Island.js"
import { printStoredTree } from "./DemoExecutionTree.js"
import type { MesReport } from "@microdcs/island-sim"
import { runDemoMes } from "./DemoMes.js"
import { DEMO_TOOL, startDemoStation } from "./DemoStation.js"
import { Journal } from "@microdcs/journal"

const JOBS = Number(process.env["DEMO_JOBS"] ?? 50)
/** DEMO_STAY=1 keeps the island (and its console) up after the summary, until Ctrl-C. */
const STAY = ["1", "true", "yes"].includes((process.env["DEMO_STAY"] ?? "").toLowerCase())

// The demo always runs on its own servers and a random HTTP port, whatever the environment says.
const useDemoEnvironment = () => {
  for (const name of ["VALKEY_URL", "VALKEY_SENTINELS", "MQTT_URL"]) delete process.env[name]
  process.env["HTTP_PORT"] ??= "0"
  process.env["HTTP_HOST"] ??= "127.0.0.1"
  process.env["VALKEY_PREFIX"] ??= "demo"
  process.env["SFC_FALLBACK_INTERVAL_MS"] ??= "250"
  // Its Valkey is new each run and its job ids are the same each run: so is its archive, in memory.
  process.env["PG_DATA_DIR"] ??= "memory://"
}

type DemoStation = Effect.Success<ReturnType<typeof startDemoStation>>

const printSummary = (summary: MesReport, station: DemoStation) => {
  console.log("")
  console.log("summary")
  console.log(`  jobs submitted        ${summary.submitted}`)
  console.log(`  jobs completed        ${summary.completed}`)
  console.log(`  jobs failed/aborted   ${summary.failed}`)
  console.log(`  rework loops          ${station.reworks()}`)
  console.log(`  tool checks           ${station.toolChecks()} (after the 3rd NOK torque of ${DEMO_TOOL} within the hour)`)
  console.log(`  station commands      ${station.commands()}`)
  console.log(`  elapsed               ${summary.elapsedSeconds.toFixed(2)} s`)
  console.log(`  throughput            ${summary.throughput.toFixed(1)} jobs/s`)
  console.log(`  latency p50           ${(summary.latencyMs?.p50 ?? Number.NaN).toFixed(0)} ms (StoreAndStart sent → Ended_Completed seen)`)
  console.log(`  latency p99           ${(summary.latencyMs?.p99 ?? Number.NaN).toFixed(0)} ms`)
}

/** The torque journal's size, its last entries for the demo's tool, and the tool's NOK counter. */
const printJournal = Effect.gen(function* () {
  const journal = yield* Journal
  const figures = (yield* journal.figures("line-1")).find((f) => f.journal === "torque")
  const recent = yield* journal.recall("line-1", "torque", "tool", DEMO_TOOL, { limit: 3, stamp: false })
  console.log(`  journal torque        ${figures?.entries ?? 0} entries, ${figures?.bytes ?? 0} bytes (torque results by tool and job)`)
  for (const entry of recent) console.log(`    ${new Date(entry.time).toISOString()}  ${JSON.stringify((entry.event as { data?: unknown }).data)}`)
  console.log(`  counter nok_torque_1h ${yield* journal.counter("line-1", "torque", "nok_torque_1h", DEMO_TOOL)} (${DEMO_TOOL}, last hour)`)
})

/** Waits for Ctrl-C (or SIGTERM). */
const untilStopped = Effect.callback<void>((resume) => {
  const stop = () => resume(Effect.void)
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
  return Effect.sync(() => {
    process.off("SIGINT", stop)
    process.off("SIGTERM", stop)
  })
})

const program = Effect.gen(function* () {
  useDemoEnvironment()
  const island = yield* startIsland(yield* daemonConfig.parse(daemonEnvironment()))
  const topics = { prefix: island.config.mqtt.topicPrefix, discriminator: island.config.mqtt.discriminator }
  console.log(`island up: Valkey ${island.config.valkey.url}, MQTT ${island.config.mqtt.url}, HTTP http://${island.http.host}:${island.http.port}`)
  console.log(`console: http://${island.http.host}:${island.http.port}/ (the island's web pages, while the demo runs; DEMO_STAY=1 keeps it up after the summary)`)
  const station = yield* startDemoStation(island.config.mqtt.url!, topics)
  const summary = yield* runDemoMes(island.config.mqtt.url!, topics, JOBS)
  printSummary(summary, station)
  yield* printJournal.pipe(Effect.provide(island.context))
  // The first job of the MES's batch (the copies of fixtures/demo/orders/axle.json are jo-axle-0001...): its log tree from storage.
  yield* printStoredTree("jo-axle-0001").pipe(Effect.provide(island.context))
  if (summary.completed !== summary.submitted) return yield* Effect.fail(new Error(`${summary.submitted - summary.completed} jobs did not complete`))
  if (STAY) {
    console.log(`\nthe island stays up (DEMO_STAY): console http://${island.http.host}:${island.http.port}/ ; Ctrl-C stops it`)
    yield* untilStopped
  }
})

// The process ends inside the callback; nothing is left to handle its promise.
void Effect.runPromiseExit(program.pipe(Effect.scoped, Effect.provide(demoLogging))).then((exit) => {
  if (exit._tag === "Failure") {
    console.error("demo failed:", exit.cause.toString())
    process.exit(1)
  }
  process.exit(0)
})
