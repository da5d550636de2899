package hcc.driver;

import org.apache.hudi.client.transaction.lock.StorageLockClient;
import org.apache.hudi.client.transaction.lock.models.LockGetResult;
import org.apache.hudi.client.transaction.lock.models.LockUpsertResult;
import org.apache.hudi.client.transaction.lock.models.StorageLockData;
import org.apache.hudi.client.transaction.lock.models.StorageLockFile;
import org.apache.hudi.common.util.Option;
import org.apache.hudi.common.util.collection.Pair;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;

/**
 * The harness's S3 lock client: Hudi's {@code S3StorageLockClient} (hudi-aws, not published on the Maven
 * Central this harness reaches) written again against the same AWS SDK v2 release Hudi pins (2.29.52).
 *
 * <p>Its requests and the way each answer becomes a result follow Hudi's client as read at apache/hudi
 * 54cb1a57 ({@code readCurrentLockFile}, {@code tryUpsertLockFile} with {@code handleUpsertS3Exception},
 * {@code readObject}, {@code writeObject}): a GetObject of the lock file (404 NOT_EXISTS; 409, 429, 5xx
 * UNKNOWN_ERROR; any other S3Exception thrown; a client-side failure not caught), a PutObject with
 * If-None-Match * or If-Match the cached ETag (412 ACQUIRED_BY_OTHERS, 429 THROTTLED, other statuses
 * UNKNOWN_ERROR; a client-side failure thrown on a create, UNKNOWN_ERROR on a renewal or expire), one
 * attempt per call and an API call timeout. What differs, and why: the endpoint is the fault proxy's
 * (Hudi's client has no endpoint setting), path-style addressing, static credentials, and the timeout
 * is given by the harness (Hudi's is validity / 5 in whole seconds; the harness passes the same value
 * unless a scenario sets {@code storage.timeout_ms}).
 */
final class S3LockClient implements StorageLockClient {
  private static final int PRECONDITION_FAILED = 412;
  private static final int NOT_FOUND = 404;
  private static final int CONFLICT = 409;
  private static final int THROTTLED = 429;
  private static final int SERVER_ERROR_MIN = 500;
  private static final Logger LOG = LoggerFactory.getLogger(S3LockClient.class);

  private final S3Client s3;
  private final String bucket;
  private final String lockKey;

  S3LockClient(String lockFileUri, String endpoint, String region, String accessKey, String secretKey,
               long timeoutMs) {
    Pair<String, String> bucketAndPath = StorageLockClient.parseBucketAndPath(lockFileUri);
    this.bucket = bucketAndPath.getLeft();
    this.lockKey = bucketAndPath.getRight();
    this.s3 = S3Client.builder()
        .endpointOverride(URI.create(endpoint))
        .forcePathStyle(true)
        // whole-payload signing: the aws-chunked streaming signature is refused by SeaweedFS without S3
        // auth set up (the harness's servers run without it); the requests are otherwise the same
        .serviceConfiguration(S3Configuration.builder().chunkedEncodingEnabled(false).build())
        .region(Region.of(region))
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
        .overrideConfiguration(b -> b.apiCallTimeout(Duration.ofMillis(timeoutMs))
            .retryStrategy(r -> r.maxAttempts(1)))
        .build();
  }

  @Override
  public Pair<LockGetResult, Option<StorageLockFile>> readCurrentLockFile() {
    try (ResponseInputStream<GetObjectResponse> in = s3.getObject(
        GetObjectRequest.builder().bucket(bucket).key(lockKey).build())) {
      String eTag = in.response().eTag();
      return Pair.of(LockGetResult.SUCCESS, Option.of(StorageLockFile.createFromStream(in, eTag)));
    } catch (S3Exception e) {
      int status = e.statusCode();
      if (status == NOT_FOUND) {
        return Pair.of(LockGetResult.NOT_EXISTS, Option.empty());
      }
      if (status == CONFLICT || status == THROTTLED || status >= SERVER_ERROR_MIN) {
        LOG.warn("Lock file read answered {}: {}", status, lockKey);
        return Pair.of(LockGetResult.UNKNOWN_ERROR, Option.empty());
      }
      throw e;
    } catch (IOException e) {
      throw new UncheckedIOException("Failed reading lock file from S3: " + lockKey, e);
    }
  }

  @Override
  public Pair<LockUpsertResult, Option<StorageLockFile>> tryUpsertLockFile(
      StorageLockData newLockData, Option<StorageLockFile> previousLockFile) {
    boolean renewal = previousLockFile.isPresent();
    PutObjectRequest.Builder put = PutObjectRequest.builder().bucket(bucket).key(lockKey);
    if (renewal) {
      put.ifMatch(previousLockFile.get().getVersionId());
    } else {
      put.ifNoneMatch("*");
    }
    try {
      PutObjectResponse response = s3.putObject(put.build(),
          RequestBody.fromBytes(StorageLockFile.toByteArray(newLockData)));
      return Pair.of(LockUpsertResult.SUCCESS, Option.of(new StorageLockFile(newLockData, response.eTag())));
    } catch (S3Exception e) {
      int status = e.statusCode();
      LOG.info("Lock file write answered {}: {}", status, lockKey);
      if (status == PRECONDITION_FAILED) {
        return Pair.of(LockUpsertResult.ACQUIRED_BY_OTHERS, Option.empty());
      }
      if (status == THROTTLED) {
        return Pair.of(LockUpsertResult.THROTTLED, Option.empty());
      }
      return Pair.of(LockUpsertResult.UNKNOWN_ERROR, Option.empty());
    } catch (AwsServiceException | SdkClientException e) {
      LOG.error("Unexpected SDK error while writing lock file: {}", lockKey, e);  // as Hudi's client logs it
      if (!renewal) {
        throw e;  // Hudi: "always throw errors early when we are creating the lock file"
      }
      return Pair.of(LockUpsertResult.UNKNOWN_ERROR, Option.empty());
    }
  }

  @Override
  public Option<String> readObject(String filePath, boolean checkExistsFirst) {
    try {
      Pair<String, String> bucketAndKey = StorageLockClient.parseBucketAndPath(filePath);
      if (checkExistsFirst) {
        try {
          s3.headObject(HeadObjectRequest.builder().bucket(bucketAndKey.getLeft())
              .key(bucketAndKey.getRight()).build());
        } catch (S3Exception e) {
          if (e.statusCode() == NOT_FOUND) {
            return Option.empty();
          }
          throw e;
        }
      }
      return Option.of(s3.getObjectAsBytes(GetObjectRequest.builder().bucket(bucketAndKey.getLeft())
          .key(bucketAndKey.getRight()).build()).asUtf8String());
    } catch (Exception e) {
      return Option.empty();  // Hudi's client logs and returns empty on every failure
    }
  }

  @Override
  public boolean writeObject(String filePath, String content) {
    try {
      Pair<String, String> bucketAndKey = StorageLockClient.parseBucketAndPath(filePath);
      s3.putObject(PutObjectRequest.builder().bucket(bucketAndKey.getLeft()).key(bucketAndKey.getRight()).build(),
          RequestBody.fromString(content));
      return true;
    } catch (Exception e) {
      return false;
    }
  }

  @Override
  public void close() {
    s3.close();
  }
}
