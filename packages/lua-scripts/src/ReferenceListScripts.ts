import { decodeWrongType, type WrongTypeReply } from "./WrongTypeReply.js"
import { asArray, asInteger, asText, UnexpectedReply } from "./Reply.js"
import { defineScript } from "./ScriptDescriptor.js"

export interface AddReferencesArgs {
  readonly scope: string
  readonly nudgeChannel: string
  /** At least one id: SADD without members is an error. */
  readonly ids: ReadonlyArray<string>
}

export type AddReferencesReply = { readonly status: "ok"; readonly added: number } | WrongTypeReply

/** Adds ids to `ref:{kind}:{scope}` and registers the scope in `scopes`, atomically. */
export const addReferences = defineScript({
  file: "add-references-2.lua",
  keys: ["list", "scopes"],
  encodeArgs: (a: AddReferencesArgs) => [a.scope, a.nudgeChannel, ...a.ids],
  decodeReply: (raw): AddReferencesReply => {
    const reply = asArray("add-references", raw)
    const status = asText("add-references", reply[0])
    if (status === "ok") return { status, added: asInteger("add-references", reply[1]) }
    if (status === "wrongtype") return decodeWrongType("add-references", reply)
    throw new UnexpectedReply("add-references", raw)
  }
})
