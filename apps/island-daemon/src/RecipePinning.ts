import { Context, Layer } from "effect"
import type { RecipePins } from "@microdcs/job-control"

/** The recipe digests this deployment pins (`RECIPE_DIGESTS`), for the catalogue's readers. */
export class RecipePinning extends Context.Service<RecipePinning, RecipePins>()("@microdcs/island-daemon/RecipePinning") {
  static readonly layer = (pins: RecipePins) => Layer.succeed(RecipePinning, pins)
}
