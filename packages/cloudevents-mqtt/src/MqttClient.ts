import { Duration, Effect, Redacted, Runtime, type Scope, SubscriptionRef } from "effect"
import { type AckHandler, connect, type IClientOptions, type IPublishPacket, type MqttClient } from "mqtt"
import { MqttConnectError } from "./Errors.js"
import { DEFAULT_MAX_PAYLOAD_BYTES } from "./Binary.js"
import { maxPacketBytesOf, mqttDefaults, type MqttOptions, reconnectDelay, safeUrl } from "./MqttOptions.js"

/**
 * One mqtt.js v5 client in a scope: connected on acquire, ended on release, reconnecting with a
 * capped backoff in between, and acknowledging QoS 1 messages only when asked to.
 */

export type MqttStatus = "connecting" | "connected" | "reconnecting" | "closed"

/** Receives every message; for QoS 1 the PUBACK is sent only when `ack` runs. */
export type MessageSink = (topic: string, payload: Buffer, packet: IPublishPacket, ack: Effect.Effect<void>) => void

/**
 * One CONNACK: `connection` counts them (1 = the first connection), `sessionPresent` says whether
 * the broker resumed this client's session. A reconnect without a session met a broker that kept
 * nothing for this client: a clean start, or a broker restarted without persistence.
 */
export interface MqttSession {
  readonly connection: number
  readonly sessionPresent: boolean
}

export interface LiveClient {
  readonly client: MqttClient
  readonly status: SubscriptionRef.SubscriptionRef<MqttStatus>
  readonly sessions: SubscriptionRef.SubscriptionRef<MqttSession>
  readonly isClosing: () => boolean
  /** QoS 1 messages received since the client was created. */
  readonly received: () => number
  /** QoS 1 messages of the current connection not acknowledged yet: the broker's in-flight slots they hold. */
  readonly unacknowledged: () => number
  /** Drops the connection as a network failure would: mqtt.js reconnects and a persistent session resumes. */
  readonly reconnect: () => void
}

/**
 * Passed to mqtt.js's ack callback to mean "no PUBACK now". mqtt.js's own delay mechanism (calling
 * the callback late) stalls its packet pump: no PUBACK for our own publishes, no PINGRESP, no
 * further message would be read until the ack, so a handler that publishes a reply before acking
 * would deadlock. Failing the callback instead lets the pump go on without a PUBACK and without the
 * `message` event; mqtt.js reports this marker as an `error` event, which our listener ignores.
 */
class DeferredAck extends Error {
  constructor() {
    super("PUBACK deferred until the consumer acknowledges")
  }
}
const deferred = new DeferredAck()

type SendPacket = (this: MqttClient, packet: { cmd: "puback"; messageId: number; reasonCode: number }) => void

/**
 * mqtt.js has no public call to send a PUBACK later, so we use its internal `_sendPacket` (the
 * function its own ack path calls). Checked at start, so an mqtt.js upgrade that removes it fails
 * loudly instead of leaving every message unacknowledged.
 */
const sendPacketOf = (client: MqttClient): SendPacket => {
  const candidate: unknown = (client as unknown as Record<string, unknown>)["_sendPacket"]
  if (typeof candidate !== "function") throw new Error("mqtt.js no longer has _sendPacket; manual PUBACK needs an update of MqttClient.ts")
  return candidate as SendPacket
}

/**
 * mqtt.js traces every packet through the `debug` package, a dozen calls per publish, each
 * building its arguments even when tracing is off (a few percent of the CPU and of the garbage
 * of a request). A silent logger instead, unless DEBUG asks for mqtt.js's trace.
 */
const quiet = (): void => undefined
const mqttTraceWanted = (): boolean => /mqttjs|^\*$|,\s*\*/.test(process.env["DEBUG"] ?? "")

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error))

