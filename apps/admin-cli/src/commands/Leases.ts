import { Command, Flag } from "effect/cli"
import { Effect, Option } from "effect"
import { LeaseOverview, type LeaseRow, PublisherLease, StartLease, Valkey } from "@microdcs/store"
import { confirmDestructive } from "../Confirm.js"
import { Conflict, Missing, UsageError } from "../ExitCode.js"
import { humanDuration } from "../Format.js"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { renderTable } from "../Table.js"
import { yesOption } from "../Yes.js"

/** What `leases show` prints per lease; a corrupted key shows as its holder. */
const shown = ({ wrongType, ...row }: LeaseRow) => ({ ...row, holder: wrongType ? "(not a string key)" : row.holder })
type ShownLease = ReturnType<typeof shown>

const show = Command.make("show", {}, () =>
  island(
    Effect.gen(function* () {
      const rows = (yield* (yield* LeaseOverview).list).map(shown)
      yield* emit({ leases: rows }, () =>
        renderTable(
          [
            { header: "LEASE", value: (r: ShownLease) => r.lease },
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
    publisher: Flag.Boolean("publisher").pipe(Flag.withDescription("release the publisher lease"), Flag.withDefault(false)),
    start: Flag.String("start").pipe(Flag.withDescription("release the post-start lease of this configuration id"), Flag.optional),
    yes: yesOption
  },
  (o) =>
    island(
      Effect.gen(function* () {
        const valkey = yield* Valkey
        if (o.publisher === Option.isSome(o.start)) {
          return yield* new UsageError({ message: "name exactly one lease: --publisher or --start CONFIG_ID" })
        }
        const key = Option.isSome(o.start) ? yield* valkey.key("startLease", { configId: o.start.value }) : yield* valkey.key("publisherLease", {})
        const name = Option.isSome(o.start) ? `post-start lease of ${o.start.value}` : "publisher lease"
        const lease = Option.isSome(o.start) ? yield* startLeaseOf(o.start.value) : yield* PublisherLease
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

/** The start lease of `configId` with the shape of the publisher lease, so `release` treats both alike. */
const startLeaseOf = (configId: string) =>
  Effect.map(StartLease, (leases) => ({
    holder: leases.holder(configId),
    release: (holder: string) => leases.release(configId, holder)
  }))

export const leasesCommand = Command.make("leases").pipe(
  Command.withDescription("the publisher and post-start leases"),
  Command.withSubcommands([show, release])
)
