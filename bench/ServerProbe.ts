import { Redis } from "iovalkey"
import { leaveUncounted } from "./SentCommands.js"

/** What the server has executed so far: calls per command (script-internal calls included) and CPU. */
interface ServerCounters {
  readonly calls: ReadonlyMap<string, number>
  /** `used_cpu_sys + used_cpu_user`, seconds. */
  readonly cpuSeconds: number
}

/** The server's work between two snapshots, the probe's own calls taken out. */
export interface ServerLoad {
  /** Every command the server executed, those inside Lua scripts included. */
  readonly commands: number
  /** Calls per command name, largest first. */
  readonly byCommand: ReadonlyArray<readonly [name: string, calls: number]>
  readonly cpuMicros: number
}

const parseCounters = (text: string): ServerCounters => {
  const calls = new Map<string, number>()
  let cpuSeconds = 0
  for (const raw of text.split("\n")) {
    const line = raw.trim()
    const stat = /^cmdstat_([^:]+):calls=(\d+)/.exec(line)
    if (stat) calls.set(stat[1]!, Number(stat[2]))
    const cpu = /^used_cpu_(sys|user):([\d.]+)$/.exec(line)
    if (cpu) cpuSeconds += Number(cpu[2])
  }
  return { calls, cpuSeconds }
}

/**
 * The benchmark's measuring connection: reads `INFO commandstats cpu` and polls for completion,
 * and keeps a tally of its own calls so they can be taken out of the server's deltas. Its
 * commands are not in {@link sentCommands}.
 */
export class ServerProbe {
  private readonly own = new Map<string, number>()

  private constructor(readonly client: Redis) {
    leaveUncounted(client)
  }

  static async connect(url: string): Promise<ServerProbe> {
    const client = new Redis(url, { lazyConnect: true, connectionName: "bench-probe" })
    await client.connect()
    return new ServerProbe(client)
  }

  private tally(name: string) {
    this.own.set(name, (this.own.get(name) ?? 0) + 1)
  }

  /** SCARD, counted as the probe's own. */
  async scard(key: string): Promise<number> {
    this.tally("scard")
    return this.client.scard(key)
  }

  /** "redis 7.0.15" or "valkey 8.0.1". */
  async serverVersion(): Promise<string> {
    const text = await this.client.info("server")
    const valkey = /valkey_version:(\S+)/.exec(text)?.[1]
    return valkey ? `valkey ${valkey}` : `redis ${/redis_version:(\S+)/.exec(text)?.[1] ?? "?"}`
  }

  /** Starts a window; the returned function ends it and gives the server's work inside it. */
  async start(): Promise<() => Promise<ServerLoad>> {
    const before = parseCounters(String(await this.client.call("INFO", "commandstats", "cpu")))
    // This INFO is counted in the next snapshot (a command's stats are updated after it replies).
    this.own.clear()
    this.tally("info")
    return async () => {
      const after = parseCounters(String(await this.client.call("INFO", "commandstats", "cpu")))
      const byCommand: Array<readonly [string, number]> = []
      for (const [name, calls] of after.calls) {
        const delta = calls - (before.calls.get(name) ?? 0) - (this.own.get(name) ?? 0)
        if (delta > 0) byCommand.push([name, delta])
      }
      byCommand.sort((a, b) => b[1] - a[1])
      return {
        commands: byCommand.reduce((sum, [, calls]) => sum + calls, 0),
        byCommand,
        cpuMicros: (after.cpuSeconds - before.cpuSeconds) * 1e6
      }
    }
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => undefined)
  }
}
