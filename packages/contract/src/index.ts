// The AsyncAPI 3.0 document of the island's MQTT contract, and its version.
export { CONTRACT_VERSION, contractDocument, PAYLOAD_SCHEMA_FORMAT } from "./ContractDocument.js"
export { DATA_OPTIONAL } from "./Messages.js"
// Every payload's JSON Schema (2020-12) by its $id, and where the repository publishes each.
export { payloadSchemaId, payloadSchemas } from "./PayloadSchemas.js"
export { parseSchemaId, SCHEMA_BASE, schemaFile, schemaId } from "./SchemaIds.js"
// The files `pnpm contract` writes: the document as YAML and each schema as JSON.
export { type ContractFile, contractFiles } from "./ContractFiles.js"
export type { Json, JsonObject } from "./Json.js"
