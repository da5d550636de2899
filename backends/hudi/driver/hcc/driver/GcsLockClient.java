package hcc.driver;

import org.apache.hudi.client.transaction.lock.StorageLockClient;
import org.apache.hudi.client.transaction.lock.models.LockGetResult;
import org.apache.hudi.client.transaction.lock.models.LockUpsertResult;
import org.apache.hudi.client.transaction.lock.models.StorageLockData;
import org.apache.hudi.client.transaction.lock.models.StorageLockFile;
import org.apache.hudi.common.util.Option;
import org.apache.hudi.common.util.collection.Pair;
import org.apache.hudi.exception.HoodieIOException;

import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.NoCredentials;
import com.google.cloud.http.HttpTransportOptions;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import com.google.cloud.storage.StorageOptions;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;

import static java.nio.charset.StandardCharsets.UTF_8;

/**
 * The harness's GCS lock client: Hudi's {@code GCSStorageLockClient} (hudi-gcp, not published on the Maven
 * Central this harness reaches; hudi-gcp-bundle lacks google-cloud-storage anyway, Hudi issue #20019)
 * written again against google-cloud-storage 2.63.0 (the release libraries-bom 26.76.0 manages; the one
 * served here), over its HTTP (JSON API) transport.
 *
 * <p>Its requests and the way each answer becomes a result follow Hudi's client as read at apache/hudi
 * 54cb1a57 ({@code tryUpsertLockFile} with {@code createOrUpdateLockFileInternal}, {@code readCurrentLockFile}
 * with {@code handleGetStorageException} and {@code getLockFileFromBlob}, {@code readObject},
 * {@code writeObject}, {@code getGenerationNumber}): a metadata get of the lock object then a read of its
 * media (a null blob or 404 NOT_EXISTS; 429, 5xx UNKNOWN_ERROR; any other {@code StorageException} thrown;
 * a 404 while reading the media, wrapped in HoodieIOException, UNKNOWN_ERROR), a create of the whole object
 * with {@code ifGenerationMatch} the cached generation, 0 for a create (412 ACQUIRED_BY_OTHERS; 429
 * THROTTLED; 5xx UNKNOWN_ERROR; any other {@code StorageException} thrown, and nothing else caught, so a
 * timeout or an I/O failure the SDK does not turn into a StorageException is thrown), the object's
 * generation as the lock file's version, and one attempt per call ({@code setMaxAttempts(1)}).
 *
 * <p>What differs, and why: the {@code Storage} is built with the fault proxy's node URL as its host
 * ({@code setHost}), fake-gcs-server's project and no credentials ({@code NoCredentials}) where Hudi's takes
 * the environment's defaults (application default credentials, the real endpoint); the connect and read
 * timeouts are the harness's (Hudi leaves the SDK's 20 s defaults; the harness passes max(1, validity / 5)
 * s unless a scenario sets {@code storage.timeout_ms}) so that a lost reply ends as a timeout within the
 * lock's timing; Hudi's lombok {@code @Slf4j} logger is a plain slf4j one. The SDK's gRPC transport, its
 * OpenTelemetry and Cloud Monitoring metrics are left off the classpath (the HTTP transport loads none of
 * them).
 */
final class GcsLockClient implements StorageLockClient {
  private static final long PRECONDITION_FAILURE_ERROR_CODE = 412;
  private static final long NOT_FOUND_ERROR_CODE = 404;
  private static final long RATE_LIMIT_ERROR_CODE = 429;
  private static final long INTERNAL_SERVER_ERROR_CODE_MIN = 500;
  private static final Logger LOG = LoggerFactory.getLogger(GcsLockClient.class);

  private final Storage gcsClient;
  private final String bucketName;
  private final String lockFilePath;
  private final String ownerId;

  /**
   * A client of the lock object {@code lockFileUri} ({@code gs://bucket/path}) at {@code endpoint} (e.g.
   * {@code http://127.0.0.1:<port>}, fake-gcs-server's JSON API root), in project {@code project}.
   */
  GcsLockClient(String ownerId, String lockFileUri, String endpoint, String project, long timeoutMs) {
    Pair<String, String> bucketAndPath = StorageLockClient.parseBucketAndPath(lockFileUri);
    this.bucketName = bucketAndPath.getLeft();
    this.lockFilePath = bucketAndPath.getRight();
    this.ownerId = ownerId;
    // Hudi: "Configure with no retries - only one attempt per operation"
    RetrySettings retrySettings = StorageOptions.getDefaultRetrySettings().toBuilder().setMaxAttempts(1).build();
    int timeout = (int) Math.min(Integer.MAX_VALUE, timeoutMs);
    this.gcsClient = StorageOptions.newBuilder()
        .setRetrySettings(retrySettings)
        .setHost(endpoint)
        .setProjectId(project)
        .setCredentials(NoCredentials.getInstance())
        .setTransportOptions(HttpTransportOptions.newBuilder().setConnectTimeout(timeout).setReadTimeout(timeout)
            .build())
        .build()
        .getService();
  }

  private StorageLockFile createOrUpdateLockFileInternal(StorageLockData lockData, long generationNumber)
      throws StorageException {
    BlobInfo blobInfo = BlobInfo.newBuilder(BlobId.of(bucketName, lockFilePath)).build();
    Blob updatedBlob = gcsClient.create(
        blobInfo,
        StorageLockFile.toByteArray(lockData),
        Storage.BlobTargetOption.generationMatch(generationNumber));
    return new StorageLockFile(lockData, String.valueOf(updatedBlob.getGeneration()));
  }

