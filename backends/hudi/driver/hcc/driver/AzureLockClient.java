package hcc.driver;

import org.apache.hudi.client.transaction.lock.StorageLockClient;
import org.apache.hudi.client.transaction.lock.models.LockGetResult;
import org.apache.hudi.client.transaction.lock.models.LockUpsertResult;
import org.apache.hudi.client.transaction.lock.models.StorageLockData;
import org.apache.hudi.client.transaction.lock.models.StorageLockFile;
import org.apache.hudi.common.util.Option;
import org.apache.hudi.common.util.collection.Pair;
import org.apache.hudi.exception.HoodieLockException;

import com.azure.core.exception.HttpResponseException;
import com.azure.core.http.policy.ExponentialBackoffOptions;
import com.azure.core.http.policy.RetryOptions;
import com.azure.core.http.rest.Response;
import com.azure.core.util.BinaryData;
import com.azure.core.util.Context;
import com.azure.core.util.HttpClientOptions;
import com.azure.storage.blob.BlobClient;
import com.azure.storage.blob.BlobServiceClient;
import com.azure.storage.blob.BlobServiceClientBuilder;
import com.azure.storage.blob.BlobUrlParts;
import com.azure.storage.blob.models.BlobErrorCode;
import com.azure.storage.blob.models.BlobRequestConditions;
import com.azure.storage.blob.models.BlobStorageException;
import com.azure.storage.blob.models.BlockBlobItem;
import com.azure.storage.blob.options.BlobParallelUploadOptions;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;

/**
 * The harness's Azure lock client: Hudi's {@code AzureStorageLockClient} (hudi-azure, not published on the
 * Maven Central this harness reaches) written again against the azure-storage-blob release hudi-azure's
 * pom pins (12.25.1, {@code azure.storage.blob.version} in hudi-azure/pom.xml as stored at apache/hudi
 * 1ac8ffb5, 1.2.0-SNAPSHOT: Maven Central serves no hudi-azure pom of 1.2.x), with the azure-core and
 * azure-core-http-netty it brings.
 *
 * <p>Its requests and the way each answer becomes a result follow Hudi's client as read at apache/hudi
 * 54cb1a57 ({@code readCurrentLockFile} with {@code handleGetStorageException}, {@code tryUpsertLockFile}
 * with {@code createOrUpdateLockFileInternal} and {@code handleUpsertBlobStorageException},
 * {@code canonicalizeEtag}, {@code readObject}, {@code writeObject}): a download of the lock blob (404 or
 * BlobNotFound NOT_EXISTS; 429, 5xx UNKNOWN_ERROR; any other {@code BlobStorageException} thrown; nothing
 * else caught, so a timeout or an I/O failure is thrown), an upload with If-None-Match * or If-Match the
 * cached ETag (412 or ConditionNotMet ACQUIRED_BY_OTHERS; 429 THROTTLED; 409, 5xx and any other status
 * UNKNOWN_ERROR; another {@code HttpResponseException} thrown on a create, UNKNOWN_ERROR on a renewal or
 * expire; any other exception, a timeout or I/O failure included, UNKNOWN_ERROR on a create too), ETags
 * quoted as Hudi quotes them, no SDK retries ({@code ExponentialBackoffOptions().setMaxRetries(0)}), and
 * response and read timeouts.
 *
 * <p>What differs, and why: the client is built from a connection string (Hudi's first authentication
 * choice, {@code hoodie.write.lock.azure.connection.string}) naming the fault proxy's node port as its
 * {@code BlobEndpoint} and Azurite's shared key, as the harness gives them; the timeouts are the
 * harness's (Hudi's are max(1, validity / 5) whole seconds; the harness passes that value unless a
 * scenario sets {@code storage.timeout_ms}); every URI (Hudi's abfs[s] / wasb[s]
 * {@code <container>@<host>} and http(s) blob URLs) is served by the one endpoint (Hudi builds a second service client for a path on another account's endpoint).
 */
final class AzureLockClient implements StorageLockClient {
  private static final int PRECONDITION_FAILED = 412;
  private static final int NOT_FOUND = 404;
  private static final int CONFLICT = 409;
  private static final int THROTTLED = 429;
  private static final int SERVER_ERROR_MIN = 500;
  private static final Logger LOG = LoggerFactory.getLogger(AzureLockClient.class);

  private final String lockFileUri;
  private final BlobServiceClient service;
  private final BlobClient lockBlob;

