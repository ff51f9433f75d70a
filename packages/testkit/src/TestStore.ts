import { inject } from "vitest"
import { storeLayer, ValkeyLayer, type ValkeyOptions } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"

/** Options of the run's server with a fresh random prefix unless `options` names one. */
const onRunServer = (options: Partial<ValkeyOptions>): ValkeyOptions => ({ url: inject("valkeyUrl"), prefix: randomPrefix(), ...options })

/** Every store service over the run's server (test-utils globalSetup), with a random prefix unless one is given. */
export const testStore = (options: Partial<ValkeyOptions> = {}) => storeLayer(onRunServer(options))

/** The Valkey connection alone over the run's server, for tests that build the services they need on it. */
export const testValkey = (options: Partial<ValkeyOptions> = {}) => ValkeyLayer.layer(onRunServer(options))
