package hcc.driver;

import org.apache.hudi.client.transaction.lock.StorageLockClient;

/**
 * A public door to the harness's S3 lock client ({@link S3LockClient}, package-private), for the
 * stand-in of Hudi's {@code S3StorageLockClient} that Hudi's Spark writers load by name
 * ({@code org.apache.hudi.aws.transaction.lock.S3StorageLockClient}, this directory).
 */
public final class S3LockClients {
  private S3LockClients() {
  }

  /** The harness's S3 lock client of {@code lockFileUri}, talking to {@code endpoint} (path-style). */
  public static StorageLockClient open(String lockFileUri, String endpoint, String region, String accessKey,
                                       String secretKey, long timeoutMs) {
    return new S3LockClient(lockFileUri, endpoint, region, accessKey, secretKey, timeoutMs);
  }
}
