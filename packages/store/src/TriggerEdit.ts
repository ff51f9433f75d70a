/**
 * One trigger edit as its nudge (`nudge:triggers`) describes it, so every instance knows what
 * changed and whether the writer announces it on the bus itself. A daemon announces the edits it
 * makes; an edit from a process without a bus (the admin CLI) is announced by one daemon that
 * sees its nudge (`TriggerStore.claimAnnouncement`).
 */
export interface TriggerEdit {
  /** The trigger. */
  readonly id: string
  /** Its scope after the edit (a delete: the scope it had). */
  readonly scope: string
  readonly change: "put" | "delete"
  /** The version a put stored. */
  readonly version?: number | undefined
  /** This edit's own id (a new UUID per write): what an announcement is claimed by. */
  readonly edit: string
  /** Whether the writer announces the edit itself; when false, a listener relays it. */
  readonly announced: boolean
}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> => typeof value === "object" && value !== null && !Array.isArray(value)

export const triggerEditMessage = (edit: TriggerEdit): string => JSON.stringify(edit)

/** The edit a nudge message describes; `undefined` for a message that is none (another version's plain scope). */
export const parseTriggerEdit = (message: string): TriggerEdit | undefined => {
  let value: unknown
  try {
    value = JSON.parse(message)
  } catch {
    return undefined
  }
  if (!isObject(value)) return undefined
  const { id, scope, change, version, edit, announced } = value
  if (typeof id !== "string" || typeof scope !== "string" || typeof edit !== "string" || edit === "" || typeof announced !== "boolean") return undefined
  if (change !== "put" && change !== "delete") return undefined
  if (version !== undefined && !Number.isSafeInteger(version)) return undefined
  return { id, scope, change, ...(version === undefined ? {} : { version: version as number }), edit, announced }
}
