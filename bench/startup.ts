import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { daemonMode, runDaemon } from "./DaemonRun.js"

/**
 * `pnpm bench -- startup`: from spawning the island daemon with its default roles (embedded
 * Valkey, mosquitto and PGlite) to `/readyz` answering 200, next to the same daemon without the
 * storage role (`ISLAND_ROLES=-storage`, the baseline) in the same round. The default roles run
 * twice per round: on a fresh `PG_DATA_DIR` (PGlite creates its database) and again on the same
 * directory (a restart). Besides ready: when the storage role's database is up (its `/readyz`
 * health without `detail`), and the slowest `/healthz` answer from listening until then, which
 * shows whether the event loop stalled meanwhile. `BENCH_STARTUP_ROUNDS` (3) rounds, medians.
 */

const ROUNDS = Number(process.env["BENCH_STARTUP_ROUNDS"] ?? 3)

interface StartFigures {
  readonly readyMs: number
  readonly storageUpMs: number | undefined
  readonly slowestHealthMs: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const storageUp = (body: string) => JSON.stringify((JSON.parse(body) as { roles?: Record<string, unknown> }).roles?.["storage"]) === '{"ok":true}'

/** One start: polls /readyz and /healthz every 20 ms until ready (and, with the storage role, its database up). */
const measureStart = async (env: Record<string, string>, withStorage: boolean): Promise<StartFigures> => {
  const daemon = runDaemon({ ISLAND_INSTANCE_ID: "bench-startup", LOG_LEVEL: "info", ...env })
  try {
    await daemon.port
    let readyMs: number | undefined
    let storageUpMs: number | undefined
    let slowestHealthMs = 0
    while (readyMs === undefined || (withStorage && storageUpMs === undefined)) {
      if (performance.now() - daemon.startedAt > 180_000) throw new Error("the daemon did not get ready within 180 s")
      const health = await daemon.get("/healthz")
      slowestHealthMs = Math.max(slowestHealthMs, health.ms)
      const ready = await daemon.get("/readyz")
      const at = performance.now() - daemon.startedAt
      if (ready.status === 200) {
        readyMs ??= at
        if (withStorage && storageUpMs === undefined && storageUp(ready.body)) storageUpMs = at
      }
      await sleep(20)
    }
    return { readyMs, storageUpMs, slowestHealthMs }
  } finally {
    await daemon.stop()
  }
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)]!
}

const row = (label: string, runs: ReadonlyArray<StartFigures>, baseline: number) => {
  const ready = median(runs.map((r) => r.readyMs))
  const up = runs.every((r) => r.storageUpMs !== undefined) ? `${Math.round(median(runs.map((r) => r.storageUpMs!)))} ms` : "-"
  const ratio = (ready / baseline).toFixed(2)
  console.log(`${label.padEnd(34)} ${`${Math.round(ready)} ms`.padStart(9)} ${ratio.padStart(8)} ${up.padStart(12)} ${`${Math.round(median(runs.map((r) => r.slowestHealthMs)))} ms`.padStart(16)}`)
}

export const runStartupBench = async (): Promise<void> => {
  console.log(`\n== startup: spawn → /readyz 200, the daemon from ${daemonMode()}, ${ROUNDS} rounds (medians) ==`)
  const runs = { baseline: [] as Array<StartFigures>, fresh: [] as Array<StartFigures>, restart: [] as Array<StartFigures> }
  for (let round = 0; round < ROUNDS; round++) {
    const dir = mkdtempSync(join(tmpdir(), "bench-startup-"))
    try {
      runs.baseline.push(await measureStart({ ISLAND_ROLES: "-storage" }, false))
      const dataDir = join(dir, "archive")
      runs.fresh.push(await measureStart({ PG_DATA_DIR: dataDir }, true))
      runs.restart.push(await measureStart({ PG_DATA_DIR: dataDir }, true))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  const baseline = median(runs.baseline.map((r) => r.readyMs))
  console.log(`${"".padEnd(34)} ${"ready".padStart(9)} ${"ratio".padStart(8)} ${"storage up".padStart(12)} ${"slowest /healthz".padStart(16)}`)
  row("baseline: every role but storage", runs.baseline, baseline)
  row("default roles, fresh PG_DATA_DIR", runs.fresh, baseline)
  row("default roles, restart (same dir)", runs.restart, baseline)
}
