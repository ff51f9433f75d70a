// The servers themselves live in @microdcs/embedded (the daemon starts them too); tests get them here.
export * from "@microdcs/embedded"
export * from "./Prefix.js"
export * from "./Fixtures.js"
