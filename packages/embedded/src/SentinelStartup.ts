import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ChildServer, startChildServer } from "./ChildServer.js"
import { fieldsOf, infoFields, type RespReply, respCommand } from "./Resp.js"
import { pingValkey, startValkeyServer, type ValkeyServer, valkeyServerBin } from "./ValkeyServer.js"
import { until } from "./Until.js"

/** What starting a sentinel topology needs, its options with their defaults applied. */
export interface SentinelSettings {
  readonly masterName: string
  readonly replicaCount: number
  readonly sentinelCount: number
  readonly downAfterMs: number
  readonly failoverTimeoutMs: number
  readonly readyTimeoutMs: number
}

export const asArray = (reply: RespReply): ReadonlyArray<RespReply> => (Array.isArray(reply) ? reply : [])

/** Keeps full syncs quick in tests: no diskless-sync delay waiting for more replicas. */
export const dataNodeArgs = ["--repl-diskless-sync-delay", "0"]

const waitForReplicaInSync = (replica: ValkeyServer, readyTimeoutMs: number) =>
  until(
    `replica ${replica.port} in sync`,
    async () => {
      const info = infoFields(await respCommand(replica.host, replica.port, ["INFO", "replication"]))
      return info["master_link_status"] === "up" ? true : `master_link_status ${info["master_link_status"]}`
    },
    readyTimeoutMs
  )

/** Starts the first primary and its replicas into `servers`, then waits until each replica is in sync. */
export const startDataNodes = async (settings: SentinelSettings, servers: Array<ValkeyServer>): Promise<ValkeyServer> => {
  const first = await startValkeyServer({ extraArgs: dataNodeArgs })
  servers.push(first)
  for (let i = 0; i < settings.replicaCount; i++) {
    servers.push(await startValkeyServer({ extraArgs: [...dataNodeArgs, "--replicaof", first.host, String(first.port)] }))
  }
  for (const replica of servers.slice(1)) await waitForReplicaInSync(replica, settings.readyTimeoutMs)
  return first
}

const sentinelConfig = (settings: SentinelSettings, primary: ValkeyServer, port: number, dir: string): string => {
  const { masterName } = settings
  const quorum = Math.floor(settings.sentinelCount / 2) + 1
  return [
    `port ${port}`,
    "bind 127.0.0.1",
    "protected-mode no",
    "daemonize no",
    `dir ${dir}`,
    'logfile ""',
    "loglevel warning",
    `sentinel monitor ${masterName} ${primary.host} ${primary.port} ${quorum}`,
    `sentinel down-after-milliseconds ${masterName} ${settings.downAfterMs}`,
    `sentinel failover-timeout ${masterName} ${settings.failoverTimeoutMs}`,
    `sentinel parallel-syncs ${masterName} 1`,
    ""
  ].join("\n")
}

const startSentinel = (settings: SentinelSettings, primary: ValkeyServer): Promise<ChildServer> =>
  startChildServer({
    name: "sentinel",
    bin: valkeyServerBin(),
    args: (port, dir) => {
      const config = join(dir, "sentinel.conf")
      writeFileSync(config, sentinelConfig(settings, primary, port, dir))
      // Sentinel rewrites its config file, so it lives in the server's own temp dir.
      return [config, "--sentinel"]
    },
    probe: pingValkey
  })

/** Why `sentinel` is not ready yet, or `true` once it is. */
const sentinelReadiness = async (settings: SentinelSettings, sentinel: ChildServer): Promise<true | string> => {
  const { masterName, sentinelCount, replicaCount } = settings
  const known = asArray(await respCommand(sentinel.host, sentinel.port, ["SENTINEL", "SENTINELS", masterName])).length
  if (known < sentinelCount - 1) return `knows ${known} of ${sentinelCount - 1} other sentinels`
  const replicas = asArray(await respCommand(sentinel.host, sentinel.port, ["SENTINEL", "REPLICAS", masterName])).map(fieldsOf)
  const healthy = replicas.filter((r) => r["flags"] === "slave" && r["master-link-status"] === "ok").length
  if (healthy < replicaCount) return `sees ${healthy} of ${replicaCount} replicas healthy`
  await respCommand(sentinel.host, sentinel.port, ["SENTINEL", "CKQUORUM", masterName])
  return true
}

/** Starts the sentinels watching `primary` into `sentinels`, then waits until each is ready. */
export const startSentinels = async (
  settings: SentinelSettings,
  primary: ValkeyServer,
  sentinels: Array<ChildServer>
): Promise<void> => {
  for (let i = 0; i < settings.sentinelCount; i++) sentinels.push(await startSentinel(settings, primary))
  // Ready when every sentinel knows the others and every replica: only then can a failover be
  // authorized and find a replica to promote.
  for (const sentinel of sentinels) {
    await until(`sentinel ${sentinel.port} ready`, () => sentinelReadiness(settings, sentinel), settings.readyTimeoutMs)
  }
}
