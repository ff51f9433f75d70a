export * from "./JobState.js"
export * from "./Transitions.js"
export * from "./ReturnStatus.js"
export * from "./EventTypes.js"
