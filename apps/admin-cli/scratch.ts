import { Args, Command, Options } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
const root = Command.make("tool", { json: Options.boolean("json"), url: Options.text("url").pipe(Options.optional) })
const list = Command.make("list", { scope: Options.text("scope"), ids: Args.text({ name: "id" }).pipe(Args.repeated), yes: Options.boolean("yes") }, (c) =>
  Effect.flatMap(root, (r) => Console.log(JSON.stringify({ c, r }))))
const group = Command.make("scopes").pipe(Command.withSubcommands([list]))
const cmd = root.pipe(Command.withSubcommands([group]))
const cli = Command.run(cmd, { name: "tool", version: "0" })
cli(process.argv).pipe(Effect.provide(NodeContext.layer), Effect.tapErrorCause((c) => Console.error("FAILED", String(c))), NodeRuntime.runMain)
