import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { contractFiles } from "./ContractFiles.js"

/** `pnpm contract`: writes the contract's files into the repository (tests compare them with the code). */
const root = fileURLToPath(new URL("../../../", import.meta.url))
for (const file of contractFiles()) {
  const path = join(root, file.path)
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, file.text)
  console.log(`wrote ${file.path}`)
}
