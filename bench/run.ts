/**
 * `pnpm bench`: every benchmark against one server, started here unless BENCH_VALKEY_URL is set.
 * Each figure is printed next to a baseline measured in the same run.
 *
 * `pnpm bench -- engine mqtt` runs only the named suites; so does BENCH_ONLY=engine,mqtt.
 */
import { availableParallelism, loadavg } from "node:os"
import { startValkeyServer } from "@microdcs/test-utils"
import { runStoreBench } from "./store.js"
import { runStreamsBench } from "./streams.js"
import { runEngineBench } from "./engine.js"
import { runMqttBench } from "./mqtt.js"
import { runJournalBench } from "./journal.js"
import { runExecutionLogBench } from "./executionLog.js"
import { runConsoleBench } from "./console.js"
import { runIncidentsBench } from "./incidents.js"
import { runSearchBench } from "./search.js"
import { runBulkBench } from "./bulk.js"
import { runStartupBench } from "./startup.js"
import { runSoakBench } from "./soak.js"
import { ServerProbe } from "./ServerProbe.js"

const suites: Record<string, (url: string) => Promise<void>> = {
  store: runStoreBench,
  streams: runStreamsBench,
  engine: runEngineBench,
  mqtt: runMqttBench,
  journal: runJournalBench,
  executionLog: runExecutionLogBench,
  console: runConsoleBench,
  incidents: runIncidentsBench,
  search: runSearchBench,
  bulk: runBulkBench,
  // Spawns daemons with their own embedded servers: the shared server is not used.
  startup: () => runStartupBench(),
  soak: runSoakBench
}

/** Suites that run only when named: the soak takes ten minutes. */
const namedOnly = new Set(["soak"])

/** Suite names from the command line (pnpm passes a `--` through) and BENCH_ONLY, or every suite. */
const selectedSuites = (): ReadonlyArray<string> => {
  const named = [...process.argv.slice(2).filter((arg) => arg !== "--"), ...(process.env["BENCH_ONLY"]?.split(",") ?? [])]
    .map((name) => name.trim())
    .filter((name) => name !== "")
  const unknown = named.filter((name) => !(name in suites))
  if (unknown.length > 0) throw new Error(`unknown suite ${unknown.join(", ")}; the suites are ${Object.keys(suites).join(", ")}`)
  return named.length > 0 ? Object.keys(suites).filter((name) => named.includes(name)) : Object.keys(suites).filter((name) => !namedOnly.has(name))
}

const main = async () => {
  const only = selectedSuites()
  const external = process.env["BENCH_VALKEY_URL"]
  const server = external ? undefined : await startValkeyServer()
  const url = external ?? server!.url
  try {
    const probe = await ServerProbe.connect(url)
    const version = await probe.serverVersion().finally(() => probe.close())
    console.log(`microdcs-ts benchmarks against ${external ? url : `an embedded server at ${url}`}`)
    // The load average says whether anything else was running: every figure depends on it.
    console.log(
      `node ${process.version}, ${version}, ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(1)}; suites: ${only.join(", ")}`
    )
    for (const name of only) await suites[name]!(url)
  } finally {
    await server?.stop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
