import { asArray, asOptionalText, asText, UnexpectedReply } from "./Reply.js"
import { defineScript } from "./ScriptDescriptor.js"
import { decodeWrongType, type WrongTypeReply } from "./WrongTypeReply.js"

export interface TriggerCasArgs {
  readonly id: string
  /** The row the caller read, as stored; "" when the trigger must not exist yet. */
  readonly expected: string
  /** The row to store; "" deletes the trigger. */
  readonly row: string
  readonly nudgeChannel: string
  /** The nudge message: the edit as the store describes it (JSON: the trigger, its scope, the change, the edit's id). */
  readonly message: string
}

export type TriggerCasReply =
  | { readonly status: "ok" }
  /** The stored row moved on since the caller read it (`null` when it is gone); nothing written. */
  | { readonly status: "conflict"; readonly stored: string | null }
  | WrongTypeReply

/** Compare-and-set of one trigger row in `dag:triggers`, publishing `nudge:triggers` on a write. */
export const triggerCas = defineScript({
  file: "trigger-cas-1.lua",
  keys: ["triggers"],
  encodeArgs: (a: TriggerCasArgs) => [a.id, a.expected, a.row, a.nudgeChannel, a.message],
  decodeReply: (raw): TriggerCasReply => {
    const reply = asArray("trigger-cas", raw)
    const status = asText("trigger-cas", reply[0])
    if (status === "ok") return { status }
    if (status === "conflict") return { status, stored: asOptionalText("trigger-cas", reply[1] ?? null) }
    if (status === "wrongtype") return decodeWrongType("trigger-cas", reply)
    throw new UnexpectedReply("trigger-cas", raw)
  }
})
