/**
 * The ReturnStatus of the job control methods: a UInt64 bit set. INVALID_REQUEST is
 * bit 32, which JavaScript's bitwise operators (32-bit) silently drop (`2 ** 32 | 0 === 0`), so every
 * helper here works with arithmetic on plain numbers. Exact up to 2^53, far above the highest bit.
 */
export const ReturnStatus = {
  NO_ERROR: 1,
  UNKNOWN_JOB_ORDER_ID: 2,
  INVALID_JOB_ORDER_STATUS: 8,
  UNABLE_TO_ACCEPT_JOB_ORDER: 16,
  INVALID_REQUEST: 4294967296
} as const

export type ReturnStatusName = keyof typeof ReturnStatus
/** One defined bit. */
export type ReturnStatusFlag = (typeof ReturnStatus)[ReturnStatusName]
/** Any combination of bits, as it travels in a reply. */
export type ReturnStatusCode = number

const names = Object.keys(ReturnStatus) as ReadonlyArray<ReturnStatusName>

/** Highest bit that still fits a double exactly; beyond it `hasBit` would lie. */
const MAX_BIT = 2 ** 52

const isBit = (bit: number): boolean => Number.isSafeInteger(bit) && bit >= 1 && bit <= MAX_BIT && 2 ** Math.round(Math.log2(bit)) === bit

const isCode = (code: number): boolean => Number.isSafeInteger(code) && code >= 0

/** Whether `bit` (a power of two) is set in `code`. False for anything that is not a valid code or bit. */
export const hasBit = (code: ReturnStatusCode, bit: number): boolean =>
  isCode(code) && isBit(bit) && Math.floor(code / bit) % 2 === 1

/** `code` with `bit` set (idempotent, unlike `+`). */
export const withBit = (code: ReturnStatusCode, bit: ReturnStatusFlag): ReturnStatusCode =>
  hasBit(code, bit) ? code : code + bit

/** `code` with `bit` cleared. */
export const withoutBit = (code: ReturnStatusCode, bit: ReturnStatusFlag): ReturnStatusCode =>
  hasBit(code, bit) ? code - bit : code

/** The union of the given bits (arithmetic OR; a repeated bit counts once). */
export const combineStatus = (...bits: ReadonlyArray<ReturnStatusFlag>): ReturnStatusCode =>
  bits.reduce<ReturnStatusCode>(withBit, 0)

/** The error bits of an answer: NO_ERROR when there are none, else only the errors (never both). */
export const statusOf = (errors: ReadonlyArray<Exclude<ReturnStatusFlag, 1>>): ReturnStatusCode =>
  errors.length === 0 ? ReturnStatus.NO_ERROR : combineStatus(...errors)

/** The names of the defined bits set in `code`, in table order (unknown bits are left out). */
export const statusNames = (code: ReturnStatusCode): ReadonlyArray<ReturnStatusName> =>
  names.filter((name) => hasBit(code, ReturnStatus[name]))

/** Exactly NO_ERROR: a code that also carries an error bit is not a success. */
export const isSuccess = (code: ReturnStatusCode): boolean => code === ReturnStatus.NO_ERROR
