// Compile every published JSON Schema with Ajv in strict mode (what many JavaScript
// client authors run): node ajv_strict.mjs AJV_PREFIX SCHEMA_DIR. Exit 1 if any is refused.
import fs from "node:fs";
import path from "node:path";

const [prefix, dir] = process.argv.slice(2);
const { default: Ajv2020 } = await import(path.join(prefix, "node_modules/ajv/dist/2020.js"));
const ajv = new Ajv2020({ strict: true, allErrors: true });
const files = fs.readdirSync(dir).filter((f) => f.endsWith(".json"));
for (const f of files) ajv.addSchema(JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")), f);
let refused = 0;
for (const f of files) {
  try {
    ajv.getSchema(f);
  } catch (err) {
    refused += 1;
    console.log(`${f}: ${err.message}`);
  }
}
console.log(`${files.length} schemas, ${refused} refused in strict mode`);
process.exit(refused ? 1 : 0);
