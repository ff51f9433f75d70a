import { Layer } from "effect"
import { ChangeStream } from "./ChangeStream.js"
import { DeadLetterRedrive } from "./DeadLetterRedrive.js"
import { DedupeStore } from "./DedupeStore.js"
import { ClaimHolders } from "./ClaimHolders.js"
import { IndexMaintenance } from "./IndexMaintenance.js"
import { JobAcceptanceDao } from "./JobAcceptanceDao.js"
import { JobOrderDao } from "./JobOrderDao.js"
import { JobOrderSearch } from "./JobOrderSearch.js"
import { JobResponseDao } from "./JobResponseDao.js"
import { JobResponseFailures } from "./JobResponseFailures.js"
import { PublisherLease } from "./Lease.js"
import { StartLease } from "./StartLease.js"
import { PublisherCursors } from "./PublisherCursors.js"
import { ReferenceListDao } from "./ReferenceListDao.js"
import { ScopeRegistry } from "./ScopeRegistry.js"
import { SfcStateDao } from "./SfcStateDao.js"
import { ValkeyStreams } from "./ValkeyStreams.js"
import { WorkMasterDao } from "./WorkMasterDao.js"
import { SfcCorrelations } from "./SfcCorrelations.js"
import { SfcRecipes } from "./SfcRecipes.js"
import { SfcHeartbeat } from "./SfcHeartbeat.js"
import { DedupeEntries } from "./DedupeEntries.js"
import { ScopeSizes } from "./ScopeSizes.js"
import { ScopeFiguresReader } from "./ScopeFigures.js"
import { StreamSummaries } from "./StreamSummary.js"
import { IndexScores } from "./IndexScores.js"
import { ConsumerHeartbeats } from "./ConsumerHeartbeats.js"
import { Nudges } from "./Nudges.js"
import { JobOrderRetention } from "./JobOrderRetention.js"
import { LeaseOverview } from "./LeaseOverview.js"
import { StoreHealth } from "./StoreHealth.js"
import { TriggerStore } from "./TriggerStore.js"
import { layer as valkeyLayer } from "./Valkey.js"
import type { ValkeyOptions } from "./ValkeyOptions.js"

/** Every DAO of the store over one `Valkey` service. */
export const StoreServices = Layer.mergeAll(
  JobOrderDao.Default,
  JobOrderSearch.Default,
  JobResponseDao.Default,
  JobResponseFailures.Default,
  WorkMasterDao.Default,
  ReferenceListDao.Default,
  JobAcceptanceDao.Default,
  DedupeStore.Default,
  ClaimHolders.Default,
  StartLease.Default,
  PublisherLease.Default,
  ScopeRegistry.Default,
  ChangeStream.Default,
  PublisherCursors.Default,
  SfcStateDao.Default,
  ValkeyStreams.Default,
  DeadLetterRedrive.Default,
  IndexMaintenance.Default,
  // The small DAOs: every key outside the document DAOs is read and written through one of these.
  SfcCorrelations.Default,
  SfcRecipes.Default,
  SfcHeartbeat.Default,
  DedupeEntries.Default,
  ScopeSizes.Default,
  ScopeFiguresReader.Default,
  StreamSummaries.Default,
  IndexScores.Default,
  ConsumerHeartbeats.Default,
  Nudges.Default,
  JobOrderRetention.Default,
  LeaseOverview.Default,
  StoreHealth.Default,
  TriggerStore.Default
)

/** The whole store for the given connection options: `Valkey` plus every DAO. */
export const storeLayer = (options: ValkeyOptions) => StoreServices.pipe(Layer.provideMerge(valkeyLayer(options)))
