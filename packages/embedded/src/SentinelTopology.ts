import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ChildServer, startChildServer } from "./ChildServer.js"
import { fieldsOf, infoFields, type RespReply, respCommand } from "./Resp.js"
import { pingValkey, startValkeyServer, type ValkeyServer, valkeyServerBin } from "./ValkeyServer.js"

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls `check` until it gives a value; rejects with the last reason after `timeoutMs`. */
const until = async <A>(what: string, check: () => Promise<A | string>, timeoutMs: number): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let reason = "not checked yet"
  while (Date.now() < deadline) {
    try {
      const result = await check()
      if (typeof result !== "string") return result
      reason = result
    } catch (error) {
      reason = error instanceof Error ? error.message : String(error)
    }
    await sleep(100)
  }
  throw new Error(`${what} within ${timeoutMs} ms: ${reason}`)
}

const asArray = (reply: RespReply): ReadonlyArray<RespReply> => (Array.isArray(reply) ? reply : [])

/** Keeps full syncs quick in tests: no diskless-sync delay waiting for more replicas. */
const dataNodeArgs = ["--repl-diskless-sync-delay", "0"]

export const startSentinelTopology = async (options: SentinelTopologyOptions = {}): Promise<SentinelTopology> => {
  const masterName = options.masterName ?? "mymaster"
  const replicaCount = options.replicas ?? 1
  const sentinelCount = options.sentinels ?? 3
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000
  const quorum = Math.floor(sentinelCount / 2) + 1
  const servers: Array<ValkeyServer> = []
  const sentinels: Array<ChildServer> = []
  const stop = async () => {
    // A frozen node would ignore SIGTERM until the kill after 3 s.
    for (const s of servers) s.process.kill("SIGCONT")
    await Promise.all(sentinels.map((s) => s.stop()))
    await Promise.all(servers.map((s) => s.stop()))
  }

  try {
    const first = await startValkeyServer({ extraArgs: dataNodeArgs })
    servers.push(first)
    for (let i = 0; i < replicaCount; i++) {
      servers.push(await startValkeyServer({ extraArgs: [...dataNodeArgs, "--replicaof", first.host, String(first.port)] }))
    }
    for (const replica of servers.slice(1)) {
      await until(
        `replica ${replica.port} in sync`,
        async () => {
          const info = infoFields(await respCommand(replica.host, replica.port, ["INFO", "replication"]))
          return info["master_link_status"] === "up" ? true : `master_link_status ${info["master_link_status"]}`
        },
        readyTimeoutMs
      )
    }
    for (let i = 0; i < sentinelCount; i++) {
      sentinels.push(
        await startChildServer({
          name: "sentinel",
          bin: valkeyServerBin(),
          args: (port, dir) => {
            const config = join(dir, "sentinel.conf")
            writeFileSync(
              config,
              [
                `port ${port}`,
                "bind 127.0.0.1",
                "protected-mode no",
                "daemonize no",
                `dir ${dir}`,
                'logfile ""',
                "loglevel warning",
                `sentinel monitor ${masterName} ${first.host} ${first.port} ${quorum}`,
                `sentinel down-after-milliseconds ${masterName} ${options.downAfterMs ?? 1000}`,
                `sentinel failover-timeout ${masterName} ${options.failoverTimeoutMs ?? 10_000}`,
                `sentinel parallel-syncs ${masterName} 1`,
                ""
              ].join("\n")
            )
            // Sentinel rewrites its config file, so it lives in the server's own temp dir.
            return [config, "--sentinel"]
          },
          probe: pingValkey
        })
      )
    }
    // Ready when every sentinel knows the others and every replica: only then can a failover be
    // authorized and find a replica to promote.
    for (const sentinel of sentinels) {
      await until(
        `sentinel ${sentinel.port} ready`,
        async () => {
          const known = asArray(await respCommand(sentinel.host, sentinel.port, ["SENTINEL", "SENTINELS", masterName])).length
          if (known < sentinelCount - 1) return `knows ${known} of ${sentinelCount - 1} other sentinels`
          const replicas = asArray(await respCommand(sentinel.host, sentinel.port, ["SENTINEL", "REPLICAS", masterName])).map(fieldsOf)
          const healthy = replicas.filter((r) => r["flags"] === "slave" && r["master-link-status"] === "ok").length
          if (healthy < replicaCount) return `sees ${healthy} of ${replicaCount} replicas healthy`
          await respCommand(sentinel.host, sentinel.port, ["SENTINEL", "CKQUORUM", masterName])
          return true
        },
        readyTimeoutMs
      )
    }
  } catch (error) {
    await stop()
    throw error
  }

  const primaryFrom = async (sentinel: ChildServer): Promise<Endpoint> => {
    const [host, port] = asArray(await respCommand(sentinel.host, sentinel.port, ["SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName]))
    return { host: String(host), port: Number(port) }
  }

  const primary = async (): Promise<Endpoint> => {
    let last: unknown
    for (const sentinel of sentinels) {
      try {
        return await primaryFrom(sentinel)
      } catch (error) {
        last = error
      }
    }
    throw new Error(`no sentinel answered: ${last instanceof Error ? last.message : String(last)}`)
  }

  const roleOf = async (node: Endpoint): Promise<Readonly<Record<string, string>>> =>
    infoFields(await respCommand(node.host, node.port, ["INFO", "replication"]))

  const failover = async () => {
    await until(
      "SENTINEL FAILOVER accepted",
      async () => {
        await respCommand(sentinels[0]!.host, sentinels[0]!.port, ["SENTINEL", "FAILOVER", masterName])
        return true
      },
      readyTimeoutMs
    )
  }

  const waitForNewPrimary = (oldPort: number, timeoutMs = readyTimeoutMs) =>
    until(
      `a primary other than ${oldPort}`,
      async () => {
        const named = await Promise.all(sentinels.map(primaryFrom))
        const other = named.find((n) => n.port !== oldPort)
        if (!other || named.some((n) => n.port !== other.port)) return `sentinels name ${named.map((n) => n.port).join(", ")}`
        const role = (await roleOf(other))["role"]
        return role === "master" ? other : `${other.port} is still ${role}`
      },
      timeoutMs
    )

  const waitForReplicas = (count: number, timeoutMs = readyTimeoutMs) =>
    until(
      `${count} replicas in sync with the primary`,
      async () => {
        const current = await primary()
        const info = await roleOf(current)
        if (info["role"] !== "master") return `${current.port} is ${info["role"]}`
        const online = Object.entries(info).filter(([k, v]) => /^slave\d+$/.test(k) && v.includes("state=online")).length
        return online >= count ? current : `${online} of ${count} replicas online`
      },
      timeoutMs
    )

  const serverOn = (port: number): ValkeyServer => {
    const server = servers.find((s) => s.port === port)
    if (!server) throw new Error(`no data node on port ${port}`)
    return server
  }

  const kill = async (port: number) => {
    const { process: child } = serverOn(port)
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGKILL")
    await exited
  }

  const freeze = (port: number) => {
    serverOn(port).process.kill("SIGSTOP")
  }
  const thaw = (port: number) => {
    serverOn(port).process.kill("SIGCONT")
  }

  const restartAsReplica = async (port: number) => {
    const old = serverOn(port)
    await old.stop()
    const current = await primary()
    const again = await startValkeyServer({ port, extraArgs: [...dataNodeArgs, "--replicaof", current.host, String(current.port)] })
    servers[servers.indexOf(old)] = again
    return again
  }

  return {
    masterName,
    sentinels,
    sentinelNodes: sentinels.map((s) => ({ host: s.host, port: s.port })),
    servers: () => [...servers],
    primary,
    failover,
    waitForNewPrimary,
    waitForReplicas,
    kill,
    freeze,
    thaw,
    restartAsReplica,
    stop
  }
}
