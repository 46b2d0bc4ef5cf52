// The architecture's import rules, checked by dependency-cruiser: `npm run lint:deps` (CI runs it
// before the tests, .ci/run). docs/architecture.md ("Dependency rules") explains them.
// Type-only imports count (tsPreCompilationDeps): a type that crosses a boundary is a dependency.

/** Where the dashboard and the typed client must not reach: the server's code and what it runs on. */
const SERVER_SIDE = "^(adapters/|core/services/|core/ports/|apps/api/server)"

/**
 * The dashboard's bundle and the typed client carry the contract (apps/api/contract: HushApi, its
 * groups, annotations and middleware tags) and the pure core it names (core/domain, core/schema,
 * core/errors…), never the server: followed transitively, so a contract module that imported an
 * implementation would fail here. test/apps/web/bundle.test.ts checks the built bundle itself.
 */
const clientsReachOnlyTheContract = {
  name: "clients-reach-only-the-contract",
  comment: "apps/web and apps/client reach no server code, port or adapter, even through the contract",
  severity: "error",
  from: { path: "^apps/(web|client)/" },
  to: { path: SERVER_SIDE, reachable: true }
}

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "no import cycle anywhere: a cycle makes a module's value depend on load order",
      severity: "error",
      from: {},
      to: { circular: true }
    },
    {
      name: "core-imports-no-node",
      comment: "core/ is runtime-neutral: no node: module (nor a bare Node builtin)",
      severity: "error",
      from: { path: "^core/" },
      to: { dependencyTypes: ["core"] }
    },
    {
      name: "core-imports-no-adapter-or-app",
      comment: "core/ knows ports, never their implementations or the processes that assemble them",
      severity: "error",
      from: { path: "^core/" },
      to: { path: "^(adapters|apps|bench|scripts|test)/" }
    },
    {
      name: "adapters-import-no-app",
      comment: "an adapter implements a port; the apps choose and compose adapters, never the other way",
      severity: "error",
      from: { path: "^adapters/" },
      to: { path: "^(apps|bench|scripts|test)/" }
    },
    {
      name: "clients-import-only-the-contract",
      comment: "apps/web and apps/client import no server code, port or adapter directly (clientsReachOnlyTheContract follows them transitively)",
      severity: "error",
      from: { path: "^apps/(web|client)/" },
      to: { path: SERVER_SIDE }
    },
    {
      name: "clients-import-no-node",
      comment: "the dashboard runs in a browser and the typed client anywhere fetch does",
      severity: "error",
      from: { path: "^apps/(web|client)/" },
      to: { dependencyTypes: ["core"] }
    },
    clientsReachOnlyTheContract,
    {
      name: "contract-runs-nothing",
      comment: "apps/api/contract describes the API; it imports no server code, service, port, adapter or node: module",
      severity: "error",
      from: { path: "^apps/api/contract/" },
      to: { path: SERVER_SIDE }
    },
    {
      name: "contract-imports-no-node",
      comment: "the contract is bundled into the dashboard",
      severity: "error",
      from: { path: "^apps/api/contract/" },
      to: { dependencyTypes: ["core"] }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|dist)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".mjs", ".js", ".cjs", ".d.ts"]
    }
  }
}
