export * from "./ScriptDescriptor.js"
export * from "./Reply.js"
export * from "./WriteReply.js"
export * from "./JobOrderScripts.js"
