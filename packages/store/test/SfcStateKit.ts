import { Effect } from "effect"
import { dumpKeys } from "@microdcs/test-utils"
import { type SfcCompareAndSet, type SfcCompareAndSetMany, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

/** A CAS with nothing but the state document; tests override what they exercise. */
export const casWith = (
  jobId: string,
  scope: string,
  expectedVersion: number,
  doc: string,
  extra: Partial<SfcCompareAndSet> = {}
): SfcCompareAndSet => ({
  jobId,
  scope,
  expectedVersion,
  doc,
  entries: [],
  due: null,
  active: true,
  waitsAdd: [],
  waitsRemove: [],
  ...extra
})

/** A job of `compareAndSetMany` with nothing but the state document; tests override what they exercise. */
export const manyWith = (
  jobId: string,
  scope: string,
  expectedVersion: number,
  doc: string,
  extra: Partial<SfcCompareAndSetMany> = {}
): SfcCompareAndSetMany => {
  const { appliedEvent: _, ...base } = casWith(jobId, scope, expectedVersion, doc)
  return { ...base, ...extra }
}

/** Every key of a test file's prefix with its DUMP: any write anywhere changes it. */
export const snapshotOf = (prefix: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    return yield* unsafeCommand(valkey, "snapshot", (c) => dumpKeys(c, prefix))
  })

/** Every entry of the scope's work stream, oldest first. */
export const xrange = (scope: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* valkey.key("sfcWork", { scope })
    return yield* unsafeCommand(valkey, "xrange", (c) => c.xrange(key, "-", "+"))
  })
