#!/usr/bin/env node
// `npx hush …`: the CLI (apps/cli/main.ts) run from its TypeScript sources through tsx, so
// the command always matches the checkout it comes from.
import { register } from "tsx/esm/api"

register()
await import("../apps/cli/main.ts")
