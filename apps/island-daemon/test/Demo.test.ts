import { describe, expect, it } from "vitest"
import { spawnScript } from "./DaemonProcess.js"

/**
 * The README's demo command end to end: embedded Valkey and Mosquitto, the island, the simulated
 * station and the MES, with a small batch. Its own servers, so nothing to share with other files.
 */
describe("demo", () => {
  it("completes its batch and prints the summary", async () => {
    const demo = spawnScript("demo.ts", { DEMO_JOBS: "10" })
    const timer = setTimeout(() => demo.child.kill("SIGKILL"), 50_000)
    const exit = await demo.exited
    clearTimeout(timer)
    expect(exit.code, `${demo.stdout()}\n${demo.stderr()}`).toBe(0)
    const out = demo.stdout()
    expect(out).toContain("summary")
    expect(out).toContain("jobs submitted        10")
    expect(out).toContain("jobs completed        10")
    expect(out).toContain("jobs failed/aborted   0")
    expect(out).toMatch(/throughput\s+\d+(\.\d+)? jobs\/s/)
    expect(out).toMatch(/latency p99\s+\d+ ms/)
    // The journal of the torque results (one per torque check, so at least one per job) and its NOK counter.
    expect(out).toMatch(/journal torque\s+(1\d|[2-9]\d|\d{3,}) entries/)
    expect(out).toMatch(/counter nok_torque_1h \d+ \(nutrunner-3, last hour\)/)
    // The log tree of the first job read back from storage (or, from an engine that writes no log, the note).
    expect(out).toMatch(/execution log\s+(jo-axle-0001, read back from storage \(\d+ rows\):\n\s+execution jo-axle-0001\S* +completed|no execution log for jo-axle-0001)/)
  }, 60_000)
})
