/** The two commands of a Valkey client (iovalkey's, say) that reading a whole key space needs. */
export interface ScanningClient {
  scan(cursor: string, match: "MATCH", pattern: string, count: "COUNT", n: number): Promise<[string, Array<string>]>
  dumpBuffer(key: string): Promise<Buffer | null>
}

/** Every key that matches `pattern`, sorted; by SCAN, never KEYS, which would block a shared server. */
export const scanKeys = async (client: Pick<ScanningClient, "scan">, pattern: string): Promise<Array<string>> => {
  const keys: Array<string> = []
  let cursor = "0"
  do {
    const [next, batch] = await client.scan(cursor, "MATCH", pattern, "COUNT", 1000)
    keys.push(...batch)
    cursor = next
  } while (cursor !== "0")
  return [...new Set(keys)].sort()
}

/** Every key under `prefix` with its DUMP: any write anywhere under it changes the map. */
export const dumpKeys = async (client: ScanningClient, prefix: string) => {
  const keys = await scanKeys(client, `${prefix}:*`)
  return new Map(await Promise.all(keys.map(async (k) => [k, await client.dumpBuffer(k)] as const)))
}
