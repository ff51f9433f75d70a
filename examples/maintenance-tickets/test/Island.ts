import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { KeyFamilyError } from "@microdcs/keyschema"
import { Valkey, ValkeyLayer } from "@microdcs/store"
import { type RawClient, unsafeCommand } from "@microdcs/store/unsafe"
import { dumpKeys, randomPrefix } from "@microdcs/test-utils"
import { TicketDao, ticketKeys } from "../src/index.js"

/**
 * The tests' island: the run's server (test-utils globalSetup), a random prefix of the test
 * file's own, the ticket DAO over it.
 */
export const ticketIsland = (prefix = randomPrefix("tickets")) =>
  TicketDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

/** The ticket families on the island's schema, to name keys in assertions and hand-made breaks. */
export const ticketSchema = Effect.map(Valkey, (valkey) => {
  const keys = valkey.keys.extend(ticketKeys)
  if (keys instanceof KeyFamilyError) throw new Error(keys.message)
  return keys
})

/** A raw command on the shared connection (`unsafeCommand`: hand-made breaks and reads of what the DAO wrote). */
export const raw = <A>(run: (client: RawClient) => Promise<A>) =>
  Effect.flatMap(Valkey, (valkey) => unsafeCommand(valkey, "test", run))

/** Every key under the island's prefix with its DUMP: any write anywhere changes it. */
export const snapshot = Effect.flatMap(Valkey, (valkey) => unsafeCommand(valkey, "snapshot", (c) => dumpKeys(c, valkey.keys.prefix)))

export const doc = (value: unknown) => JSON.stringify(value)
