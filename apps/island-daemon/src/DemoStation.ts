import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { makeStation, readStationScript } from "@microdcs/island-sim"

/** The nutrunner of the demo station: every torque result names it, and the journal counts them by it. */
export const DEMO_TOOL = "nutrunner-3"

const TORQUE = "com.example.station.torque.v1"
const TOOLCHECK = "com.example.station.toolcheck.v1"

/**
 * The demo's station, over MQTT alone: the island-sim station with the script
 * `fixtures/demo/station.json` (position, tighten and the tool check answered after a few
 * milliseconds, the QA check reported after positioning, a torque check of its nutrunner after each
 * tightening that fails one time in five, so some jobs take the rework loop and, once the tool has
 * failed three times within the hour, the tool check first). It serves the scope `line-1` only.
 */
export const startDemoStation = (url: string, topics: { readonly prefix: string; readonly discriminator?: string | undefined }) =>
  Effect.gen(function* () {
    const script = yield* readStationScript(fileURLToPath(new URL("../fixtures/demo/station.json", import.meta.url)))
    let reworks = 0
    const station = yield* makeStation({
      mqtt: { url },
      topics,
      script,
      onEvent: (event) => {
        // A NOK torque result (its first copy: resends carry the same result) sends the job round the rework loop.
        if (event.copy === 1 && event.type === TORQUE && (event.data as { torque_ok?: unknown }).torque_ok === false) reworks++
      }
    })
    return {
      reworks: () => reworks,
      commands: () => station.stats().commands,
      toolChecks: () => station.stats().commandsByType[TOOLCHECK] ?? 0
    }
  })
