import { readFileSync } from "node:fs"
import { Parser } from "@asyncapi/parser"
import { Ajv2020 } from "ajv/dist/2020.js"
import { describe, expect, it } from "vitest"
import { PAYLOAD_SCHEMA_FORMAT, SCHEMA_BASE, schemaFile } from "@microdcs/contract"

/**
 * `docs/asyncapi.yaml` is a valid AsyncAPI 3.0 document by the AsyncAPI parser: no errors (its
 * warnings and hints are listed), every reference resolved. The payload schemas are referenced by
 * their `$id`; here each id is read from the repository's file for it, as a reader without
 * network access would map them.
 */

const root = new URL("../../../", import.meta.url)
const documentPath = new URL("docs/asyncapi.yaml", root)

/** Reads `{SCHEMA_BASE}{name}/v{x.y.z}/` from `docs/schemas/{name}/v{x.y.z}/schema.json`. */
const repositorySchemas = {
  schema: "https",
  order: 1,
  canRead: (uri: { toString(): string }) => uri.toString().startsWith(SCHEMA_BASE),
  read: async (uri: { toString(): string }) => readFileSync(new URL(schemaFile(uri.toString().replace(/#.*$/, "")), root), "utf8")
}

/** JSON Schema 2020-12 for the parser: a schema is valid when it is valid by the 2020-12 meta-schema. */
const ajv = new Ajv2020({ strict: false })
const jsonSchema2020 = {
  getMimeTypes: () => [PAYLOAD_SCHEMA_FORMAT],
  validate: async (input: { readonly data: unknown; readonly path: ReadonlyArray<string | number> }) =>
    ajv.validateSchema(input.data as object) ? [] : (ajv.errors ?? []).map((error) => ({ message: error.message ?? "invalid schema", path: [...input.path] })),
  parse: async (input: { readonly data: unknown }) => input.data
}

describe("docs/asyncapi.yaml", () => {
  it("is valid AsyncAPI 3.0: the parser reports no error and resolves every reference", async () => {
    const parser = new Parser({ __unstable: { resolver: { resolvers: [repositorySchemas] } } })
    parser.registerSchemaParser(jsonSchema2020)
    const { document, diagnostics } = await parser.parse(readFileSync(documentPath, "utf8"), { source: documentPath.pathname })
    const listed = diagnostics.map((d) => `${["error", "warning", "info", "hint"][d.severity]} ${d.code} at ${d.path.join("/") || "/"}: ${d.message}`)
    const errors = diagnostics.filter((d) => d.severity === 0)
    expect(errors, listed.join("\n")).toEqual([])
    if (listed.length > 0) console.info(`AsyncAPI parser diagnostics (no errors):\n${listed.join("\n")}`)
    expect(document?.version()).toBe("3.0.0")
    // Every message's payload was resolved to its schema (by its $id).
    const unresolved = (document?.allMessages().all() ?? []).flatMap((message) => {
      const payload = message.payload()?.json() as { readonly schemaFormat?: unknown; readonly schema?: { readonly $id?: unknown } } | undefined
      const resolved = payload?.schemaFormat === PAYLOAD_SCHEMA_FORMAT && typeof payload.schema?.$id === "string"
      return message.hasPayload() && !resolved ? [message.id()] : []
    })
    expect(unresolved).toEqual([])
  })
})
