import { Effect } from "effect"
import { formatReport, makeStation, readMesInput, readStationScript, runMes } from "@microdcs/island-sim"

// The README's library example, type-checked with the package (not run as a test).
const url = "mqtt://127.0.0.1:1883"

export const program = Effect.gen(function* () {
  const script = yield* readStationScript("station.json") // ScriptInvalid: every problem
  const station = yield* makeStation({ mqtt: { url }, topics: { prefix: "microdcs" }, script })
  const input = yield* readMesInput({ config: ["config.json"], orders: ["orders/"], count: 20 })
  const report = yield* runMes({ mqtt: { url }, topics: { prefix: "microdcs" }, scope: "line-1", input })
  console.log(formatReport(report), station.stats())
}).pipe(Effect.scoped)
