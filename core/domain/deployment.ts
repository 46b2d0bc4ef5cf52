import { Context } from "effect"

/** The shipped MP3 every test-mode job returns, stored once in the blob store at start. */
export interface TestModeSample {
  readonly storageKey: string
  readonly sizeBytes: number
  readonly bitrateKbps: number
  readonly format: "mp3"
}

export class TestSample extends Context.Tag("hush/TestSample")<TestSample, TestModeSample>() {}

/** Secret keys of this deployment (cursor signing); configuration, never hard-coded in production. */
export class DeploymentSecrets extends Context.Tag("hush/DeploymentSecrets")<DeploymentSecrets, {
  readonly cursorKey: Uint8Array
}>() {}
