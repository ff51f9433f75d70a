import { randomBytes } from "node:crypto"

/**
 * A fresh execution id (execution-log.md §1): the job id, the start time and a random part, so a
 * job id that comes back after its retention ended never names an old execution.
 */
export const newExecutionId = (jobId: string, startedAtMs: number): string => `${jobId}.${startedAtMs}.${randomBytes(4).toString("hex")}`
