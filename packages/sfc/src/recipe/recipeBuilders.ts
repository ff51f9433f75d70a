/**
 * Recipe JSON pieces for tests of recipes, the engine and its runtime. Each kit picks the event
 * type names its tests assert: `com.example.{name}{typeIdSuffix}`.
 */
export const recipeBuilders = (typeIdSuffix: string) => {
  const stepJson = (Name: string, Initial = false) => ({ Name, Initial })
  const transition = (Source: string, Target: string, Condition = "true", Priority = 0) => ({ Source, Target, Condition, Priority })
  const push = (Name: string, Step: string, extra: Record<string, unknown> = {}) => ({
    Name, Step, Qualifier: "N", Interaction: "push_command", TypeId: `com.example.${Name}${typeIdSuffix}`, TimeoutSeconds: 10, ...extra
  })
  const pull = (Name: string, Step: string, extra: Record<string, unknown> = {}) => push(Name, Step, { Interaction: "pull_event", ...extra })
  /** A linear recipe: the steps in order (the first initial), each transition `true`. */
  const linearJson = (steps: ReadonlyArray<string>, actions: ReadonlyArray<object>, extra: Record<string, unknown> = {}) => ({
    Steps: steps.map((name, i) => stepJson(name, i === 0)),
    Transitions: steps.slice(1).map((name, i) => transition(steps[i]!, name)),
    Actions: actions,
    ...extra
  })
  return { stepJson, transition, push, pull, linearJson }
}
