import { Effect, Stream } from "effect"
import type { CloudEvent, IncomingMessage, MqttConnectionService } from "@microdcs/cloudevents-mqtt"
import { ReturnStatus, statusNames } from "@microdcs/job-state"

/**
 * Counts requests by what the island answered. The ingress acknowledges a refused request just
 * like a processed one, so whether it was refused is read off the reply it sends: an
 * `mdcserrorkind` extension, or a ReturnStatus other than NO_ERROR.
 */

/** Why a reply refuses its request (`undefined`: it does not). */
export const refusalOf = (reply: CloudEvent): string | undefined => {
  const kind = reply.extensions["mdcserrorkind"]
  if (kind !== undefined && kind.length > 0) return kind
  const status = (reply.data as { ReturnStatus?: unknown } | undefined)?.ReturnStatus
  if (typeof status !== "number" || status === ReturnStatus.NO_ERROR) return undefined
  return statusNames(status).join("+") || "unknown-status"
}

/** Told once per acknowledged request: its type, `ok` or `refused` (with the reason), seconds from receipt. */
export type AckObserver = (type: string, outcome: "ok" | "refused", seconds: number, reason: string | undefined) => void

/**
 * The connection as the job control ingress sees it, with each received message tracked from
 * receipt to acknowledgement and each reply inspected. Everything else passes through.
 */
export const accountedConnection = (connection: MqttConnectionService, observe: AckObserver): MqttConnectionService => {
  const refusals = new WeakMap<IncomingMessage, { reason: string | undefined }>()

  const track = (message: IncomingMessage): IncomingMessage => {
    const received = performance.now()
    const entry = { reason: undefined as string | undefined }
    let counted = false
    const type = message.decoded._tag === "Success" ? message.decoded.success.type : "undecodable"
    const tracked: IncomingMessage = {
      ...message,
      ack: message.ack.pipe(
        Effect.andThen(
          Effect.sync(() => {
            if (counted) return
            counted = true
            observe(type, entry.reason === undefined ? "ok" : "refused", (performance.now() - received) / 1000, entry.reason)
          })
        )
      )
    }
    refusals.set(tracked, entry)
    return tracked
  }

  return {
    ...connection,
    subscribe: (filter, options) => Effect.map(connection.subscribe(filter, options), Stream.map(track)),
    reply: (request, event) =>
      Effect.suspend(() => {
        const entry = refusals.get(request)
        if (entry) entry.reason = refusalOf(event)
        return connection.reply(request, event)
      })
  }
}
