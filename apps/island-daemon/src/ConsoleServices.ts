import type {
  ChangeStream,
  JobAcceptanceDao,
  JobOrderSearch,
  LeaseOverview,
  ReferenceListDao,
  ScopeFiguresReader,
  SfcRecipes,
  StreamSummaries,
  Valkey,
  ValkeyStreams,
  WorkMasterDao
} from "@microdcs/store"

/** The store services the console's views read besides the API's own (all in `storeLayer`). */
export type ConsoleServices =
  | ChangeStream
  | JobAcceptanceDao
  | JobOrderSearch
  | LeaseOverview
  | ReferenceListDao
  | ScopeFiguresReader
  | SfcRecipes
  | StreamSummaries
  | Valkey
  | ValkeyStreams
  | WorkMasterDao
