import { randomFillSync } from "node:crypto"

/** Random bytes drawn ahead, so a job's start costs no call into the crypto binding of its own. */
const POOL_BYTES = 4096
const pool = Buffer.alloc(POOL_BYTES)
let used = POOL_BYTES

const randomHex4 = (): string => {
  if (used + 4 > POOL_BYTES) {
    randomFillSync(pool)
    used = 0
  }
  used += 4
  return pool.toString("hex", used - 4, used)
}

/**
 * A fresh execution id: the job id, the start time and a random part, so a
 * job id that comes back after its retention ended never names an old execution.
 */
export const newExecutionId = (jobId: string, startedAtMs: number): string => `${jobId}.${startedAtMs}.${randomHex4()}`
