import { Duration, Effect, Redacted, type Scope, SubscriptionRef } from "effect"
import { connect, type IClientOptions, type IConnackPacket, type MqttClient } from "mqtt"
import { MqttConnectError } from "./Errors.js"
import { type AckState, ackHandlerOf, deferred, type MessageSink, sendPacketOf } from "./ManualAck.js"
import { DEFAULT_MAX_PAYLOAD_BYTES } from "./Binary.js"
import { maxPacketBytesOf, mqttDefaults, type MqttOptions, reconnectDelay, safeUrl } from "./MqttOptions.js"

/**
 * One mqtt.js v5 client in a scope: connected on acquire, ended on release, reconnecting with a
 * capped backoff in between, and acknowledging QoS 1 messages only when asked to.
 */

export type MqttStatus = "connecting" | "connected" | "reconnecting" | "closed"

export type { MessageSink } from "./ManualAck.js"

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
  /** The Maximum Packet Size of the broker's last CONNACK; `undefined` when it announced none. */
  readonly brokerMaxPacketBytes: () => number | undefined
}

/**
 * mqtt.js traces every packet through the `debug` package, a dozen calls per publish, each
 * building its arguments even when tracing is off (a few percent of the CPU and of the garbage
 * of a request). A silent logger instead, unless DEBUG asks for mqtt.js's trace.
 */
const quiet = (): void => undefined
const mqttTraceWanted = (): boolean => /mqttjs|^\*$|,\s*\*/.test(process.env["DEBUG"] ?? "")

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** What the client's callbacks share besides the ack state: reconnect attempts, closing, the last error. */
interface ClientState extends AckState {
  attempts: number
  closing: boolean
  lastError: string
  brokerMaxPacketBytes: number | undefined
}

/** The dependencies of one client's functions, built once by {@link acquireClient}. */
interface ClientDeps {
  readonly options: MqttOptions
  readonly clientId: string
  readonly url: string
  readonly sink: MessageSink
  readonly run: (effect: Effect.Effect<void>) => void
  readonly status: SubscriptionRef.SubscriptionRef<MqttStatus>
  readonly sessions: SubscriptionRef.SubscriptionRef<MqttSession>
  readonly minMs: number
  readonly maxMs: number
  readonly state: ClientState
}

const log = (deps: ClientDeps, effect: Effect.Effect<void>) => deps.run(effect.pipe(Effect.annotateLogs({ clientId: deps.clientId, url: deps.url })))

const setStatus = (deps: ClientDeps, next: MqttStatus) => deps.run(SubscriptionRef.set(deps.status, next))

