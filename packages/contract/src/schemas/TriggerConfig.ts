import { requirementLists } from "@microdcs/store"
import type { JsonObject } from "../Json.js"
import { arrayOf, closedObject, idText, integer, object, problemTexts, returnStatus, text } from "./Common.js"

/**
 * A trigger's configuration (`...config.trigger.v1`): "when an event of this type (and subject)
 * appears, start a job order of that work master". The store's trigger parser refuses any field
 * it does not know, so the schema is closed.
 */

/** A text the trigger parser takes: not blank, no control characters, at most 512 bytes. */
const triggerText = (description: string): JsonObject =>
  text(`${description} Not blank, no control characters, at most 512 bytes.`, { minLength: 1, pattern: "^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$" })

const requirements: JsonObject = closedObject(
  Object.fromEntries(requirementLists.map((list) => [list, arrayOf({ type: "object" }, { description: `The triggered job order's ${list}.` })])),
  [],
  { description: "The requirement lists the triggered job order carries, as a job order names them." }
)

export const triggerSchema: JsonObject = closedObject(
  {
    id: text("The trigger's id: a letter or digit, then letters, digits, `_`, `.`, `-`; at most 64.", { pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" }),
    scope: idText("The scope; may be left out, and must otherwise be the subject's."),
    type: triggerText("The CloudEvent type that fires it, exactly."),
    subject: triggerText("A pattern on the event's subject (`*` = any run of characters); absent: the event must belong to the trigger's scope."),
    workMasterId: idText("The work master of the job orders it starts (in the scope's work master list)."),
    priority: integer("The job orders' Priority."),
    requirements,
    enabled: { type: "boolean", description: "Default true." },
    version: { description: "Written by the store; accepted (a row shown with --json can be put back) and ignored." },
    updatedAt: { description: "Written by the store; accepted and ignored." }
  },
  ["id", "type", "workMasterId"],
  { description: "A trigger to store (PUT)." }
)

export const triggerDeleteSchema: JsonObject = object({ id: text("The trigger to remove.", { minLength: 1 }) }, ["id"], { description: "A trigger to remove (DELETE)." })

export const triggerReplySchema: JsonObject = closedObject(
  {
    ReturnStatus: returnStatus,
    ID: { type: "string" },
    Version: integer("The stored trigger's version after a PUT.", { minimum: 1 }),
    Removed: integer("1 when a DELETE removed it, 0 when there was none.", { minimum: 0 }),
    Problems: problemTexts
  },
  ["ReturnStatus"],
  { description: "The reply to a trigger configuration." }
)

/** `dag.triggers.changed`: a trigger edit, so every instance reloads its triggers. */
export const triggersChangedSchema: JsonObject = closedObject(
  {
    id: { type: "string" },
    scope: { type: "string" },
    change: { enum: ["put", "delete"] },
    version: integer("The version a put stored.", { minimum: 1 })
  },
  ["id", "scope", "change"],
  { description: "A trigger was stored or removed." }
)
