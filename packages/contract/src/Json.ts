/** A JSON value, as the contract's documents are made of. */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | JsonObject
export interface JsonObject {
  readonly [key: string]: Json
}
