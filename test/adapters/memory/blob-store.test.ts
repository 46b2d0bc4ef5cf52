/**
 * The memory blob store (adapters/memory/blob-store.ts) against the blob-store contract, its
 * URLs answered by its backdoor's `request` (no server serves `memory://`).
 */
import { Effect } from "effect"
import { MemoryBlobBackdoor, layerMemoryBlobStore } from "../../../adapters/memory/blob-store.js"
import { blobStoreContract, type Exchange } from "../../contracts/blob-store.js"

const throughTheBackdoor: Exchange<MemoryBlobBackdoor> = (url, init) =>
  Effect.flatMap(MemoryBlobBackdoor, (door) => door.request(url, init))

blobStoreContract("memory", () => layerMemoryBlobStore, {
  partSizeBytes: 64 * 1024,
  refusesClosedUploads: true,
  exchange: throughTheBackdoor
})
