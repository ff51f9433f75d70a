export * from "./JobState.js"
export * from "./Transitions.js"
export * from "./ReturnStatus.js"
export * from "./EventTypes.js"
export * from "./JobOrderRecord.js"
export * from "./Origin.js"
export {
  JOB_RESPONSE_SCHEMA_ID,
  JOB_RESPONSE_V1_SCHEMA_ID,
  JobResponse,
  type JobResponseActuals,
  JobResponseV1,
  type LocalizedText,
  type Parameter as JobResponseParameter
} from "./JobResponseModel.js"
export { decodeJobResponse, decodeJobResponseText, MalformedJobResponse, upgradeJobResponse } from "./JobResponseDecode.js"
export { actualsOf, type JobResponseInput, makeJobResponse } from "./JobResponseMake.js"
export { jobResponseJsonSchema, jobResponseV1JsonSchema } from "./JobResponseJsonSchema.js"
