import { Command, Flag } from "effect/cli"
import { Effect, Layer, Option } from "effect"
import { type Inconsistency, type IndexedFamily, IndexMaintenance, IndexRegistry, type RebuildSummary } from "@microdcs/store"
import { confirmDestructive } from "../Confirm.js"
import { ProblemsFound } from "../ExitCode.js"
import { extensionFamilies } from "../Extensions.js"
import { island } from "../Island.js"
import { emit, note } from "../Output.js"
import { progressBar } from "../Progress.js"
import { renderFields, renderTable, section, sections } from "../Table.js"
import { yesOption } from "../Yes.js"

const scopeOption = Flag.String("scope").pipe(Flag.withDescription("only this scope; default the whole island"), Flag.optional)

const renderInconsistencies = (found: ReadonlyArray<Inconsistency>): string =>
  renderTable(
    [
      { header: "KIND", value: (i: Inconsistency) => i.kind },
      { header: "KEY", value: (i) => i.key },
      { header: "MEMBER", value: (i) => i.member },
      { header: "EXPECTED", value: (i) => String(i.expected) },
      { header: "FOUND", value: (i) => String(i.found) }
    ],
    found,
    "no inconsistencies"
  )

/**
 * Index maintenance over the core families and those of the extensions in `MICRODCS_EXTENSIONS`,
 * loaded before the command connects: a module that cannot be loaded is a usage error.
 */
const withMaintenance = <A, E, R>(body: (maintenance: IndexMaintenance["Service"]) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(extensionFamilies, (families: ReadonlyArray<IndexedFamily>) =>
    island(Effect.flatMap(Effect.provide(IndexMaintenance, IndexMaintenance.Default.pipe(Layer.provide(IndexRegistry.with(...families)))), body))
  )

const check = Command.make("check", { scope: scopeOption }, ({ scope }) =>
  withMaintenance((maintenance) =>
    Effect.gen(function* () {
      const found = yield* maintenance.check({ scope: Option.getOrUndefined(scope) })
      yield* emit({ scope: Option.getOrNull(scope), consistent: found.length === 0, inconsistencies: found }, () =>
        renderInconsistencies(found)
      )
      if (found.length > 0) {
        return yield* new ProblemsFound({ message: `${found.length} index inconsistenc${found.length === 1 ? "y" : "ies"} found; run 'index rebuild'` })
      }
    })
  )
).pipe(Command.withDescription("compare every index with the documents (read only; exit 1 when inconsistent)"))

const renderSummary = (summary: RebuildSummary): string =>
  sections(
    renderFields([
      ["scanned", summary.scanned],
      ["repaired", summary.repaired],
      ["removed", summary.removed],
      ["deleted keys", summary.deletedKeys.length === 0 ? "none" : summary.deletedKeys.join(", ")],
      ["unrepaired", summary.unrepaired.length]
    ]),
    ...(summary.unrepaired.length > 0 ? [section("Left for an operator", renderInconsistencies(summary.unrepaired))] : [])
  )

const rebuild = Command.make("rebuild", { scope: scopeOption, yes: yesOption }, ({ scope, yes }) =>
  withMaintenance((maintenance) =>
    Effect.gen(function* () {
      const where = Option.match(scope, { onNone: () => "the whole island", onSome: (s) => `scope ${s}` })
      yield* confirmDestructive(yes, `Rebuild the indexes of ${where} from the documents? Stale entries are removed.`)
      const bar = progressBar(process.stderr, maintenance.phases)
      const summary = yield* maintenance
        .rebuild({ scope: Option.getOrUndefined(scope), onProgress: bar.update })
        .pipe(Effect.ensuring(bar.done))
      yield* emit({ scope: Option.getOrNull(scope), ...summary }, () => renderSummary(summary))
      if (summary.unrepaired.length > 0) {
        yield* note("some inconsistencies need an operator: a rebuild does not touch malformed documents")
        return yield* new ProblemsFound({ message: `${summary.unrepaired.length} inconsistenc${summary.unrepaired.length === 1 ? "y" : "ies"} left unrepaired` })
      }
    })
  )
).pipe(Command.withDescription("repair every index from the documents, with a progress bar on stderr (destructive; safe while live)"))

export const indexCommand = Command.make("index").pipe(
  Command.withDescription("index consistency: check and rebuild"),
  Command.withSubcommands([check, rebuild])
)
