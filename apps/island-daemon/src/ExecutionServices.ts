import type { ExecutionLookup } from "@microdcs/execution-log"
import type { WorkMasterDao } from "@microdcs/store"
import type { RecipePinning } from "./RecipePinning.js"

/** The services the execution-log and recipe routes read (provided by the running island). */
export type ExecutionServices = ExecutionLookup | WorkMasterDao | RecipePinning
