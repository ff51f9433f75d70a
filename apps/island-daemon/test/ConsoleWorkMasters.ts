import { axleJobOrder, fixture } from "./IslandKit.js"

/** The work masters of the console's browser test (not a test file itself). */

/** The `<script>` work master: its id, description and a step name carry markup. */
export const MARKUP = `<script>window.__pwned = 1</script>`
export const markupWorkMaster = () => {
  const wm = fixture("work-master-axle.json") as { ID: string; Description: string; data: { Steps: Array<{ Name: string }>; Transitions: Array<{ Source: string; Target: string; Condition: string }>; Actions: Array<unknown>; Branches: Array<unknown> } }
  return {
    ...wm,
    ID: "wm-markup",
    Description: `recipe ${MARKUP}`,
    data: {
      Steps: [{ Name: "Init", Initial: true }, { Name: MARKUP }],
      Transitions: [{ Source: "Init", Target: MARKUP, Condition: "x == '<b>'" }],
      Actions: [],
      Branches: []
    }
  }
}

/**
 * The axle recipe with its push commands turned into pull events the test releases: each step
 * stays active until the test opens its gate, so the page is seen at every step, however slow
 * the machine.
 */
export const gatedWorkMaster = () => {
  const wm = fixture("work-master-axle.json") as { ID: string; data: { Actions: Array<Record<string, unknown>> } }
  const actions = wm.data.Actions.map((a) =>
    a["Interaction"] === "push_command" ? { Name: a["Name"], Step: a["Step"], Qualifier: "N", Interaction: "pull_event", TypeId: `com.example.test.${String(a["Name"])}.v1`, TimeoutSeconds: 300 } : a
  )
  return { ...wm, ID: "wm-axle-gated", data: { ...wm.data, Actions: actions } }
}
export const gatedJobOrder = (id: string) => ({ ...axleJobOrder(id), WorkMasterID: [{ ID: "wm-axle-gated" }] })
