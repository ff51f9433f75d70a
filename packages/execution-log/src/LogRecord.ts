/**
 * The encoding of the execution log's values: UTF-8 JSON text with `v: 1`.
 * The one format lives in `@microdcs/store`, below both the engine that writes it and the readers
 * here, so `@microdcs/sfc-runtime` needs no dependency on this package (nor on PostgreSQL) to encode.
 */
export {
  boundDetail,
  decodeExecution,
  decodeNode,
  encodeExecution,
  encodeNode,
  type ExecutionRecord,
  type ExecutionStatus,
  LOG_RECORD_VERSION,
  LogRecordInvalid,
  type NodeKind,
  type NodeRecord,
  type TruncatedDetail
} from "@microdcs/store"
