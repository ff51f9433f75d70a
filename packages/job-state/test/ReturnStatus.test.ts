import { describe, expect, it } from "vitest"
import fc from "fast-check"
import {
  combineStatus,
  hasBit,
  isSuccess,
  ReturnStatus,
  type ReturnStatusFlag,
  statusNames,
  statusOf,
  withBit,
  withoutBit
} from "@microdcs/job-state"

const { NO_ERROR, UNKNOWN_JOB_ORDER_ID, INVALID_JOB_ORDER_STATUS, UNABLE_TO_ACCEPT_JOB_ORDER, INVALID_REQUEST } = ReturnStatus

describe("return status", () => {
  it("has the values of OPC UA Machinery Jobs", () => {
    expect(ReturnStatus).toEqual({
      NO_ERROR: 1,
      UNKNOWN_JOB_ORDER_ID: 2,
      INVALID_JOB_ORDER_STATUS: 8,
      UNABLE_TO_ACCEPT_JOB_ORDER: 16,
      INVALID_REQUEST: 2 ** 32
    })
  })

  it("keeps INVALID_REQUEST where 32-bit operators would drop it", () => {
    // Why the helpers use arithmetic: the bitwise OR truncates to 32 bits and loses bit 32.
    expect(INVALID_REQUEST | UNKNOWN_JOB_ORDER_ID).toBe(2)
    const code = combineStatus(INVALID_REQUEST, UNKNOWN_JOB_ORDER_ID)
    expect(code).toBe(4294967298)
    expect(hasBit(code, INVALID_REQUEST)).toBe(true)
    expect(hasBit(code, UNKNOWN_JOB_ORDER_ID)).toBe(true)
    expect(hasBit(code, NO_ERROR)).toBe(false)
    expect(statusNames(code)).toEqual(["UNKNOWN_JOB_ORDER_ID", "INVALID_REQUEST"])
  })

  it("combines every error with INVALID_REQUEST", () => {
    const code = combineStatus(INVALID_REQUEST, UNABLE_TO_ACCEPT_JOB_ORDER, INVALID_JOB_ORDER_STATUS, UNKNOWN_JOB_ORDER_ID)
    expect(code).toBe(4294967296 + 16 + 8 + 2)
    expect(statusNames(code)).toEqual([
      "UNKNOWN_JOB_ORDER_ID",
      "INVALID_JOB_ORDER_STATUS",
      "UNABLE_TO_ACCEPT_JOB_ORDER",
      "INVALID_REQUEST"
    ])
    expect(withoutBit(code, INVALID_REQUEST)).toBe(26)
    expect(withoutBit(withoutBit(code, INVALID_REQUEST), INVALID_REQUEST)).toBe(26)
  })

  it("sets a bit once, however often it is added", () => {
    expect(combineStatus(INVALID_REQUEST, INVALID_REQUEST)).toBe(INVALID_REQUEST)
    expect(withBit(withBit(0, UNABLE_TO_ACCEPT_JOB_ORDER), UNABLE_TO_ACCEPT_JOB_ORDER)).toBe(16)
    expect(combineStatus()).toBe(0)
  })

  it("answers NO_ERROR alone or the errors without it", () => {
    expect(statusOf([])).toBe(NO_ERROR)
    expect(isSuccess(statusOf([]))).toBe(true)
    const failed = statusOf([INVALID_REQUEST, INVALID_JOB_ORDER_STATUS])
    expect(failed).toBe(4294967304)
    expect(hasBit(failed, NO_ERROR)).toBe(false)
    expect(isSuccess(failed)).toBe(false)
    expect(isSuccess(combineStatus(NO_ERROR, INVALID_REQUEST))).toBe(false)
  })

  it("never reports a bit for something that is not a code or not a bit", () => {
    expect(hasBit(3, 3)).toBe(false)
    expect(hasBit(-1, 1)).toBe(false)
    expect(hasBit(1.5, 1)).toBe(false)
    expect(hasBit(Number.NaN, 1)).toBe(false)
    expect(hasBit(2 ** 53 + 2, 2)).toBe(false)
    expect(hasBit(2 ** 40, 2 ** 40)).toBe(true)
  })

  it("agrees with BigInt bit operations for any set of flags", () => {
    const flags = Object.values(ReturnStatus) as Array<ReturnStatusFlag>
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...flags), { maxLength: 10 }), (bits) => {
        const code = combineStatus(...bits)
        const reference = bits.reduce((acc, bit) => acc | BigInt(bit), 0n)
        expect(BigInt(code)).toBe(reference)
        for (const flag of flags) expect(hasBit(code, flag)).toBe((reference & BigInt(flag)) !== 0n)
        expect(combineStatus(...[...bits].reverse())).toBe(code)
      })
    )
  })
})