const clientOptionsOf = (deps: ClientDeps): IClientOptions => {
  const { options } = deps
  return {
    protocolVersion: 5,
    clientId: deps.clientId,
    clean: options.clean ?? mqttDefaults.clean,
    keepalive: options.keepaliveSeconds ?? mqttDefaults.keepaliveSeconds,
    connectTimeout: options.connectTimeoutMs ?? mqttDefaults.connectTimeoutMs,
    reconnectPeriod: deps.minMs,
    resubscribe: true,
    manualConnect: true,
    customHandleAcks: ackHandlerOf(deps),
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
}

const onConnected = (deps: ClientDeps, c: MqttClient, connack: IConnackPacket) => {
  const { state } = deps
  const { sessionPresent } = connack
  // Read at each connect: a broker restarted with another max_packet_size announces the new one.
  state.brokerMaxPacketBytes = connack.properties?.maximumPacketSize
  // mqtt.js leaves Nagle's algorithm on. With it, a QoS 1 request/reply waits on the peer's
  // delayed ACK: about 40 ms per hop on Linux (measured in bench/mqtt.ts). Each reconnect
  // has a new socket; a WebSocket stream has no such switch.
  const socket: unknown = c.stream
  if (typeof (socket as { setNoDelay?: unknown } | undefined)?.setNoDelay === "function") (socket as { setNoDelay: (on: boolean) => void }).setNoDelay(true)
  state.generation++
  state.unacknowledged = 0
  deps.run(SubscriptionRef.set(deps.sessions, { connection: state.generation, sessionPresent }))
  state.attempts = 0
  c.options.reconnectPeriod = deps.minMs
  setStatus(deps, "connected")
  if (state.generation > 1) log(deps, Effect.logInfo("mqtt reconnected").pipe(Effect.annotateLogs({ sessionPresent })))
}

const listen = (deps: ClientDeps, c: MqttClient) => {
  const { state } = deps
  // Without an error listener a connection error would be an unhandled 'error' event and kill the process.
  c.on("error", (error) => {
    if (error === deferred) return
    state.lastError = errorMessage(error)
    log(deps, Effect.logWarning("mqtt client error").pipe(Effect.annotateLogs({ error: state.lastError })))
  })
  c.on("connect", (connack) => onConnected(deps, c, connack))
  // Capped exponential backoff: mqtt.js reconnects every `reconnectPeriod` and reads the option
  // again each time it schedules the next attempt, so each attempt raises it for the next one.
  c.on("reconnect", () => {
    state.attempts++
    c.options.reconnectPeriod = reconnectDelay(state.attempts, deps.minMs, deps.maxMs)
    setStatus(deps, state.generation === 0 ? "connecting" : "reconnecting")
  })
  c.on("close", () => {
    if (!state.closing && state.generation > 0) setStatus(deps, "reconnecting")
  })
  c.on("offline", () => log(deps, Effect.logWarning(state.generation === 0 ? "mqtt broker not reachable yet; retrying" : "mqtt connection lost; reconnecting")))
  c.on("message", (topic, payload, packet) => {
    if (packet.qos !== 1) deps.sink(topic, payload, packet, Effect.void)
  })
}

/** Connects `c` and resumes with it on the first CONNACK; the returned effect cancels the attempt. */
const awaitConnack = (
  deps: ClientDeps,
  c: MqttClient,
  resume: (effect: Effect.Effect<MqttClient, MqttConnectError>) => void
): Effect.Effect<void> => {
  const onConnect = () => {
    c.removeListener("error", onError)
    resume(Effect.succeed(c))
  }
  // A CONNACK refusal (bad credentials, client id) carries a numeric reason code: waiting will not help.
  const onError = (error: Error & { code?: unknown }) => {
    if (typeof error.code !== "number") return
    c.removeListener("connect", onConnect)
    c.end(true)
    resume(Effect.fail(new MqttConnectError({ url: deps.url, message: `broker refused the connection: ${error.message}` })))
  }
  c.once("connect", onConnect)
  c.on("error", onError)
  c.connect()
  return Effect.sync(() => {
    c.removeListener("connect", onConnect)
    c.removeListener("error", onError)
    deps.state.closing = true
    c.end(true)
  })
}

const firstConnect = (deps: ClientDeps, clientOptions: IClientOptions): Effect.Effect<MqttClient, MqttConnectError> =>
  Effect.callback<MqttClient, MqttConnectError>((resume) => {
    let c: MqttClient
    try {
      c = connect(deps.options.url, clientOptions)
    } catch (error) {
      resume(Effect.fail(new MqttConnectError({ url: deps.url, message: errorMessage(error) })))
      return
    }
    deps.state.client = c
    deps.state.sendPacket = sendPacketOf(c)
    listen(deps, c)
    return awaitConnack(deps, c, resume)
  }).pipe(
    Effect.timeoutOrElse({
      duration: Duration.millis(deps.options.connectTimeoutMs ?? mqttDefaults.connectTimeoutMs),
      orElse: () => Effect.fail(new MqttConnectError({ url: deps.url, message: `no connection in time${deps.state.lastError ? `: ${deps.state.lastError}` : ""}` }))
    })
  )

const close = (deps: ClientDeps, c: MqttClient) =>
  Effect.gen(function* () {
    deps.state.closing = true
    // A clean DISCONNECT first (the broker then drops the will and keeps a persistent session).
    // mqtt.js sends it only once no publish waits for its PUBACK, so with the broker gone it
    // never completes: then, or when not connected at all, the socket is torn down at once
    // (`end(true)` after a started `end(false)` does nothing, hence the stream itself).
    // A release runs uninterruptibly, where a timeout could not stop the wait: hence `interruptible`.
    const ended = c.connected
      ? yield* Effect.interruptible(
          Effect.callback<boolean>((resume) => {
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
    yield* SubscriptionRef.set(deps.status, "closed")
  })

const clientDepsOf = (options: MqttOptions, clientId: string, sink: MessageSink) =>
  Effect.gen(function* () {
    const run = Effect.runForkWith(yield* Effect.context<never>())
    return {
      options,
      clientId,
      url: safeUrl(options.url),
      sink,
      run,
      status: yield* SubscriptionRef.make<MqttStatus>("connecting"),
      sessions: yield* SubscriptionRef.make<MqttSession>({ connection: 0, sessionPresent: false }),
      minMs: options.reconnectMinMs ?? mqttDefaults.reconnectMinMs,
      maxMs: options.reconnectMaxMs ?? mqttDefaults.reconnectMaxMs,
      state: { generation: 0, attempts: 0, closing: false, lastError: "", brokerMaxPacketBytes: undefined, received: 0, unacknowledged: 0, client: undefined, sendPacket: undefined }
    } satisfies ClientDeps
  })

export const acquireClient = (
  options: MqttOptions,
  clientId: string,
  sink: MessageSink
): Effect.Effect<LiveClient, MqttConnectError, Scope.Scope> =>
  Effect.gen(function* () {
    const deps: ClientDeps = yield* clientDepsOf(options, clientId, sink)
    const { state } = deps
    const clientOptions = clientOptionsOf(deps)
    // acquireRelease runs its acquire uninterruptibly, which would make the timeout wait for a
    // broker that never answers; the attempt cleans up after itself when interrupted.
    const c = yield* Effect.acquireRelease(Effect.interruptible(firstConnect(deps, clientOptions)), (c) => close(deps, c))
    // Destroying the socket is what a network failure does: mqtt.js then reconnects by its schedule.
    const reconnect = () => {
      if (!state.closing && c.connected) c.stream?.destroy()
    }
    return {
      client: c,
      status: deps.status,
      sessions: deps.sessions,
      isClosing: () => state.closing,
      received: () => state.received,
      unacknowledged: () => state.unacknowledged,
      reconnect,
      brokerMaxPacketBytes: () => state.brokerMaxPacketBytes
    } satisfies LiveClient
  })