  @Override
  public Pair<LockUpsertResult, Option<StorageLockFile>> tryUpsertLockFile(
      StorageLockData newLockData, Option<StorageLockFile> previousLockFile) {
    long generationNumber = getGenerationNumber(previousLockFile);
    try {
      StorageLockFile updatedFile = createOrUpdateLockFileInternal(newLockData, generationNumber);
      return Pair.of(LockUpsertResult.SUCCESS, Option.of(updatedFile));
    } catch (StorageException e) {
      if (e.getCode() == PRECONDITION_FAILURE_ERROR_CODE) {
        LOG.info("OwnerId: {}, Unable to write new lock file. Another process has modified this lockfile {} already.",
            ownerId, lockFilePath);
        return Pair.of(LockUpsertResult.ACQUIRED_BY_OTHERS, Option.empty());
      } else if (e.getCode() == RATE_LIMIT_ERROR_CODE) {
        LOG.warn("OwnerId: {}, Rate limit exceeded for lock file: {}", ownerId, lockFilePath);
        return Pair.of(LockUpsertResult.THROTTLED, Option.empty());
      } else if (e.getCode() >= INTERNAL_SERVER_ERROR_CODE_MIN) {
        LOG.warn("OwnerId: {}, GCS returned internal server error code for lock file: {}", ownerId, lockFilePath, e);
      } else {
        throw e;
      }
      return Pair.of(LockUpsertResult.UNKNOWN_ERROR, Option.empty());
    }
  }

  private LockGetResult handleGetStorageException(StorageException e, boolean ignore404) {
    if (e.getCode() == NOT_FOUND_ERROR_CODE) {
      if (ignore404) {
        LOG.info("OwnerId: {}, GCS stream read failure detected: {}", ownerId, lockFilePath);
      } else {
        LOG.info("OwnerId: {}, Object not found in the path: {}", ownerId, lockFilePath);
        return LockGetResult.NOT_EXISTS;
      }
    } else if (e.getCode() == RATE_LIMIT_ERROR_CODE) {
      LOG.warn("OwnerId: {}, Rate limit exceeded for lock file: {}", ownerId, lockFilePath);
    } else if (e.getCode() >= INTERNAL_SERVER_ERROR_CODE_MIN) {
      LOG.warn("OwnerId: {}, GCS returned internal server error code for lock file: {}", ownerId, lockFilePath, e);
    } else {
      throw e;
    }
    return LockGetResult.UNKNOWN_ERROR;
  }

  @Override
  public Pair<LockGetResult, Option<StorageLockFile>> readCurrentLockFile() {
    try {
      Blob blob = gcsClient.get(BlobId.of(bucketName, lockFilePath));
      if (blob == null) {
        return Pair.of(LockGetResult.NOT_EXISTS, Option.empty());
      }
      return getLockFileFromBlob(blob);
    } catch (StorageException e) {
      return Pair.of(handleGetStorageException(e, false), Option.empty());
    } catch (HoodieIOException e) {
      // Hudi: a 404 wrapped in an IOException when the object changed between get and the stream's read
      Throwable cause = e.getCause();
      if (cause instanceof IOException && cause.getCause() instanceof StorageException) {
        return Pair.of(handleGetStorageException((StorageException) cause.getCause(), true), Option.empty());
      }
      throw e;
    }
  }

  private Pair<LockGetResult, Option<StorageLockFile>> getLockFileFromBlob(Blob blob) {
    try (InputStream inputStream = Channels.newInputStream(blob.reader())) {
      return Pair.of(LockGetResult.SUCCESS,
          Option.of(StorageLockFile.createFromStream(inputStream, String.valueOf(blob.getGeneration()))));
    } catch (IOException e) {
      throw new UncheckedIOException("Failed reading blob: " + lockFilePath, e);
    }
  }

  @Override
  public Option<String> readObject(String filePath, boolean checkExistsFirst) {
    try {
      Pair<String, String> bucketAndPath = StorageLockClient.parseBucketAndPath(filePath);
      BlobId blobId = BlobId.of(bucketAndPath.getLeft(), bucketAndPath.getRight());
      if (checkExistsFirst) {
        Blob blob = gcsClient.get(blobId);
        if (blob == null || !blob.exists()) {
          LOG.debug("JSON config file not found: {}", filePath);
          return Option.empty();
        }
        return Option.of(new String(blob.getContent(), UTF_8));
      }
      return Option.of(new String(gcsClient.readAllBytes(blobId), UTF_8));
    } catch (StorageException e) {
      if (e.getCode() == NOT_FOUND_ERROR_CODE) {
        LOG.debug("JSON config file not found: {}", filePath);
      } else {
        LOG.warn("Error reading JSON config file: {}", filePath, e);
      }
      return Option.empty();
    } catch (Exception e) {
      LOG.warn("Error reading JSON config file: {}", filePath, e);
      return Option.empty();
    }
  }

  @Override
  public boolean writeObject(String filePath, String content) {
    try {
      Pair<String, String> bucketAndPath = StorageLockClient.parseBucketAndPath(filePath);
      BlobInfo blobInfo = BlobInfo.newBuilder(BlobId.of(bucketAndPath.getLeft(), bucketAndPath.getRight())).build();
      gcsClient.create(blobInfo, content.getBytes(UTF_8));
      LOG.debug("Successfully wrote object to: {}", filePath);
      return true;
    } catch (Exception e) {
      LOG.error("Error writing object to: {}", filePath, e);
      return false;
    }
  }

  @Override
  public void close() throws Exception {
    this.gcsClient.close();
  }

  private long getGenerationNumber(Option<StorageLockFile> file) {
    return file.isPresent() ? Long.parseLong(file.get().getVersionId()) : 0;
  }
}
