import type { ChildServer } from "./ChildServer.js"
import { infoFields, respCommand } from "./Resp.js"
import { asArray, dataNodeArgs, type SentinelSettings, startDataNodes, startSentinels } from "./SentinelStartup.js"
import { until } from "./Until.js"
import { startValkeyServer, type ValkeyServer } from "./ValkeyServer.js"

/** Where a server listens. */
export interface Endpoint {
  readonly host: string
  readonly port: number
}

export interface SentinelTopologyOptions {
  /** Replicas of the first primary (default 1). */
  readonly replicas?: number
  /** Sentinels watching it (default 3; quorum is a majority). */
  readonly sentinels?: number
  /** The master name the sentinels monitor (default `mymaster`). */
  readonly masterName?: string
  /** `sentinel down-after-milliseconds` (default 1000): how soon a dead primary is noticed. */
  readonly downAfterMs?: number
  /** `sentinel failover-timeout` (default 10000). */
  readonly failoverTimeoutMs?: number
  /** How long to wait for the topology to be ready: replicas in sync, sentinels aware of each other (default 60 s). */
  readonly readyTimeoutMs?: number
}

/**
 * A primary, its replicas and the sentinels watching them, each a child process on a free
 * loopback port: enough to fail over for real in a test. Timeouts are generous, since sentinel
 * discovery (hello messages every 2 s, INFO every 10 s) is slow on a loaded machine.
 */
export interface SentinelTopology {
  readonly masterName: string
  readonly sentinels: ReadonlyArray<ChildServer>
  /** The sentinels as a client expects them (`ValkeyOptions.sentinels`). */
  readonly sentinelNodes: ReadonlyArray<Endpoint>
  /** The data nodes, the first primary first; a restarted node replaces its entry. */
  readonly servers: () => ReadonlyArray<ValkeyServer>
  /** The primary as the first answering sentinel reports it. */
  readonly primary: () => Promise<Endpoint>
  /** `SENTINEL FAILOVER`: promotes a replica while the old primary stays up. */
  readonly failover: () => Promise<void>
  /** Resolves once every sentinel names a primary other than `oldPort` and that node is a primary. */
  readonly waitForNewPrimary: (oldPort: number, timeoutMs?: number) => Promise<Endpoint>
  /** Resolves once the current primary has `count` replicas with their link up. */
  readonly waitForReplicas: (count: number, timeoutMs?: number) => Promise<Endpoint>
  /** `kill -9` of the data node on `port`. */
  readonly kill: (port: number) => Promise<void>
  /** SIGSTOP / SIGCONT of the data node on `port`: a node that is there but does not answer. */
  readonly freeze: (port: number) => void
  readonly thaw: (port: number) => void
  /** Starts an empty data node on `port` again, as a replica of the current primary. */
  readonly restartAsReplica: (port: number) => Promise<ValkeyServer>
  /** Stops the sentinels, then every data node. */
  readonly stop: () => Promise<void>
}

/** The running nodes of a topology; a restarted data node replaces its entry in `servers`. */
interface TopologyNodes {
  readonly settings: SentinelSettings
  readonly servers: Array<ValkeyServer>
  readonly sentinels: Array<ChildServer>
}

const settingsOf = (options: SentinelTopologyOptions): SentinelSettings => ({
  masterName: options.masterName ?? "mymaster",
  replicaCount: options.replicas ?? 1,
  sentinelCount: options.sentinels ?? 3,
  downAfterMs: options.downAfterMs ?? 1000,
  failoverTimeoutMs: options.failoverTimeoutMs ?? 10_000,
  readyTimeoutMs: options.readyTimeoutMs ?? 60_000
})

const stopNodes = async ({ servers, sentinels }: TopologyNodes) => {
  // A frozen node would ignore SIGTERM until the kill after 3 s.
  for (const s of servers) s.process.kill("SIGCONT")
  await Promise.all(sentinels.map((s) => s.stop()))
  await Promise.all(servers.map((s) => s.stop()))
}

const primaryFrom = async (nodes: TopologyNodes, sentinel: ChildServer): Promise<Endpoint> => {
  const command = ["SENTINEL", "GET-MASTER-ADDR-BY-NAME", nodes.settings.masterName]
  const [host, port] = asArray(await respCommand(sentinel.host, sentinel.port, command))
  return { host: String(host), port: Number(port) }
}

