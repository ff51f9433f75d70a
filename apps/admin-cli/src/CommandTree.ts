import { Command } from "effect/cli"
import { root } from "./Root.js"
import { configCommand } from "./commands/Config.js"
import { dedupeCommand } from "./commands/Dedupe.js"
import { executionsCommand } from "./commands/Executions.js"
import { indexCommand } from "./commands/Index.js"
import { jobOrdersCommand } from "./commands/JobOrders.js"
import { journalCommand } from "./commands/Journal.js"
import { jobResponsesCommand } from "./commands/JobResponses.js"
import { leasesCommand } from "./commands/Leases.js"
import { publisherCommand } from "./commands/Publisher.js"
import { purgeCommand } from "./commands/Purge.js"
import { recipesCommand } from "./commands/Recipes.js"
import { scopesCommand } from "./commands/Scopes.js"
import { streamsCommand } from "./commands/Streams.js"
import { triggersCommand } from "./commands/Triggers.js"

/** The whole command tree: the root with its global flags and every subcommand. */
export const command = root.pipe(
  Command.withDescription("Operator's tool for one microdcs island: inspect and repair its Valkey data."),
  Command.withSubcommands([
    scopesCommand,
    jobOrdersCommand,
    jobResponsesCommand,
    executionsCommand,
    recipesCommand,
    configCommand,
    streamsCommand,
    dedupeCommand,
    leasesCommand,
    publisherCommand,
    purgeCommand,
    indexCommand,
    journalCommand,
    triggersCommand
  ])
)
