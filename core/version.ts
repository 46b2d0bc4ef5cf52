/**
 * Hush's one version (decisions.md, Versioning: the OpenAPI description is version `1.0.0`).
 * The health answer, the OpenAPI `info.version`, exported spans' `service.version` and the
 * CLI's `--version` and User-Agent all read it; package.json's `version` is the same value
 * (test/core/version.test.ts holds them together).
 */
export const HUSH_VERSION = "1.0.0"
