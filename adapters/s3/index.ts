/**
 * The BlobStore on S3 or an S3-compatible store (R2, MinIO, Garage, Ceph RGW…): presigned PUT,
 * multipart and GET URLs for clients, streamed reads and writes for the workers.
 * See ./README.md for the settings.
 */
export {
  contentDisposition,
  MAX_PART_SIZE,
  MAX_PARTS,
  MAX_PRESIGN_SECONDS,
  MIN_PART_SIZE,
  presignWindow,
  S3Config,
  type S3Credentials,
  type S3Options
} from "./config.js"
export { layerFromEnv, make, layerS3BlobStore, normalizeEtag, toBlobError } from "./store.js"
