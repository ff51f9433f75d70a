import { execFileSync } from "node:child_process"
import { Socket } from "node:net"
import { type ChildServer, startChildServer } from "./ChildServer.js"

const onPath = (bin: string): boolean => {
  try {
    execFileSync("sh", ["-c", `command -v ${bin}`], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/**
 * The server binary: `VALKEY_SERVER_BIN` if set, else `valkey-server`, else `redis-server`.
 * Throws with the Debian package names when none is installed.
 */
export const valkeyServerBin = (): string => {
  const override = process.env["VALKEY_SERVER_BIN"]
  if (override) return override
  for (const bin of ["valkey-server", "redis-server"]) if (onPath(bin)) return bin
  throw new Error("neither valkey-server nor redis-server is on PATH: install the Debian package valkey-server or redis-server, or set VALKEY_SERVER_BIN")
}

/** Sends a raw RESP PING and resolves true on +PONG. No client library, so test-utils stays dependency-free. */
export const pingValkey = (host: string, port: number, timeoutMs = 500): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = new Socket()
    let reply = ""
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once("error", () => done(false))
    socket.on("data", (chunk) => {
      reply += chunk.toString()
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG"))
    })
    socket.connect(port, host, () => socket.write("PING\r\n"))
  })

export interface ValkeyServer extends ChildServer {
  readonly url: string
}

/** Starts a throw-away Valkey (or Redis) on a free loopback port: temp dir, no persistence. */
export const startValkeyServer = async (
  options: { readonly port?: number; readonly extraArgs?: ReadonlyArray<string> } = {}
): Promise<ValkeyServer> => {
  const server = await startChildServer({
    ...(options.port !== undefined ? { port: options.port } : {}),
    name: "valkey",
    bin: valkeyServerBin(),
    args: (port, dir) => [
      "--port", String(port),
      "--bind", "127.0.0.1",
      "--dir", dir,
      "--save", "",
      "--appendonly", "no",
      "--daemonize", "no",
      "--protected-mode", "no",
      "--loglevel", "warning",
      ...(options.extraArgs ?? [])
    ],
    probe: pingValkey
  })
  return { ...server, url: `redis://${server.host}:${server.port}` }
}
