import { createServer, type Server, Socket } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { MqttClient } from "mqtt"
import { ACK_LINGER_MS, gatherAckWrites, gatherTurnWrites } from "../src/TurnWrites.js"

// When a client's socket writes: publishes with the turn (one write per turn), PUBACKs alone
// after a short linger, or with the turn's publishes once one comes. Read off the socket's cork
// count, on a real loopback socket.

let server: Server
let socket: Socket
const clientOf = (stream: Socket) => ({ stream }) as unknown as MqttClient
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))
const waitMs = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

beforeAll(async () => {
  server = createServer((peer) => peer.resume())
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  socket = new Socket()
  await new Promise<void>((resolve) => socket.connect(port, "127.0.0.1", resolve))
})

afterAll(async () => {
  socket.destroy()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

describe("socket writes of a turn", () => {
  it("a publish's turn is written after the turn's I/O: corked once, uncorked by the next check phase", async () => {
    const client = clientOf(socket)
    gatherTurnWrites(client)
    gatherTurnWrites(client)
    expect(socket.writableCorked).toBe(1)
    await nextTurn()
    expect(socket.writableCorked).toBe(0)
  })

  it("PUBACKs alone wait for the linger, not for the turn", async () => {
    const client = clientOf(socket)
    gatherAckWrites(client)
    gatherAckWrites(client)
    expect(socket.writableCorked).toBe(1)
    await nextTurn()
    expect(socket.writableCorked).toBe(1)
    await waitMs(ACK_LINGER_MS * 4)
    expect(socket.writableCorked).toBe(0)
  })

  it("PUBACKs held go out with the turn of the next publish", async () => {
    const client = clientOf(socket)
    gatherAckWrites(client)
    await nextTurn()
    gatherTurnWrites(client)
    expect(socket.writableCorked).toBe(1)
    await nextTurn()
    expect(socket.writableCorked).toBe(0)
    // The linger's timer finds nothing left to uncork.
    await waitMs(ACK_LINGER_MS * 4)
    expect(socket.writableCorked).toBe(0)
  })

  it("a PUBACK in a turn that publishes goes with the turn", async () => {
    const client = clientOf(socket)
    gatherTurnWrites(client)
    gatherAckWrites(client)
    expect(socket.writableCorked).toBe(1)
    await nextTurn()
    expect(socket.writableCorked).toBe(0)
  })

  it("a stream that cannot cork is left alone", () => {
    const client = { stream: {} } as unknown as MqttClient
    expect(() => {
      gatherTurnWrites(client)
      gatherAckWrites(client)
    }).not.toThrow()
  })
})
