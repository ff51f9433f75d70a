import { COMMIT_KEYS_FIELD, type ExecutionLogKey } from "@microdcs/store"

/** Why a commit request was refused; bounded, so it can tag a metric. */
export type RefusalReason = "foreign-key" | "malformed"

/** What the storage role makes of one commit request: the keys to copy, or a refusal naming the key. */
export type CommitJudgement =
  | { readonly _tag: "Accepted"; readonly keys: ReadonlyArray<string> }
  | { readonly _tag: "Refused"; readonly reason: RefusalReason; readonly key: string | undefined; readonly message: string }

/**
 * Judges one commit request (a stream entry's fields). The key is the whole authority:
 * one key that is not an execution record or node of this island's log,
 * `{prefix}:dag:log:...`, refuses the whole request, so nothing of it is written.
 */
export const judgeCommit = (
  fields: Readonly<Record<string, string>>,
  parseKey: (key: string) => ExecutionLogKey | undefined
): CommitJudgement => {
  const text = fields[COMMIT_KEYS_FIELD]
  if (text === undefined) return { _tag: "Refused", reason: "malformed", key: undefined, message: `no '${COMMIT_KEYS_FIELD}' field` }
  let keys: unknown
  try {
    keys = JSON.parse(text)
  } catch {
    return { _tag: "Refused", reason: "malformed", key: undefined, message: `'${COMMIT_KEYS_FIELD}' is no JSON array` }
  }
  if (!Array.isArray(keys) || keys.length === 0) {
    return { _tag: "Refused", reason: "malformed", key: undefined, message: `'${COMMIT_KEYS_FIELD}' is no non-empty JSON array` }
  }
  for (const key of keys) {
    if (typeof key !== "string") return { _tag: "Refused", reason: "malformed", key: undefined, message: `a key is no string: ${JSON.stringify(key)}` }
    if (parseKey(key) === undefined) {
      return { _tag: "Refused", reason: "foreign-key", key, message: `'${key}' is outside this island's execution log` }
    }
  }
  return { _tag: "Accepted", keys: keys as ReadonlyArray<string> }
}
