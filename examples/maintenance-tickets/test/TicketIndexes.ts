import { Effect } from "effect"
import { type Inconsistency, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { TicketDao } from "../src/index.js"
import { doc, raw, ticketSchema } from "./Island.js"

/** Three tickets of scope `press-1`: t1 and t2 open, t3 closed. */
export const seedTickets = Effect.gen(function* () {
  const tickets = yield* TicketDao
  yield* tickets.put({ id: "t1", scope: "press-1", status: "open", severity: 2, doc: doc({ title: "leak" }), expectedVersion: 0 })
  yield* tickets.put({ id: "t2", scope: "press-1", status: "open", severity: 4, doc: doc({ title: "noise" }), expectedVersion: 0 })
  yield* tickets.put({ id: "t3", scope: "press-1", status: "closed", severity: 1, doc: doc({ title: "belt" }), expectedVersion: 0 })
})

/**
 * Breaks the ticket indexes by hand, as a bug or an operator's stray command would (`Valkey.command`,
 * the escape hatch): t1 leaves its status set, t3 gets a stale member in the open set, a ghost id is
 * listed, t2's list score is wrong. Returns what the check must report.
 */
export const breakTicketIndexes = Effect.gen(function* () {
  const keys = yield* ticketSchema
  const open = keys.key("ticketByStatus", { scope: "press-1", status: "open" }) as string
  const list = keys.key("ticketList", { scope: "press-1" }) as string
  yield* raw((c) => c.srem(open, "t1"))
  yield* raw((c) => c.sadd(open, "t3"))
  yield* raw((c) => c.zadd(list, 3, "ghost"))
  yield* raw((c) => c.zadd(list, 9, "t2"))
  const expected: ReadonlyArray<Partial<Inconsistency>> = [
    { kind: "document-missing-from-index", key: open, member: "t1", scope: "press-1" },
    { kind: "stale-member", key: open, member: "t3", scope: "press-1" },
    { kind: "index-entry-without-document", key: list, member: "ghost", scope: "press-1" },
    { kind: "wrong-score", key: list, member: "t2", expected: 4, found: 9 }
  ]
  return expected
})

/** What the indexes hold once repaired. */
export const ticketIndexContents = Effect.gen(function* () {
  const keys = yield* ticketSchema
  const valkey = yield* Valkey
  const open = keys.key("ticketByStatus", { scope: "press-1", status: "open" }) as string
  const closed = keys.key("ticketByStatus", { scope: "press-1", status: "closed" }) as string
  const list = keys.key("ticketList", { scope: "press-1" }) as string
  return yield* unsafeCommand(valkey, "read ticket indexes", async (c) => ({
    open: (await c.smembers(open)).sort(),
    closed: (await c.smembers(closed)).sort(),
    list: await c.zrange(list, 0, -1, "WITHSCORES")
  }))
})

export const repairedContents = { open: ["t1", "t2"], closed: ["t3"], list: ["t3", "1", "t1", "2", "t2", "4"] }
