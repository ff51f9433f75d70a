import { Schema } from "effect"

/**
 * The fields of a sub-recipe action (recipe schema v1.1.0, `Interaction: "recipe"`): it runs the
 * recipe of another work master as a child execution (ISA-88: procedure → unit procedure → operation).
 */
export const subRecipeFields = {
  /** The work master whose recipe runs as the child execution. */
  WorkMasterID: Schema.optionalKey(Schema.NonEmptyString),
  /** The digest the child's recipe must have (absent: the stored work master's current recipe). */
  Digest: Schema.optionalKey(Schema.NonEmptyString)
}
