#!/usr/bin/env node
/**
 * The island demo (README quick start): embedded Valkey and Mosquitto, the island with every
 * role, a station simulated over MQTT, the station configuration and the axle work master sent
 * as an MES would, then a batch of job orders submitted with StoreAndStart. Shows live progress
 * and ends with a summary. DEMO_JOBS sets the batch size (default 50).
 */
import { Effect, Layer, Logger, LogLevel } from "effect"
import { daemonConfig } from "./DaemonConfig.js"
import { startIsland } from "./Island.js"
import { runMes } from "./DemoMes.js"
import { startDemoStation } from "./DemoStation.js"

const JOBS = Number(process.env["DEMO_JOBS"] ?? 50)

const program = Effect.gen(function* () {
  // The demo always runs on its own servers and a random HTTP port, whatever the environment says.
  for (const name of ["VALKEY_URL", "VALKEY_SENTINELS", "MQTT_URL"]) delete process.env[name]
  process.env["HTTP_PORT"] ??= "0"
  process.env["HTTP_HOST"] ??= "127.0.0.1"
  process.env["VALKEY_PREFIX"] ??= "demo"
  process.env["SFC_FALLBACK_INTERVAL_MS"] ??= "250"
  const island = yield* startIsland(yield* daemonConfig)
  const topics = { prefix: island.config.mqtt.topicPrefix, discriminator: island.config.mqtt.discriminator }
  console.log(`island up: Valkey ${island.config.valkey.url}, MQTT ${island.config.mqtt.url}, HTTP http://${island.http.host}:${island.http.port}`)
  const station = yield* startDemoStation(island.config.mqtt.url!, topics).pipe(Effect.provide(island.context))
  const summary = yield* runMes(island.config.mqtt.url!, topics, JOBS)
  console.log("")
  console.log("summary")
  console.log(`  jobs submitted        ${summary.submitted}`)
  console.log(`  jobs completed        ${summary.completed}`)
  console.log(`  jobs failed/aborted   ${summary.failed}`)
  console.log(`  rework loops          ${station.reworks()}`)
  console.log(`  station commands      ${station.commands()}`)
  console.log(`  elapsed               ${summary.elapsedSeconds.toFixed(2)} s`)
  console.log(`  throughput            ${(summary.completed / summary.elapsedSeconds).toFixed(1)} jobs/s`)
  console.log(`  latency p50           ${summary.p50.toFixed(0)} ms (StoreAndStart sent → Ended_Completed seen)`)
  console.log(`  latency p99           ${summary.p99.toFixed(0)} ms`)
  if (summary.completed !== summary.submitted) return yield* Effect.fail(new Error(`${summary.submitted - summary.completed} jobs did not complete`))
})

// Daemon logs go to stderr at warning level so the progress lines stay readable.
const quietLogs = Layer.merge(
  Logger.replace(Logger.defaultLogger, Logger.withLeveledConsole(Logger.prettyLogger({ stderr: true, colors: false }))),
  Logger.minimumLogLevel(LogLevel.Warning)
)

Effect.runPromiseExit(program.pipe(Effect.scoped, Effect.provide(quietLogs))).then((exit) => {
  if (exit._tag === "Failure") {
    console.error("demo failed:", exit.cause.toString())
    process.exit(1)
  }
  process.exit(0)
})
