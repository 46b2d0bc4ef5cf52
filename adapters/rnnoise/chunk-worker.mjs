// Entry point of the chunk pool's worker threads. A worker starts from a file Node can load
// by itself, so this one is JavaScript. Under `tsx` the TypeScript loader is inherited
// through execArgv, under vitest it is not: registering tsx here makes chunk-worker.ts
// importable in both (registering twice is harmless).
import { register } from "tsx/esm/api"

register()
await import("./chunk-worker.ts")
