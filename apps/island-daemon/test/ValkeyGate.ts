import { createServer, type Socket, connect } from "node:net"

/**
 * A TCP proxy in front of Valkey that closes for good once a client sends a command matching
 * `closesOn`: that command and everything after it, on every connection, never reach the
 * server, and their callers wait. A daemon behind it is frozen at an exact point (say, between
 * its dedupe claim and the write that follows), which a pause from outside could only race for.
 * The server itself is not disturbed, so other test files can share it. Not a test file itself.
 */
export interface ValkeyGate {
  /** The URL to give the daemon instead of the server's. */
  readonly url: string
  /** Resolves when the gate closed. */
  readonly closed: Promise<void>
  readonly stop: () => Promise<void>
}

// A pattern split across two TCP chunks is still seen: each chunk is searched with the end of the one before.
const OVERLAP = 4096

export const startValkeyGate = async (target: { readonly host: string; readonly port: number }, closesOn: (bytes: string) => boolean): Promise<ValkeyGate> => {
  let isClosed = false
  let close = () => {}
  const closed = new Promise<void>((resolve) => {
    close = () => {
      isClosed = true
      resolve()
    }
  })
  const sockets = new Set<Socket>()
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.once("close", () => sockets.delete(socket))
    socket.on("error", () => socket.destroy())
    return socket
  }

  const server = createServer((client) => {
    track(client)
    const upstream = track(connect(target.port, target.host))
    upstream.on("data", (chunk: Buffer) => client.write(chunk))
    let tail = ""
    client.on("data", (chunk: Buffer) => {
      if (isClosed) return
      const text = chunk.toString("latin1")
      if (closesOn(tail + text)) return close()
      tail = text.slice(-OVERLAP)
      upstream.write(chunk)
    })
    client.once("close", () => upstream.destroy())
    upstream.once("close", () => client.destroy())
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("gate has no TCP address")

  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })
  return { url: `redis://127.0.0.1:${address.port}`, closed, stop }
}
