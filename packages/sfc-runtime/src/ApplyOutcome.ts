import type { ConnectionError, InvalidInput, StateMoved, WrongType } from "@microdcs/store"
import type { EngineOutput } from "@microdcs/sfc"
import type { CounterUnavailable } from "./CounterSource.js"

/** The outcome of applying one input to a job's execution. */
export type Applied =
  /**
   * `jobOrderSeen` (a create's answer only): the job order's version as the create's script found
   * it, 0 when missing; absent when not known. A start compares it with the version it read.
   */
  | { readonly _tag: "Written"; readonly output: EngineOutput; readonly version: number; readonly jobOrderSeen?: number | undefined }
  | { readonly _tag: "Unchanged"; readonly output: EngineOutput }
  /** The event was applied before (to `jobId`, when the store says which job). */
  | { readonly _tag: "Duplicate"; readonly jobId?: string | undefined }
  | { readonly _tag: "NoExecution" }

/** `CounterUnavailable`: counters a transition needs could not be read; nothing moved, retry later. */
export type ExecutionError = InvalidInput | WrongType | ConnectionError | StateMoved | CounterUnavailable
