import { Effect, Schema, SchemaGetter, SchemaIssue } from "effect"
import { JsonObject } from "./JsonObject.js"

/** `timeout_seconds` → `TimeoutSeconds`, `initial` → `Initial` (camelCase `typeId` maps too). */
const pascalCase = (key: string): string =>
  key
    .split("_")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("")

/**
 * Wraps an element struct so its input may use snake_case field names while its output (encode)
 * is always PascalCase. Only names that map onto a field of the struct are renamed; a field given
 * both ways is a problem rather than a silent choice.
 */
export const acceptingSnakeCase = <Fields extends Schema.Struct.Fields>(identifier: string, struct: Schema.Struct<Fields>) => {
  const fields = new Set(Object.keys(struct.fields))
  const renamed = JsonObject.pipe(Schema.decodeTo(JsonObject, {
    decode: SchemaGetter.transformEffect((input: { readonly [x: string]: unknown }) => {
      const output: Record<string, unknown> = {}
      const givenAs = new Map<string, string>()
      for (const [key, value] of Object.entries(input)) {
        const target = fields.has(key) ? key : pascalCase(key)
        if (!fields.has(target)) continue // excess fields are ignored, as the struct would
        const earlier = givenAs.get(target)
        if (earlier !== undefined) {
          return Effect.fail(new SchemaIssue.InvalidValue({ message: `${target} is given twice (as ${earlier} and ${key})` }))
        }
        givenAs.set(target, key)
        output[target] = value
      }
      return Effect.succeed(output)
    }),
    encode: SchemaGetter.passthrough()
  }))
  // Not strict: the renamed object is checked by the struct, which is what decoding it means.
  type Encoded = Schema.Struct<Fields>["Encoded"]
  const loose = {
    decode: SchemaGetter.passthrough<Encoded, typeof JsonObject.Type>({ strict: false }),
    encode: SchemaGetter.passthrough<typeof JsonObject.Type, Encoded>({ strict: false })
  }
  return renamed.pipe(Schema.decodeTo(struct, loose)).annotate({ identifier })
}