  /**
   * A client of the lock blob {@code lockFileUri} at {@code endpoint} (the account's blob URL, e.g.
   * {@code http://127.0.0.1:<port>/devstoreaccount1}), signed with the account's shared key.
   *
   * <p>HTTP client: azure-core-http-netty, the one azure-storage-blob depends on and the Azure SDK loads by
   * default, so the one Hudi's client runs with (hudi-azure neither excludes nor replaces it): how
   * {@code HttpClientOptions}' response and read timeouts act (a response timeout from the request's
   * sending to the response's headers, a read timeout between body reads) is that client's. The JDK and
   * OkHttp clients implement them differently.
   */
  AzureLockClient(String lockFileUri, String endpoint, String account, String key, long timeoutMs) {
    this.lockFileUri = lockFileUri;
    Duration timeout = Duration.ofMillis(timeoutMs);
    String connectionString = "DefaultEndpointsProtocol=" + URI.create(endpoint).getScheme()
        + ";AccountName=" + account + ";AccountKey=" + key + ";BlobEndpoint=" + endpoint + ";";
    this.service = new BlobServiceClientBuilder()
        // Hudi: "Disable automatic SDK retries; Hudi manages retries at the lock-provider level"
        .retryOptions(new RetryOptions(new ExponentialBackoffOptions().setMaxRetries(0)))
        .clientOptions(new HttpClientOptions().setResponseTimeout(timeout).setReadTimeout(timeout))
        .connectionString(connectionString)
        .buildClient();
    Location lock = Location.parse(lockFileUri);
    this.lockBlob = service.getBlobContainerClient(lock.container).getBlobClient(lock.blobPath);
  }

  @Override
  public Pair<LockUpsertResult, Option<StorageLockFile>> tryUpsertLockFile(
      StorageLockData newLockData, Option<StorageLockFile> previousLockFile) {
    String expectedEtag = previousLockFile.isPresent() ? previousLockFile.get().getVersionId() : null;
    try {
      return Pair.of(LockUpsertResult.SUCCESS, Option.of(upload(newLockData, expectedEtag)));
    } catch (BlobStorageException e) {
      return Pair.of(upsertResult(e), Option.empty());
    } catch (HttpResponseException e) {
      LOG.error("Unexpected Azure SDK error while writing lock file: {}", lockFileUri, e);
      if (!previousLockFile.isPresent()) {
        throw e;  // Hudi: "For create, fail fast since this indicates a larger issue."
      }
      return Pair.of(LockUpsertResult.UNKNOWN_ERROR, Option.empty());
    } catch (Exception e) {
      // a timeout, a broken connection, a missing ETag: UNKNOWN_ERROR, on a create too (S3 and GCS throw)
      LOG.error("Unexpected error while writing lock file: {}", lockFileUri, e);
      return Pair.of(LockUpsertResult.UNKNOWN_ERROR, Option.empty());
    }
  }

  @Override
  public Pair<LockGetResult, Option<StorageLockFile>> readCurrentLockFile() {
    try {
      Response<BinaryData> response = lockBlob.downloadContentWithResponse(null, null, null, Context.NONE);
      String eTag = canonicalEtag(response.getHeaders() != null ? response.getHeaders().getValue("ETag") : null,
          "download");
      return Pair.of(LockGetResult.SUCCESS,
          Option.of(StorageLockFile.createFromStream(response.getValue().toStream(), eTag)));
    } catch (BlobStorageException e) {
      return Pair.of(getResult(e), Option.empty());
    }
  }

  private LockGetResult getResult(BlobStorageException e) {
    int status = e.getStatusCode();
    if (status == NOT_FOUND || BlobErrorCode.BLOB_NOT_FOUND.equals(e.getErrorCode())) {
      LOG.info("Object not found in the path: {}", lockFileUri);
      return LockGetResult.NOT_EXISTS;
    }
    if (status == THROTTLED || status >= SERVER_ERROR_MIN) {
      LOG.warn("Lock file read answered {}: {}", status, lockFileUri);
      return LockGetResult.UNKNOWN_ERROR;
    }
    throw e;  // 409 and every other status
  }

  private StorageLockFile upload(StorageLockData data, String expectedEtag) {
    BlobRequestConditions conditions = new BlobRequestConditions();
    if (expectedEtag == null) {
      conditions.setIfNoneMatch("*");
    } else {
      conditions.setIfMatch(expectedEtag);
    }
    Response<BlockBlobItem> response = lockBlob.uploadWithResponse(
        new BlobParallelUploadOptions(BinaryData.fromBytes(StorageLockFile.toByteArray(data)))
            .setRequestConditions(conditions), null, Context.NONE);
    String eTag = response.getHeaders() != null ? response.getHeaders().getValue("ETag") : null;
    if (eTag == null && response.getValue() != null) {
      eTag = response.getValue().getETag();
    }
    return new StorageLockFile(data, canonicalEtag(eTag, "upload"));
  }

