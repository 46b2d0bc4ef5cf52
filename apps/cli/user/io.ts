/** What a CLI command reads and writes: the environment and the two streams (tests pass their own). */
export interface CliIo {
  readonly env: NodeJS.ProcessEnv
  readonly stdout: NodeJS.WriteStream
  readonly stderr: NodeJS.WriteStream
}
