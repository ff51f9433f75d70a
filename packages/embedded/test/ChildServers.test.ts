import { afterEach, describe, expect, it } from "vitest"
import { pingValkey, startValkeyServer, valkeyServerBin } from "@microdcs/embedded"

describe("startValkeyServer", () => {
  const saved = process.env["VALKEY_SERVER_BIN"]
  afterEach(() => {
    if (saved === undefined) delete process.env["VALKEY_SERVER_BIN"]
    else process.env["VALKEY_SERVER_BIN"] = saved
  })

  it("starts a server that answers PING and stops it", async () => {
    const server = await startValkeyServer()
    expect(await pingValkey(server.host, server.port)).toBe(true)
    await server.stop()
    expect(await pingValkey(server.host, server.port)).toBe(false)
  })

  it("restarts on a given port", async () => {
    const first = await startValkeyServer()
    await first.stop()
    const second = await startValkeyServer({ port: first.port })
    expect(second.port).toBe(first.port)
    expect(await pingValkey(second.host, second.port)).toBe(true)
    await second.stop()
  })

  it("names the override when the binary cannot be started", async () => {
    process.env["VALKEY_SERVER_BIN"] = "/nonexistent/valkey-server"
    expect(valkeyServerBin()).toBe("/nonexistent/valkey-server")
    await expect(startValkeyServer()).rejects.toThrow(/nonexistent\/valkey-server/)
  })
})

describe("startMosquitto", () => {
  it("starts a broker that accepts connections and stops it", async () => {
    const { startMosquitto, tcpListening } = await import("@microdcs/embedded")
    const broker = await startMosquitto()
    expect(broker.url).toMatch(/^mqtt:\/\/127\.0\.0\.1:\d+$/)
    expect(await tcpListening(broker.host, broker.port)).toBe(true)
    await broker.stop()
    expect(await tcpListening(broker.host, broker.port)).toBe(false)
  })
})
