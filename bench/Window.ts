import { type ServerLoad, type ServerProbe } from "./ServerProbe.js"
import { sentByCommand, sentCommands } from "./SentCommands.js"

/** What one measured stretch of work cost, on the server and in this process. */
export interface WindowFigures {
  readonly seconds: number
  readonly server: ServerLoad
  /** Commands this process sent (the probe's excluded). */
  readonly sent: number
  /** The same per command name, largest first. */
  readonly sentByCommand: ReadonlyArray<readonly [name: string, calls: number]>
  /** `process.cpuUsage()` user + system, µs. */
  readonly nodeCpuMicros: number
}

/** Opens a measuring window; `close` ends it. */
export const openWindow = async (probe: ServerProbe): Promise<{ readonly close: () => Promise<WindowFigures> }> => {
  const endServer = await probe.start()
  const sent = sentCommands()
  const sentBefore = sentByCommand()
  const cpu = process.cpuUsage()
  const start = performance.now()
  return {
    close: async () => {
      const seconds = (performance.now() - start) / 1000
      const used = process.cpuUsage(cpu)
      const sentInside = sentCommands() - sent
      const byName = [...sentByCommand()]
        .map(([name, calls]) => [name, calls - (sentBefore.get(name) ?? 0)] as const)
        .filter(([, calls]) => calls > 0)
        .sort((a, b) => b[1] - a[1])
      return { seconds, server: await endServer(), sent: sentInside, sentByCommand: byName, nodeCpuMicros: used.user + used.system }
    }
  }
}