const primaryOf = async (nodes: TopologyNodes): Promise<Endpoint> => {
  let last: unknown
  for (const sentinel of nodes.sentinels) {
    try {
      return await primaryFrom(nodes, sentinel)
    } catch (error) {
      last = error
    }
  }
  throw new Error(`no sentinel answered: ${last instanceof Error ? last.message : String(last)}`)
}

const roleOf = async (node: Endpoint): Promise<Readonly<Record<string, string>>> =>
  infoFields(await respCommand(node.host, node.port, ["INFO", "replication"]))

const failover = async (nodes: TopologyNodes) => {
  const [first] = nodes.sentinels
  await until(
    "SENTINEL FAILOVER accepted",
    async () => {
      await respCommand(first!.host, first!.port, ["SENTINEL", "FAILOVER", nodes.settings.masterName])
      return true
    },
    nodes.settings.readyTimeoutMs
  )
}

const waitForNewPrimary = (nodes: TopologyNodes, oldPort: number, timeoutMs: number) =>
  until(
    `a primary other than ${oldPort}`,
    async () => {
      const named = await Promise.all(nodes.sentinels.map((sentinel) => primaryFrom(nodes, sentinel)))
      const other = named.find((n) => n.port !== oldPort)
      if (!other || named.some((n) => n.port !== other.port)) return `sentinels name ${named.map((n) => n.port).join(", ")}`
      const role = (await roleOf(other))["role"]
      return role === "master" ? other : `${other.port} is still ${role}`
    },
    timeoutMs
  )

const waitForReplicas = (nodes: TopologyNodes, count: number, timeoutMs: number) =>
  until(
    `${count} replicas in sync with the primary`,
    async () => {
      const current = await primaryOf(nodes)
      const info = await roleOf(current)
      if (info["role"] !== "master") return `${current.port} is ${info["role"]}`
      const online = Object.entries(info).filter(([k, v]) => /^slave\d+$/.test(k) && v.includes("state=online")).length
      return online >= count ? current : `${online} of ${count} replicas online`
    },
    timeoutMs
  )

const serverOn = (nodes: TopologyNodes, port: number): ValkeyServer => {
  const server = nodes.servers.find((s) => s.port === port)
  if (!server) throw new Error(`no data node on port ${port}`)
  return server
}

const kill = async (nodes: TopologyNodes, port: number) => {
  const { process: child } = serverOn(nodes, port)
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once("exit", resolve))
  child.kill("SIGKILL")
  await exited
}

const restartAsReplica = async (nodes: TopologyNodes, port: number) => {
  const old = serverOn(nodes, port)
  await old.stop()
  const current = await primaryOf(nodes)
  const again = await startValkeyServer({ port, extraArgs: [...dataNodeArgs, "--replicaof", current.host, String(current.port)] })
  nodes.servers[nodes.servers.indexOf(old)] = again
  return again
}

const topologyOver = (nodes: TopologyNodes): SentinelTopology => {
  const { settings, servers, sentinels } = nodes
  return {
    masterName: settings.masterName,
    sentinels,
    sentinelNodes: sentinels.map((s) => ({ host: s.host, port: s.port })),
    servers: () => [...servers],
    primary: () => primaryOf(nodes),
    failover: () => failover(nodes),
    waitForNewPrimary: (oldPort, timeoutMs = settings.readyTimeoutMs) => waitForNewPrimary(nodes, oldPort, timeoutMs),
    waitForReplicas: (count, timeoutMs = settings.readyTimeoutMs) => waitForReplicas(nodes, count, timeoutMs),
    kill: (port) => kill(nodes, port),
    freeze: (port) => void serverOn(nodes, port).process.kill("SIGSTOP"),
    thaw: (port) => void serverOn(nodes, port).process.kill("SIGCONT"),
    restartAsReplica: (port) => restartAsReplica(nodes, port),
    stop: () => stopNodes(nodes)
  }
}

export const startSentinelTopology = async (options: SentinelTopologyOptions = {}): Promise<SentinelTopology> => {
  const nodes: TopologyNodes = { settings: settingsOf(options), servers: [], sentinels: [] }
  try {
    const first = await startDataNodes(nodes.settings, nodes.servers)
    await startSentinels(nodes.settings, first, nodes.sentinels)
  } catch (error) {
    await stopNodes(nodes)
    throw error
  }
  return topologyOver(nodes)
}
