import { Data } from "effect"

/**
 * How a failure at start is met: a server that is not reachable yet is waited for; one that
 * answered "no" (refused credentials, missing ACL grants, a certificate it does not trust) will
 * say "no" again, so waiting cannot help and the daemon ends with exit code 2 and the reason.
 */

/** The island cannot start as configured: retrying will not help. */
export class StartRefused extends Data.TaggedError("StartRefused")<{
  /** Which server refused: `valkey` or `mqtt`. */
  readonly server: "valkey" | "mqtt"
  /** What is wrong and what to check, for the operator. */
  readonly message: string
}> {}

/** Failures at start that a server coming (back) up cures. */
const TRANSIENT = new Set(["StoreUnavailable", "UnknownOutcome", "MqttConnectError", "MqttSubscribeError", "MqttPublishError"])

const VALKEY_TAGS = new Set(["StoreUnavailable", "UnknownOutcome", "NoPermission"])

/** Server replies that mean the credentials or ACL grants are wrong. */
const valkeyRefusals: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bWRONGPASS\b/, "Valkey refused the credentials (WRONGPASS): check VALKEY_USERNAME and VALKEY_PASSWORD (or the user and password in VALKEY_URL)"],
  [/\bNOAUTH\b/, "Valkey requires a password (NOAUTH): set VALKEY_PASSWORD (and VALKEY_USERNAME for an ACL user)"],
  [/\bNOPERM\b/, "the Valkey user lacks a permission the island needs (NOPERM): grant its keys ~{prefix}:*, its channels &{prefix}:* and the commands it uses"]
]

/** TLS failures: a certificate the client does not trust, or one the server does not accept. */
const tlsFailure = /certificate|self[- ]signed|SSL routines|ERR_TLS|handshake|alert/i

const tagOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : undefined

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)

/** The refusal in `error`, if it is one; `undefined` for everything else. */
export const refusalOf = (error: unknown): StartRefused | undefined => {
  const tag = tagOf(error)
  const message = messageOf(error)
  if (tag !== undefined && VALKEY_TAGS.has(tag)) {
    // The store's typed NoPermission may word its message its own way.
    const said = tag === "NoPermission" && !/\bNOPERM\b/.test(message) ? `NOPERM ${message}` : message
    const refusal = valkeyRefusals.find(([pattern]) => pattern.test(said))
    if (refusal) return new StartRefused({ server: "valkey", message: `${refusal[1]}; the server said: ${message}` })
    if (tlsFailure.test(message)) return new StartRefused({ server: "valkey", message: `TLS with Valkey failed: ${message}; check VALKEY_TLS_CA_FILE, VALKEY_TLS_CERT_FILE and VALKEY_TLS_KEY_FILE` })
  }
  if (tag === "MqttConnectError") {
    // A CONNACK with a failure reason code (bad user name or password, not authorized, banned).
    if (/broker refused the connection/.test(message)) {
      return new StartRefused({ server: "mqtt", message: `the MQTT broker refused the connection: check MQTT_USERNAME and MQTT_PASSWORD and the broker's ACL; the broker said: ${message}` })
    }
    if (tlsFailure.test(message)) return new StartRefused({ server: "mqtt", message: `TLS with the MQTT broker failed: ${message}; check MQTT_TLS_CA_FILE, MQTT_TLS_CERT_FILE and MQTT_TLS_KEY_FILE` })
  }
  return undefined
}

/** Worth another try: the server may simply not be up yet. */
export const isTransient = (error: unknown): boolean => {
  const tag = tagOf(error)
  return tag !== undefined && TRANSIENT.has(tag) && refusalOf(error) === undefined
}
