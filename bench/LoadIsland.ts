import { Layer } from "effect"
import { MqttConnection } from "@microdcs/cloudevents-mqtt"
import { JobControlIngress } from "@microdcs/island-mqtt"
import { jobControlLayer } from "@microdcs/job-control"
import { InProcessStation, SfcEngineProcesses, SfcRuntimeServices } from "@microdcs/sfc-runtime"
import { RECIPE_SCHEMA_ID } from "@microdcs/sfc"
import { storeLayer } from "@microdcs/store"

/** The sustained load's recipe length: a linear recipe, one push command per step. */
export const LOAD_STEPS = 5
export const LOAD_SCOPE = "bench-line"
/** Requests the island's ingress handles at once. */
export const LOAD_IN_FLIGHT = 32

/** A linear recipe of LOAD_STEPS steps, one push command each, answered at once by the station. */
export const loadWorkMaster = {
  ID: "wm-load",
  dataschema: RECIPE_SCHEMA_ID,
  data: {
    Steps: Array.from({ length: LOAD_STEPS }, (_, i) => ({ Name: `S${i}`, ...(i === 0 ? { Initial: true } : {}) })),
    Transitions: Array.from({ length: LOAD_STEPS - 1 }, (_, i) => ({ Source: `S${i}`, Target: `S${i + 1}`, Condition: "true" })),
    Actions: Array.from({ length: LOAD_STEPS }, (_, i) => ({
      Name: `a${i}`, Step: `S${i}`, Qualifier: "N", Interaction: "push_command", TypeId: `bench.load${i}.v1`, TimeoutSeconds: 60
    }))
  }
}

/**
 * The island under the sustained load: the MQTT job control ingress, the SFC engine and an
 * in-process station, over the store on `prefix`; the station answers each command at once, or
 * after `stationDelayMs` (jobs then stay running). Run in a process of its own by default
 * (LoadIslandChild.ts), as a real island is: the MES load generator's CPU is not the island's.
 */
export const loadIsland = (brokerUrl: string, valkeyUrl: string, prefix: string, stationDelayMs = 0) => {
  const store = storeLayer({ url: valkeyUrl, prefix, connectionName: "bench-load" })
  const reply = stationDelayMs > 0 ? { delayMs: stationDelayMs } : {}
  const engine = SfcEngineProcesses({ consumer: "load-engine" }).pipe(
    Layer.provideMerge(InProcessStation({ onCommand: () => reply }).layer),
    Layer.provideMerge(SfcRuntimeServices)
  )
  const ingress = JobControlIngress({ topics: { prefix, wildcardLevels: 1 }, source: "urn:bench:island", concurrency: LOAD_IN_FLIGHT }).pipe(
    Layer.provide(jobControlLayer()),
    Layer.provide(MqttConnection.layer({ url: brokerUrl, clientIdBase: "bench-load-island", receiveMaximum: 2 * LOAD_IN_FLIGHT }))
  )
  return Layer.merge(ingress, engine).pipe(Layer.provideMerge(store))
}
