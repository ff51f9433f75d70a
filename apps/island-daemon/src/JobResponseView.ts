import { Result } from "effect"
import { decodeJobResponseText } from "@microdcs/job-state"

/**
 * A stored job response as the console and the API show it: the document in the current form
 * (one the previous release stored is upgraded), or, when it does not decode, as stored (its JSON,
 * else its text) with every problem, so a damaged document is shown, never hidden.
 */
export interface JobResponseView {
  readonly document: unknown
  readonly problems: ReadonlyArray<string> | null
}

const asStored = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export const jobResponseView = (doc: string): JobResponseView => {
  const decoded = decodeJobResponseText(doc)
  return Result.isSuccess(decoded) ? { document: decoded.success, problems: null } : { document: asStored(doc), problems: decoded.failure.problems }
}
