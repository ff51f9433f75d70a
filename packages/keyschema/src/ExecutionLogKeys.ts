import { KeyPartError } from "./KeyPart.js"
import type { PartRule } from "./PartRule.js"

/**
 * The width of a node's sequence number in its key (`dag:log:{executionId}:n:{seq}`): zero-padded
 * so that a key range in byte order is the order in which the nodes ran.
 * One contract for the engine that composes the key and for storage that reads the range: this is
 * the only place the width is written down.
 */
export const NODE_SEQ_DIGITS = 6

/** The largest sequence number a node key can carry (six digits). */
export const MAX_NODE_SEQ = 10 ** NODE_SEQ_DIGITS - 1

const SEQ_PART = new RegExp(`^[0-9]{${NODE_SEQ_DIGITS}}$`)

/** The part rule of `{seq}`: exactly six decimal digits, so no unpadded key is ever built or parsed. */
export const nodeSeqRule: PartRule = {
  accepts: (value) => SEQ_PART.test(value),
  examples: ["000000", "000009", "000010", "999999"],
  description: `a node sequence number of ${NODE_SEQ_DIGITS} digits, zero-padded (nodeSeqPart)`
}

/** Whether `seq` can be a node's sequence number: an integer from 0 to {@link MAX_NODE_SEQ}. */
export const isNodeSeq = (seq: number): boolean => Number.isSafeInteger(seq) && seq >= 0 && seq <= MAX_NODE_SEQ

/**
 * The `{seq}` part of a node key: `9` → `"000009"`. A sequence number that is not an integer
 * from 0 to {@link MAX_NODE_SEQ} is a `KeyPartError` (never a wider, mis-sorting key).
 */
export const nodeSeqPart = (seq: number): string | KeyPartError =>
  isNodeSeq(seq)
    ? String(seq).padStart(NODE_SEQ_DIGITS, "0")
    : new KeyPartError("not-allowed", "seq", `seq ${seq} is not an integer from 0 to ${MAX_NODE_SEQ}`)

/** The sequence number of a `{seq}` part, or `undefined` when it is not six digits. */
export const nodeSeqOf = (part: string): number | undefined => (SEQ_PART.test(part) ? Number(part) : undefined)
