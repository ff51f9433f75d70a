/** One role's health: `reason` says what is wrong when it is not ok; `detail` what a healthy role is still doing. */
export interface RoleHealth {
  readonly ok: boolean
  readonly reason?: string
  readonly detail?: string
}
