// The node flags `npm start` runs the API with (package.json's start script), so a bench that
// starts the API itself measures the process `npm start` runs.
import { readFileSync } from "node:fs"
import { join } from "node:path"

/** The `--…` words of the start script in `root`/package.json. */
export const startFlags = (root) =>
  JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts.start.split(/\s+/).filter((word) => word.startsWith("--"))
