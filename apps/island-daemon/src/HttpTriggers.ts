import { Effect } from "effect"
import { TriggerStore } from "@microdcs/store"
import { tokenRoute } from "./HttpAccess.js"
import { type Reply, storeReadReply } from "./HttpStoreReply.js"

/** The list has no not-found or corrupt case: a row that does not read back is listed as unreadable. */
const triggerReply = storeReadReply({})

const triggers = Effect.gen(function* () {
  const { triggers, unreadable } = yield* Effect.flatMap(TriggerStore, (store) => store.list)
  return { status: 200, body: { items: triggers, unreadable, next: null } } satisfies Reply
})

/**
 * The island's triggers as every instance holds them (read from the store, not from this
 * instance's memory), sorted by id, with the stored rows that do not read back and why.
 *
 *   GET /api/triggers
 */
export const triggerRoutes = [tokenRoute("/api/triggers", triggerReply(triggers))] as const
