/**
 * The test S3 server keeps S3's guarantees the suites rely on (test/support/s3rver.ts).
 */
import { DeleteObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningS3rver, S3RVER_CREDENTIALS, startS3rver } from "./s3rver.js"

describe("s3rver as the suites run it", () => {
  let scope: Scope.CloseableScope
  let s3: RunningS3rver
  let client: S3Client
  beforeAll(async () => {
    scope = Effect.runSync(Scope.make())
    s3 = await Effect.runPromise(Scope.extend(startS3rver(), scope))
    client = new S3Client({ endpoint: s3.endpoint, region: "us-east-1", forcePathStyle: true, credentials: S3RVER_CREDENTIALS })
  })
  afterAll(async () => {
    client.destroy()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  // the chaos run lost an upload this way: a complete deleted the last staging object while a
  // client's PUT landed under the same prefix, and the PUT's 200 was followed by a 404
  it("deleting a key's last neighbour never takes a key written meanwhile", async () => {
    const lost: Array<string> = []
    for (let round = 0; round < 150; round++) {
      const neighbour = `staging/neighbour-${round}`
      const written = `staging/written-${round}`
      await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: neighbour, Body: "x" }))
      await Promise.all([
        client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: neighbour })),
        client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: written, Body: "y".repeat(64 * 1024) }))
      ])
      const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: written })).then(
        () => 200,
        (e: { $metadata?: { httpStatusCode?: number } }) => e.$metadata?.httpStatusCode ?? 0
      )
      if (head !== 200) lost.push(`${written}: HEAD ${head}`)
      // and the prefix empties again for the next round
      await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: written }))
    }
    expect(lost).toEqual([])
  }, 120_000)
})
