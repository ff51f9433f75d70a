import { Context, Data, type Effect } from "effect"
import type { CommandEntry } from "@microdcs/sfc"

/** A command could not be handed to the station; the outbox entry stays pending and is retried. */
export class CommandNotSent extends Data.TaggedError("CommandNotSent")<{
  readonly correlationId: string
  readonly message: string
}> {}

/**
 * Where push commands go. The MQTT CloudEvents binding implements it for real stations; the
 * in-process station implements it for tests and the demo. Sending the same command twice (a
 * redelivered outbox entry, a resend) must be harmless: it carries the same correlation id.
 */
export interface StationPortService {
  readonly send: (command: CommandEntry) => Effect.Effect<void, CommandNotSent>
}

export class StationPort extends Context.Service<StationPort, StationPortService>()("@microdcs/sfc/StationPort") {}
