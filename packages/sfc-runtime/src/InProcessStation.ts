import { randomUUID } from "node:crypto"
import { Effect, FiberSet, Layer, Schedule } from "effect"
import { ScopeRegistry, SfcStateDao } from "@microdcs/store"
import type { CommandEntry } from "@microdcs/sfc"
import { SfcEvents } from "./EventIngestion.js"
import { StationPort } from "./StationPort.js"

/** What a simulated station answers to one push command; `"silent"` sends no reply (timeouts). */
export type CommandReply = { readonly data?: unknown; readonly error?: string; readonly delayMs?: number } | "silent"

export interface StationScript {
  /** Answers push commands; default: an empty result at once. */
  readonly onCommand?: (command: CommandEntry, scope: string) => CommandReply
  /** Pull events by TypeId: the data the station emits for a job waiting on that type (`undefined` = not yet). */
  readonly events?: Readonly<Record<string, (jobId: string) => unknown>>
  /** How often the station looks for jobs waiting on its event types (default 20 ms). */
  readonly eventPollMs?: number
  /** The CloudEvent source of its events. */
  readonly source?: string
}

export interface StationLog {
  readonly commands: ReadonlyArray<CommandEntry>
  readonly events: ReadonlyArray<{ readonly jobId: string; readonly type: string }>
}

/**
 * A station in the same process, for tests and the demo: it receives push commands through the
 * `StationPort` and answers them, and emits pull events for jobs waiting on its event types, all
 * through the same ingestion API a real binding uses. It keeps a log of what it saw.
 */
export const InProcessStation = (script: StationScript = {}) => {
  const log = { commands: [] as Array<CommandEntry>, events: [] as Array<{ jobId: string; type: string }> }
  const source = script.source ?? "urn:microdcs:station:in-process"
  const layer = Layer.effect(
    StationPort,
    Effect.gen(function* () {
      const events = yield* SfcEvents
      const states = yield* SfcStateDao
      const scopes = yield* ScopeRegistry
      // Answers run in fibers of the station's scope: interrupted when it closes.
      const answering = yield* FiberSet.make()
      const runAnswer = yield* FiberSet.runtime(answering)<never>()

      const answer = (command: CommandEntry) =>
        Effect.gen(function* () {
          const reply = script.onCommand ? script.onCommand(command, command.subject) : {}
          if (reply === "silent") return
          if (reply.delayMs) yield* Effect.sleep(`${reply.delayMs} millis`)
          yield* events.ingest({
            scope: command.subject, source, id: randomUUID(), type: `${command.typeId}.reply`,
            correlationId: command.correlationId, data: reply.data ?? {},
            ...(reply.error !== undefined ? { error: reply.error } : {})
          })
        }).pipe(Effect.catchCause((cause) => Effect.logWarning("in-process station could not answer", cause)))

      // Emits each event type once per wait: the wait start tells a new wait from an old one.
      const emitted = new Set<string>()
      const emitRound = Effect.gen(function* () {
        for (const scope of yield* scopes.list) {
          for (const [type, produce] of Object.entries(script.events ?? {})) {
            for (const { jobId, since } of yield* states.waiting(scope, type, 100)) {
              const mark = `${jobId}|${type}|${since}`
              if (emitted.has(mark)) continue
              const data = produce(jobId)
              if (data === undefined) continue
              emitted.add(mark)
              log.events.push({ jobId, type })
              yield* events.ingest({ scope, source, id: randomUUID(), type, jobId, data })
            }
          }
        }
      }).pipe(Effect.catchCause((cause) => Effect.logWarning("in-process station event round failed", cause)))
      if (script.events && Object.keys(script.events).length > 0) {
        yield* emitRound.pipe(Effect.repeat(Schedule.spaced(`${script.eventPollMs ?? 20} millis`)), Effect.forkScoped)
      }

      return {
        // Taken at once, answered in a fiber of its own (as a station's link would, later).
        send: (command: CommandEntry) =>
          Effect.sync(() => {
            log.commands.push(command)
            runAnswer(answer(command))
          })
      }
    })
  )
  return { layer, log: log as StationLog }
}
