// The servers themselves live in @microdcs/embedded (the daemon starts them too); tests get them here.
export * from "@microdcs/embedded"
export * from "./Prefix.js"
export * from "./Fixtures.js"
export * from "./Until.js"
export * from "./Instance.js"
export * from "./KeyScan.js"
export * from "./Deploy.js"
