import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { KeyFamilyError } from "@microdcs/keyschema"
import { Valkey, ValkeyLayer, type ValkeyService } from "@microdcs/store"
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

/** A raw command on the shared connection (`Valkey.command`, the extensions' escape hatch). */
export const raw = <A>(run: (client: Parameters<Parameters<ValkeyService["command"]>[1]>[0]) => Promise<A>) =>
  Effect.flatMap(Valkey, (valkey) => valkey.command("test", run))

/** Every key under the island's prefix with its DUMP: any write anywhere changes it. */
export const snapshot = Effect.flatMap(Valkey, (valkey) => valkey.command("snapshot", (c) => dumpKeys(c, valkey.keys.prefix)))

export const doc = (value: unknown) => JSON.stringify(value)
