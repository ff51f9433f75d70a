import { describe, expect, it } from "vitest"
import { respCommand, startSentinelTopology } from "@microdcs/embedded"

describe("startSentinelTopology", () => {
  it("starts a primary, a replica and three sentinels that fail over on SENTINEL FAILOVER", async () => {
    const topology = await startSentinelTopology()
    try {
      const first = await topology.primary()
      expect(first.port).toBe(topology.servers()[0]!.port)
      expect(topology.sentinelNodes).toHaveLength(3)
      await respCommand(first.host, first.port, ["SET", "k", "v"])
      await topology.failover()
      const promoted = await topology.waitForNewPrimary(first.port)
      expect(promoted.port).toBe(topology.servers()[1]!.port)
      expect(await respCommand(promoted.host, promoted.port, ["GET", "k"])).toBe("v")
    } finally {
      await topology.stop()
    }
  }, 120_000)
})
