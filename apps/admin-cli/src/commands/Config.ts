import { Command } from "effect/cli"
import { acceptanceCommand } from "./ConfigAcceptance.js"
import { referencesCommand } from "./ConfigReferences.js"
import { workMastersCommand } from "./ConfigWorkMasters.js"

export const configCommand = Command.make("config").pipe(
  Command.withDescription("station configuration: reference lists, work masters, acceptance limit"),
  Command.withSubcommands([referencesCommand, workMastersCommand, acceptanceCommand])
)
