import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { Socket } from "node:net"
import { join } from "node:path"
import { type ChildServer, startChildServer } from "./ChildServer.js"

/** `MOSQUITTO_BIN` if set, else `mosquitto` from PATH or /usr/sbin (where Debian installs it). */
export const mosquittoBin = (): string => {
  const override = process.env["MOSQUITTO_BIN"]
  if (override) return override
  for (const candidate of ["mosquitto", "/usr/sbin/mosquitto"]) {
    try {
      execFileSync("sh", ["-c", `command -v ${candidate}`], { stdio: "ignore" })
      return candidate
    } catch {
      // try the next one
    }
  }
  throw new Error("mosquitto is not installed: install the Debian package mosquitto, or set MOSQUITTO_BIN")
}

/** Resolves true once something accepts TCP connections on the port. */
export const tcpListening = (host: string, port: number, timeoutMs = 500): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = new Socket()
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once("error", () => done(false))
    socket.connect(port, host, () => done(true))
  })

export interface MosquittoServer extends ChildServer {
  readonly url: string
}

/** The largest MQTT packet: a remaining length of at most 268,435,455 bytes and its fixed header. */
const MAX_MQTT_PACKET = 268_435_460

export interface MosquittoOptions {
  /** Restart a broker where its clients expect it. */
  readonly port?: number
  /**
   * `max_packet_size`: the largest packet the broker takes, announced in its CONNACK (default:
   * any). A client that sends a larger one is disconnected with reason 0x95, as MQTT 5 says.
   * Set it to what the subscribers' Maximum Packet Size allows: mosquitto (2.0) drops a message
   * over a subscriber's limit unsent but keeps the in-flight slot it took for it, and after
   * Receive Maximum such messages sends that subscriber nothing more until it reconnects.
   * (Its `message_size_limit` would refuse with PUBACK 0x95, which is no PUBACK reason code:
   * mqtt.js then fails to parse the packet and its connection stalls.)
   */
  readonly maxPacketSize?: number
}

/** Starts a throw-away MQTT v5 broker on a free loopback port: anonymous, no persistence. */
export const startMosquitto = async (options: MosquittoOptions = {}): Promise<MosquittoServer> => {
  const limit = options.maxPacketSize
  // mosquitto would not start with it (below 20: it refuses), and say so only in its log.
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 20 && limit <= MAX_MQTT_PACKET)) {
    throw new Error(`maxPacketSize must be an integer from 20 to ${MAX_MQTT_PACKET}, not ${limit}`)
  }
  const server = await startChildServer({
    name: "mosquitto",
    bin: mosquittoBin(),
    ...(options.port !== undefined ? { port: options.port } : {}),
    args: (port, dir) => {
      const config = join(dir, "mosquitto.conf")
      writeFileSync(
        config,
        // set_tcp_nodelay: with Nagle's algorithm on, a QoS 1 request/reply waits ~40 ms per hop
        // on the client's delayed ACK (see bench/mqtt.ts).
        [
          `listener ${port} 127.0.0.1`,
          "allow_anonymous true",
          "persistence false",
          "set_tcp_nodelay true",
          ...(limit !== undefined ? [`max_packet_size ${limit}`] : []),
          "log_dest stderr",
          "log_type error",
          "log_type warning",
          ""
        ].join("\n")
      )
      return ["-c", config]
    },
    probe: tcpListening
  })
  return { ...server, url: `mqtt://${server.host}:${server.port}` }
}
