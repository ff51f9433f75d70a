import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { dumpKeys, randomPrefix } from "@microdcs/test-utils"
import { Valkey, ValkeyLayer } from "@microdcs/store"
import { type RawClient, unsafeCommand } from "@microdcs/store/unsafe"
import { Journal, JournalClock, type JournalEvent, JournalOptions, type JournalSettings } from "@microdcs/journal"

/** A movable clock: tests set `clock.now`, never sleep. */
export const movableClock = (start = Date.UTC(2026, 0, 5, 10, 0, 0)) => {
  const clock = { now: start }
  return { clock, layer: JournalClock.fixed(() => clock.now) }
}

/** The journal over the run's server with its own prefix, clock and settings. */
export const journalLayer = (prefix: string, clockLayer: ReturnType<typeof JournalClock.fixed>, settings: Partial<JournalSettings> = {}) =>
  Journal.Default.pipe(
    Layer.provide(Layer.mergeAll(clockLayer, JournalOptions.layer(settings))),
    Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix }))
  )

export const raw = <A>(run: (c: RawClient) => Promise<A>) => Effect.flatMap(Valkey, (v) => unsafeCommand(v, "test", run))

/** Every key of the prefix with its DUMP: equal snapshots mean nothing was written. */
export const keyDump = (prefix: string) => raw((c) => dumpKeys(c, prefix))

export const torqueConfig = {
  name: "torque",
  types: ["com.example.station.torque.v1"],
  searchKeys: [
    { name: "tool", path: "data.tool_id" },
    { name: "job", path: "jobid" },
    { name: "equipment", path: "subject" }
  ],
  retention: { maxAge: "1d", reference: "event" },
  compression: "lz4",
  counters: [
    { name: "torque_1h", searchKey: "tool", window: "1h", resolution: "minute" },
    { name: "torque_sum_1h", searchKey: "tool", window: "1h", resolution: "minute", sum: "data.torque" },
    { name: "torque_1d", searchKey: "tool", window: "1d", resolution: "hour" },
    { name: "torque_7d", searchKey: "equipment", window: "7d", resolution: "day" }
  ]
}

let serial = 0
/** A realistic station event: a torque reading of a nutrunner. */
export const torqueEvent = (time: number, overrides: { tool?: string; job?: string; equipment?: string; torque?: number; ok?: boolean; id?: string } = {}): JournalEvent => ({
  specversion: "1.0",
  id: overrides.id ?? `evt-${++serial}-${Math.random().toString(36).slice(2)}`,
  source: "urn:station:line-1:cell-4",
  type: "com.example.station.torque.v1",
  time: new Date(time).toISOString(),
  subject: overrides.equipment ?? "cell-4",
  jobid: overrides.job ?? "job-17",
  datacontenttype: "application/json",
  data: {
    tool_id: overrides.tool ?? "nutrunner-3",
    program: 12,
    torque: overrides.torque ?? 24.5,
    angle: 182.3,
    result: overrides.ok === false ? "NOK" : "OK",
    limits: { torqueMin: 22, torqueMax: 27, angleMin: 160, angleMax: 200 },
    serial: "SN-0001234"
  }
})

export { randomPrefix }