  /** The ETag as Hudi keeps it: trimmed and in double quotes; HoodieLockException when absent or half-quoted. */
  private String canonicalEtag(String eTag, String operation) {
    String trimmed = eTag == null ? "" : eTag.trim();
    if (trimmed.isEmpty()) {
      throw new HoodieLockException("Missing ETag in Azure " + operation + " response for lock file: "
          + lockFileUri);
    }
    boolean opens = trimmed.startsWith("\"");
    boolean closes = trimmed.endsWith("\"");
    if (opens && closes) {
      return trimmed;
    }
    if (!opens && !closes) {
      return "\"" + trimmed + "\"";
    }
    throw new HoodieLockException("Malformed ETag in Azure " + operation + " response for lock file: "
        + lockFileUri);
  }

  private LockUpsertResult upsertResult(BlobStorageException e) {
    int status = e.getStatusCode();
    LOG.info("Lock file write answered {} ({}): {}", status, e.getErrorCode(), lockFileUri);
    if (status == PRECONDITION_FAILED || BlobErrorCode.CONDITION_NOT_MET.equals(e.getErrorCode())) {
      return LockUpsertResult.ACQUIRED_BY_OTHERS;
    }
    if (status == THROTTLED) {
      return LockUpsertResult.THROTTLED;
    }
    // 409 (BlobAlreadyExists on a create: Azure's answer to a lost create race), 5xx, any other status
    if (status != CONFLICT && status < SERVER_ERROR_MIN) {
      LOG.warn("Error writing lock file: {}", lockFileUri, e);
    }
    return LockUpsertResult.UNKNOWN_ERROR;
  }

  @Override
  public Option<String> readObject(String filePath, boolean checkExistsFirst) {
    try {
      BlobClient blob = blob(filePath);
      if (checkExistsFirst && !blob.exists()) {
        return Option.empty();
      }
      return Option.of(new String(blob.downloadContent().toBytes(), StandardCharsets.UTF_8));
    } catch (Exception e) {
      return Option.empty();  // Hudi's client logs and returns empty on every failure
    }
  }

  @Override
  public boolean writeObject(String filePath, String content) {
    try {
      blob(filePath).upload(BinaryData.fromString(content), true);
      return true;
    } catch (Exception e) {
      LOG.error("Error writing object to: {}", filePath, e);
      return false;
    }
  }

  private BlobClient blob(String filePath) {
    Location at = Location.parse(filePath);
    return service.getBlobContainerClient(at.container).getBlobClient(at.blobPath);
  }

  @Override
  public void close() {
    // as Hudi's: a BlobServiceClient needs no closing
  }

  /** A blob's container and path, from a URI as Hudi's {@code parseAzureLocation} reads it (see the class doc). */
  private static final class Location {
    final String container;
    final String blobPath;

    private Location(String container, String blobPath) {
      this.container = container;
      this.blobPath = blobPath;
    }

    static Location parse(String uriString) {
      URI uri;
      try {
        uri = new URI(uriString);
      } catch (URISyntaxException e) {
        throw new HoodieLockException("Failed to parse Azure URI: " + uriString, e);
      }
      String scheme = uri.getScheme();
      if (scheme == null) {
        throw new IllegalArgumentException("URI does not contain a valid scheme.");
      }
      String authority = uri.getAuthority();
      String path = uri.getPath() == null ? "" : uri.getPath().replaceFirst("/", "");
      String container;
      switch (scheme.toLowerCase(Locale.ROOT)) {
        case "abfs":
        case "abfss":
        case "wasb":
        case "wasbs":
          if (authority == null || !authority.contains("@")) {
            throw new IllegalArgumentException("URI authority must be in the form '<container>@<host>': "
                + uriString);
          }
          container = authority.split("@", 2)[0];
          break;
        case "http":
        case "https": {  // a blob URL, as Hudi reads it
          BlobUrlParts parts = BlobUrlParts.parse(uriString);
          container = parts.getBlobContainerName();
          path = parts.getBlobName() == null ? "" : parts.getBlobName();
          break;
        }
        default:
          throw new IllegalArgumentException("not an Azure URI (abfs[s], wasb[s], http[s]): " + uriString);
      }
      if (container == null || container.isEmpty() || path.isEmpty()) {
        throw new IllegalArgumentException("Azure URI must contain container and path: " + uriString);
      }
      return new Location(container, path);
    }
  }
}
