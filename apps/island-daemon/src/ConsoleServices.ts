import type {
  ChangeStream,
  ConsumerHeartbeats,
  JobAcceptanceDao,
  JobResponseFailures,
  LeaseOverview,
  ReferenceListDao,
  ScopeFiguresReader,
  SfcHeartbeat,
  SfcRecipes,
  StreamSummaries,
  Valkey,
  ValkeyStreams,
  WorkMasterDao
} from "@microdcs/store"

/** The store services the console's views read besides the API's own (all in `storeLayer`). */
export type ConsoleServices =
  | ChangeStream
  | ConsumerHeartbeats
  | JobAcceptanceDao
  | JobResponseFailures
  | LeaseOverview
  | ReferenceListDao
  | ScopeFiguresReader
  | SfcHeartbeat
  | SfcRecipes
  | StreamSummaries
  | Valkey
  | ValkeyStreams
  | WorkMasterDao
