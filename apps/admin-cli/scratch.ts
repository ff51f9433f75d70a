import { build } from "esbuild"
const r = await build({ entryPoints: ["src/main.ts"], bundle: true, platform: "node", format: "esm", conditions: ["source"], metafile: true, write: false, outfile: "/tmp/x.mjs", external: ["yaml", "toml"] })
const out = Object.values(r.metafile.outputs)[0]!
const rows = Object.entries(out.inputs).map(([p, i]) => [i.bytesInOutput, p.replace(/.*node_modules\//, "")] as const).sort((a, b) => b[0] - a[0])
console.log(rows.slice(0, 40).map(([b, p]) => `${(b / 1024).toFixed(0)}K ${p}`).join("\n"))
