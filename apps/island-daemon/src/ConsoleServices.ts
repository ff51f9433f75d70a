import type {
  ChangeStream,
  DeadLetterRedrive,
  ConsumerHeartbeats,
  JobAcceptanceDao,
  JobResponseFailures,
  JobOrderSearch,
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

/** The store services the console's views read and its actions use besides the API's own (all in `storeLayer`). */
export type ConsoleServices =
  | ChangeStream
  | DeadLetterRedrive
  | ConsumerHeartbeats
  | JobAcceptanceDao
  | JobResponseFailures
  | JobOrderSearch
  | LeaseOverview
  | ReferenceListDao
  | ScopeFiguresReader
  | SfcHeartbeat
  | SfcRecipes
  | StreamSummaries
  | Valkey
  | ValkeyStreams
  | WorkMasterDao
