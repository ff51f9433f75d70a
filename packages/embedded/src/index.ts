export * from "./FreePort.js"
export * from "./ChildServer.js"
export * from "./ValkeyServer.js"
export * from "./MosquittoServer.js"
