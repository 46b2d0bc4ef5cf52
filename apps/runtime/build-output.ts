/**
 * Where the build's outputs lie, found through import.meta.url. This module is two levels below
 * the project's root, as its bundle (dist/app/*.mjs) is, so the same relative path holds whether
 * it runs from source (tests, tsx) or from the build (scripts/build.mjs). Keep it at this depth.
 */
import { fileURLToPath } from "node:url"

/** The dashboard's built assets (scripts/build-web.mjs), served by apps/api/server/web.ts. */
export const WEB_DIST = fileURLToPath(new URL("../../dist/web", import.meta.url))
