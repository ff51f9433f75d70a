/** One role's health: `reason` says what is wrong when it is not ok. */
export interface RoleHealth {
  readonly ok: boolean
  readonly reason?: string
}
