/**
 * `hush …` (`npx hush`, `npm run hush --`): the user commands (apps/cli/user/, through the
 * API with HUSH_API_KEY) and, under `hush admin …`, the operator commands (apps/cli/admin.ts,
 * directly on the store). Each side is loaded only when asked for: the user commands never
 * load the database drivers.
 */
const argv = process.argv.slice(2)

const run: (argv: ReadonlyArray<string>) => Promise<number> = argv[0] === "admin"
  ? (await import("./admin.js")).runAdmin
  : (await import("./user/run.js")).runUserCommand

// exit at once: a pool or a keep-alive socket left open must not keep the command alive
run(argv).then((code) => process.exit(code), (error) => {
  console.error(error)
  process.exit(1)
})
