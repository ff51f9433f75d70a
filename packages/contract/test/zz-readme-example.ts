// The README's example, type-checked with the rest (not a test file).
import { Ajv2020 } from "ajv/dist/2020.js"
import { payloadSchemaId, payloadSchemas } from "@microdcs/contract"

const ajv = new Ajv2020()
for (const schema of Object.values(payloadSchemas())) ajv.addSchema(schema)
const isStoreRequest = ajv.getSchema(payloadSchemaId("job-order-request"))!
isStoreRequest({ JobOrder: { JobOrderID: "jo-1", WorkMasterID: [{ ID: "wm-axle-v1" }] } }) // true