export const acquireClient = (
  options: MqttOptions,
  clientId: string,
  sink: MessageSink
): Effect.Effect<LiveClient, MqttConnectError, Scope.Scope> =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const run = Runtime.runFork(runtime)
    const url = safeUrl(options.url)
    const log = (effect: Effect.Effect<void>) => run(effect.pipe(Effect.annotateLogs({ clientId, url })))
    const status = yield* SubscriptionRef.make<MqttStatus>("connecting")
    const sessions = yield* SubscriptionRef.make<MqttSession>({ connection: 0, sessionPresent: false })
    const setStatus = (next: MqttStatus) => run(SubscriptionRef.set(status, next))
    const minMs = options.reconnectMinMs ?? mqttDefaults.reconnectMinMs
    const maxMs = options.reconnectMaxMs ?? mqttDefaults.reconnectMaxMs
    // `generation` counts CONNACKs: an ack for a message of an earlier connection is stale.
    // `unacknowledged` counts this connection's QoS 1 messages not acked yet; a new one starts at 0.
    const state = { generation: 0, attempts: 0, closing: false, lastError: "", received: 0, unacknowledged: 0 }
    let client: MqttClient | undefined
    let sendPacket: SendPacket | undefined

    const makeAck = (messageId: number | undefined, generation: number): Effect.Effect<void> => {
      let acked = false
      return Effect.suspend(() => {
        if (acked || messageId === undefined || client === undefined || sendPacket === undefined) return Effect.void
        acked = true
        if (generation !== state.generation || !client.connected) {
          return Effect.logDebug("ack of a message from a lost connection dropped; the broker redelivers it").pipe(
            Effect.annotateLogs({ clientId, messageId })
          )
        }
        sendPacket.call(client, { cmd: "puback", messageId, reasonCode: 0 })
        state.unacknowledged--
        return Effect.void
      })
    }

    const customHandleAcks: AckHandler = (topic, payload, packet: IPublishPacket, done) => {
      // QoS 2 (only if a caller subscribed with it) keeps mqtt.js's own flow and arrives as `message`.
      if (packet.qos !== 1) return done(0)
      state.received++
      state.unacknowledged++
      sink(topic, payload, packet, makeAck(packet.messageId, state.generation))
      done(deferred)
    }

    const clientOptions: IClientOptions = {
      protocolVersion: 5,
      clientId,
      clean: options.clean ?? mqttDefaults.clean,
      keepalive: options.keepaliveSeconds ?? mqttDefaults.keepaliveSeconds,
      connectTimeout: options.connectTimeoutMs ?? mqttDefaults.connectTimeoutMs,
      reconnectPeriod: minMs,
      resubscribe: true,
      manualConnect: true,
      customHandleAcks,
      ...(mqttTraceWanted() ? {} : { log: quiet }),
      ...(options.username !== undefined ? { username: options.username } : {}),
      ...(options.password !== undefined ? { password: Redacted.value(options.password) } : {}),
      ...(options.tlsCa !== undefined ? { ca: options.tlsCa } : {}),
      ...(options.tlsCert !== undefined ? { cert: options.tlsCert } : {}),
      ...(options.tlsKey !== undefined ? { key: options.tlsKey } : {}),
      // Both bound what the broker can make us hold: at most `receiveMaximum` unacknowledged
      // messages, none larger than the packet limit (the broker drops those unsent).
      properties: {
        sessionExpiryInterval: options.sessionExpirySeconds ?? mqttDefaults.sessionExpirySeconds,
        receiveMaximum: options.receiveMaximum ?? mqttDefaults.receiveMaximum,
        maximumPacketSize: maxPacketBytesOf(options, DEFAULT_MAX_PAYLOAD_BYTES)
      }
    }

    const listen = (c: MqttClient) => {
      // Without an error listener a connection error would be an unhandled 'error' event and kill the process.
      c.on("error", (error) => {
        if (error === deferred) return
        state.lastError = errorMessage(error)
        log(Effect.logWarning("mqtt client error").pipe(Effect.annotateLogs({ error: state.lastError })))
      })
      c.on("connect", (connack) => {
        // mqtt.js leaves Nagle's algorithm on. With it, a QoS 1 request/reply waits on the peer's
        // delayed ACK: about 40 ms per hop on Linux (measured in bench/mqtt.ts). Each reconnect
        // has a new socket; a WebSocket stream has no such switch.
        const socket: unknown = c.stream
        if (typeof (socket as { setNoDelay?: unknown } | undefined)?.setNoDelay === "function") (socket as { setNoDelay: (on: boolean) => void }).setNoDelay(true)
        state.generation++
        state.unacknowledged = 0
        run(SubscriptionRef.set(sessions, { connection: state.generation, sessionPresent: connack.sessionPresent }))
        state.attempts = 0
        c.options.reconnectPeriod = minMs
        setStatus("connected")
        if (state.generation > 1) log(Effect.logInfo("mqtt reconnected").pipe(Effect.annotateLogs({ sessionPresent: connack.sessionPresent })))
      })
      // Capped exponential backoff: mqtt.js reconnects every `reconnectPeriod` and reads the option
      // again each time it schedules the next attempt, so each attempt raises it for the next one.
      c.on("reconnect", () => {
        state.attempts++
        c.options.reconnectPeriod = reconnectDelay(state.attempts, minMs, maxMs)
        setStatus(state.generation === 0 ? "connecting" : "reconnecting")
      })
      c.on("close", () => {
        if (!state.closing && state.generation > 0) setStatus("reconnecting")
      })
      c.on("offline", () => log(Effect.logWarning(state.generation === 0 ? "mqtt broker not reachable yet; retrying" : "mqtt connection lost; reconnecting")))
      c.on("message", (topic, payload, packet) => {
        if (packet.qos !== 1) sink(topic, payload, packet, Effect.void)
      })
    }

    const firstConnect = Effect.async<MqttClient, MqttConnectError>((resume) => {
      let c: MqttClient
      try {
        c = connect(options.url, clientOptions)
      } catch (error) {
        resume(Effect.fail(new MqttConnectError({ url, message: errorMessage(error) })))
        return
      }
      client = c
      sendPacket = sendPacketOf(c)
      listen(c)
      const onConnect = () => {
        c.removeListener("error", onError)
        resume(Effect.succeed(c))
      }
      // A CONNACK refusal (bad credentials, client id) carries a numeric reason code: waiting will not help.
      const onError = (error: Error & { code?: unknown }) => {
        if (typeof error.code !== "number") return
        c.removeListener("connect", onConnect)
        c.end(true)
        resume(Effect.fail(new MqttConnectError({ url, message: `broker refused the connection: ${error.message}` })))
      }
      c.once("connect", onConnect)
      c.on("error", onError)
      c.connect()
      return Effect.sync(() => {
        c.removeListener("connect", onConnect)
        c.removeListener("error", onError)
        state.closing = true
        c.end(true)
      })
    }).pipe(
      Effect.timeoutFail({
        duration: Duration.millis(options.connectTimeoutMs ?? mqttDefaults.connectTimeoutMs),
        onTimeout: () => new MqttConnectError({ url, message: `no connection in time${state.lastError ? `: ${state.lastError}` : ""}` })
      })
    )

    const close = (c: MqttClient) =>
      Effect.gen(function* () {
        state.closing = true
        // A clean DISCONNECT first (the broker then drops the will and keeps a persistent session).
        // mqtt.js sends it only once no publish waits for its PUBACK, so with the broker gone it
        // never completes: then, or when not connected at all, the socket is torn down at once
        // (`end(true)` after a started `end(false)` does nothing, hence the stream itself).
        // A release runs uninterruptibly, where a timeout could not stop the wait: hence `interruptible`.
        const ended = c.connected
          ? yield* Effect.interruptible(
              Effect.async<boolean>((resume) => {
                c.end(false, {}, () => resume(Effect.succeed(true)))
              })
            ).pipe(Effect.timeout(Duration.seconds(2)), Effect.orElseSucceed(() => false))
          : false
        // Publishes still waiting get their callback (with an error) instead of being kept for a reconnect.
        for (const messageId of Object.keys(c.outgoing)) c.removeOutgoingMessage(Number(messageId))
        if (!ended) {
          if (c.disconnecting) c.stream?.destroy()
          else c.end(true)
        }
        yield* SubscriptionRef.set(status, "closed")
      })

    // acquireRelease runs its acquire uninterruptibly, which would make the timeout wait for a
    // broker that never answers; the attempt cleans up after itself when interrupted.
    const c = yield* Effect.acquireRelease(Effect.interruptible(firstConnect), close)
    // Destroying the socket is what a network failure does: mqtt.js then reconnects by its schedule.
    const reconnect = () => {
      if (!state.closing && c.connected) c.stream?.destroy()
    }
    return {
      client: c,
      status,
      sessions,
      isClosing: () => state.closing,
      received: () => state.received,
      unacknowledged: () => state.unacknowledged,
      reconnect
    } satisfies LiveClient
  })
