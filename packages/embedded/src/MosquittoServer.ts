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

/** Starts a throw-away MQTT v5 broker on a free loopback port: anonymous, no persistence. */
export const startMosquitto = async (options: { readonly port?: number } = {}): Promise<MosquittoServer> => {
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
        [`listener ${port} 127.0.0.1`, "allow_anonymous true", "persistence false", "set_tcp_nodelay true", "log_dest stderr", "log_type error", "log_type warning", ""].join("\n")
      )
      return ["-c", config]
    },
    probe: tcpListening
  })
  return { ...server, url: `mqtt://${server.host}:${server.port}` }
}
