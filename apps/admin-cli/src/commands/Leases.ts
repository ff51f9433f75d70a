import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { leaseOn, Valkey } from "@microdcs/store"
import { confirmDestructive } from "../Confirm.js"
import { Conflict, Missing, UsageError } from "../ExitCode.js"
import { humanDuration } from "../Format.js"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { renderTable } from "../Table.js"
import { yesOption } from "../Yes.js"

interface LeaseRow {
  readonly lease: "publisher" | "start"
  /** The configuration id of a start lease. */
  readonly configId: string | null
  readonly key: string
  readonly holder: string | null
  readonly remainingMs: number | null
}

/** Holder and remaining time of lease keys, in one pipelined round trip. */
const readLeases = (leases: ReadonlyArray<Omit<LeaseRow, "holder" | "remainingMs">>) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const replies = yield* valkey.command("read leases", async (c) => {
      const pipeline = c.pipeline()
      for (const l of leases) pipeline.get(l.key).pttl(l.key)
      return (await pipeline.exec()) ?? []
    })
    return leases.map((l, i): LeaseRow => {
      const [holderError, holder] = replies[i * 2] ?? [null, null]
      const ttl = Number(replies[i * 2 + 1]?.[1] ?? -2)
      return { ...l, holder: holderError ? "(not a string key)" : ((holder as string | null) ?? null), remainingMs: ttl >= 0 ? ttl : null }
    })
  })

/** Every start lease key of this prefix: a SCAN, never KEYS, so a large island is not blocked. */
const startLeaseKeys = Effect.gen(function* () {
  const valkey = yield* Valkey
  const keys = yield* valkey.command("scan start leases", async (c) => {
    const found = new Set<string>()
    let cursor = "0"
    do {
      const [next, batch] = await c.scan(cursor, "MATCH", valkey.keys.pattern("startLease"), "COUNT", 1000)
      cursor = next
      batch.forEach((k) => found.add(k))
    } while (cursor !== "0")
    return [...found].sort()
  })
  return keys.flatMap((key) => {
    const parsed = valkey.keys.parse(key)
    return parsed?.family === "startLease" ? [{ lease: "start" as const, configId: (parsed.parts as { configId: string }).configId, key }] : []
  })
})

const show = Command.make("show", {}, () =>
  island(
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const publisher = { lease: "publisher" as const, configId: null, key: valkey.keys.key("publisherLease", {}) as string }
      const rows = yield* readLeases([publisher, ...(yield* startLeaseKeys)])
      yield* emit({ leases: rows }, () =>
        renderTable(
          [
            { header: "LEASE", value: (r: LeaseRow) => r.lease },
            { header: "CONFIG", value: (r) => r.configId },
            { header: "HOLDER", value: (r) => r.holder ?? "(free)" },
            { header: "REMAINING", value: (r) => (r.remainingMs === null ? null : humanDuration(r.remainingMs)), align: "right" }
          ],
          rows
        )
      )
    })
  )
).pipe(Command.withDescription("the publisher lease and every post-start lease with holder and remaining time"))

const release = Command.make(
  "release",
  {
    publisher: Options.boolean("publisher").pipe(Options.withDescription("release the publisher lease")),
    start: Options.text("start").pipe(Options.withDescription("release the post-start lease of this configuration id"), Options.optional),
    yes: yesOption
  },
  (o) =>
    island(
      Effect.gen(function* () {
        const valkey = yield* Valkey
        if (o.publisher === Option.isSome(o.start)) {
          return yield* new UsageError({ message: "name exactly one lease: --publisher or --start CONFIG_ID" })
        }
        const key = Option.isSome(o.start)
          ? yield* valkey.key("startLease", { configId: o.start.value })
          : (valkey.keys.key("publisherLease", {}) as string)
        const name = Option.isSome(o.start) ? `post-start lease of ${o.start.value}` : "publisher lease"
        const lease = leaseOn(valkey, key)
        const holder = yield* lease.holder
        if (Option.isNone(holder)) return yield* new Missing({ message: `the ${name} is not held` })
        yield* confirmDestructive(o.yes, `Release the ${name} held by ${holder.value}? Its holder may still be running.`)
        // Released as the holder read: if another holder took it meanwhile, that one is left alone.
        const released = yield* lease.release(holder.value)
        if (!released) return yield* new Conflict({ message: `the ${name} changed holder since it was read; nothing released` })
        yield* emit({ key, released: true, holder: holder.value }, () => `released the ${name} held by ${holder.value}`)
      })
    )
).pipe(Command.withDescription("force-release a lease whose holder died (destructive)"))

export const leasesCommand = Command.make("leases").pipe(
  Command.withDescription("the publisher and post-start leases"),
  Command.withSubcommands([show, release])
)
