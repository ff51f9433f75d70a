import { randomUUID } from "node:crypto"
import { type KeyFamily, KeyPartError, type KeyParts, makeKeySchema } from "@microdcs/keyschema"
import { scriptKeys, sfcCompareAndSet } from "@microdcs/lua-scripts"
import { EVENT_LIFETIME_MS } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { Redis } from "iovalkey"
import { leaveUncounted } from "./SentCommands.js"

/** A state document and a command entry as the engine wrote them in a real run. */
export interface StateWriteSample {
  readonly doc: string
  readonly entry: ReadonlyArray<readonly [field: string, value: string]>
}

const OPS = Number(process.env["BENCH_LIMIT_OPS"] ?? 20000)
const JOB_STATES = 1000
const BATCH = 200
const BATCHES_IN_FLIGHT = 4

/**
 * The physical limit of a step: the engine's own state write (the SFC compare-and-set script,
 * one per step) called pipelined from a plain iovalkey client, with what a step writes: the
 * state document, the applied reply event, one command entry, the deadline and the active flag.
 * Ops/s; no engine can step faster than this on the server.
 */
export const stateWriteLimit = async (url: string, sample: StateWriteSample): Promise<number> => {
  const keys = makeKeySchema(randomPrefix("bench-limit"))
  if (keys instanceof KeyPartError) throw keys
  const scope = "bench"
  const key = <F extends KeyFamily>(family: F, parts: KeyParts<F>): string => {
    const built = keys.key(family, parts)
    if (built instanceof KeyPartError) throw built
    return built
  }
  const fixed = {
    work: key("sfcWork", { scope }),
    due: key("sfcDue", { scope }),
    active: key("sfcActive", { scope })
  }
  const nudgeChannel = key("nudge", { kind: "sfc" })
  const client = new Redis(url, { lazyConnect: true })
  leaveUncounted(client)
  await client.connect()
  try {
    await client.script("LOAD", sfcCompareAndSet.source)
    // Op i writes state i % JOB_STATES, version after version, as a job's steps would.
    const write = (pipeline: ReturnType<Redis["pipeline"]>, i: number) => {
      const jobId = `limit-${i % JOB_STATES}`
      const args = {
        expectedVersion: Math.floor(i / JOB_STATES),
        scope, jobId, op: randomUUID(), doc: sample.doc,
        due: Date.now() + 60_000, active: true, nudgeChannel,
        event: { key: key("sfcEvent", { scope, source: "urn:microdcs:station:in-process", id: randomUUID() }), lifetimeMs: EVENT_LIFETIME_MS },
        waitsJoin: [], waitsLeave: [], entries: [sample.entry]
      }
      const keysOf = scriptKeys(sfcCompareAndSet, { state: key("sfcState", { jobId }), ...fixed }, args)
      pipeline.evalsha(sfcCompareAndSet.sha1, keysOf.length, ...keysOf, ...sfcCompareAndSet.encodeArgs(args))
    }
    let next = 0
    const worker = async () => {
      while (next < OPS) {
        const pipeline = client.pipeline()
        for (let n = 0; n < BATCH && next < OPS; n++) write(pipeline, next++)
        const replies = (await pipeline.exec()) ?? []
        const failed = replies.find(([error, reply]) => error !== null || !Array.isArray(reply) || reply[0] !== "ok")
        if (failed) throw new Error(`state write limit: a write did not land: ${String(failed[0] ?? failed[1])}`)
      }
    }
    const start = performance.now()
    await Promise.all(Array.from({ length: BATCHES_IN_FLIGHT }, worker))
    return OPS / ((performance.now() - start) / 1000)
  } finally {
    await client.quit().catch(() => undefined)
  }
}

/**
 * The state document's bytes (job-0 at its end, as the engine wrote it) and the server time of
 * its write alone: the limit's inverse, one server thread saturated with nothing but CASes.
 */
export const printStateWrite = (sample: StateWriteSample, limit: number, steps: number): void => {
  const bytes = Buffer.byteLength(sample.doc, "utf8")
  console.log(`  state document of a finished ${steps}-step job: ${bytes} bytes; its CAS alone: ${(1e6 / limit).toFixed(1)} µs of server time per write (at the limit)`)
}
