/**
 * `pnpm bench`: every benchmark against one server, started here unless BENCH_VALKEY_URL is set.
 * Each figure is printed next to a baseline measured in the same run.
 */
import { startValkeyServer } from "@microdcs/test-utils"
import { runStoreBench } from "./store.js"
import { runStreamsBench } from "./streams.js"
import { runEngineBench } from "./engine.js"
import { runMqttBench } from "./mqtt.js"

const main = async () => {
  const external = process.env["BENCH_VALKEY_URL"]
  const server = external ? undefined : await startValkeyServer()
  const url = external ?? server!.url
  console.log(`microdcs-ts benchmarks against ${external ? url : `an embedded server at ${url}`} (node ${process.version})`)
  try {
    // BENCH_ONLY=store,engine runs a subset.
    const only = process.env["BENCH_ONLY"]?.split(",")
    const suites = { store: runStoreBench, streams: runStreamsBench, engine: runEngineBench, mqtt: runMqttBench }
    for (const [name, suite] of Object.entries(suites)) if (!only || only.includes(name)) await suite(url)
  } finally {
    await server?.stop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
