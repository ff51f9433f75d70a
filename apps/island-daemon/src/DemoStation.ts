import { Effect } from "effect"
import { makeSimulatedStation } from "@microdcs/island-mqtt"

/** The nutrunner of the demo station: every torque result names it, and the journal counts them by it. */
export const DEMO_TOOL = "nutrunner-3"

/**
 * A station for the axle recipe, over MQTT: it answers the push commands (position, tighten,
 * retighten, tool check) after a few milliseconds, reports the QA check, and reports a torque
 * check of its nutrunner that fails one time in five, so some jobs take the rework loop (and,
 * once the tool has failed three times within the hour, the tool check first).
 */
export const startDemoStation = (url: string, topics: { readonly prefix: string; readonly discriminator?: string | undefined }) =>
  Effect.gen(function* () {
    let reworks = 0
    const checks = new Map<string, number>()
    const station = yield* makeSimulatedStation({
      url,
      topics,
      source: "urn:microdcs:demo:station-7",
      onCommand: (command) => ({ data: { done: command.action, at: new Date().toISOString() }, delayMs: 2 + Math.floor(Math.random() * 8) }),
      events: {
        "com.example.station.qa.v1": () => ({ passed: true }),
        "com.example.station.torque.v1": (jobId) => {
          const n = (checks.get(jobId) ?? 0) + 1
          checks.set(jobId, n)
          const ok = n > 1 || Math.random() >= 0.2
          if (!ok) reworks++
          return { tool_id: DEMO_TOOL, torque_ok: ok, torque_nm: ok ? 85 : 78 }
        }
      },
      eventPollMs: 10
    })
    return {
      reworks: () => reworks,
      commands: () => station.commands.length,
      toolChecks: () => station.commands.filter((c) => c.type === "com.example.station.toolcheck.v1").length
    }
  })
