package org.apache.hudi.aws.transaction.lock;

import hcc.driver.S3LockClients;

import org.apache.hudi.client.transaction.lock.StorageLockClient;
import org.apache.hudi.client.transaction.lock.models.LockGetResult;
import org.apache.hudi.client.transaction.lock.models.LockUpsertResult;
import org.apache.hudi.client.transaction.lock.models.StorageLockData;
import org.apache.hudi.client.transaction.lock.models.StorageLockFile;
import org.apache.hudi.common.util.Option;
import org.apache.hudi.common.util.collection.Pair;

import java.util.Properties;

/**
 * NOT Hudi's class: the harness's stand-in under the name Hudi's {@code StorageBasedLockProvider} loads
 * for s3/s3a base paths ({@code StorageSchemes.S3/S3A.getStorageLockClass()}), with its constructor
 * signature {@code (String ownerId, String lockFileUri, Properties props)}. Hudi's own class is in hudi-aws,
 * which the Maven Central reached here does not serve (404 for every 1.2.x), so Hudi's Spark writers run
 * the harness's transcription of it ({@code hcc.driver.S3LockClient}), reached through the fault proxy.
 *
 * <p>The endpoint and credentials come from the lock properties {@code hoodie.write.lock.hcc.s3.endpoint},
 * {@code .region}, {@code .access.key}, {@code .secret.key} (else the JVM system properties of the same
 * names). The API call timeout is Hudi's: the lock validity / 5, in whole seconds.
 */
public class S3StorageLockClient implements StorageLockClient {
  static final String PREFIX = "hoodie.write.lock.hcc.s3.";
  private static final String VALIDITY = "hoodie.write.lock.storage.validity.timeout.secs";

  private final StorageLockClient delegate;

  public S3StorageLockClient(String ownerId, String lockFileUri, Properties props) {
    String endpoint = setting(props, "endpoint", null);
    if (endpoint == null) {
      throw new IllegalArgumentException(PREFIX + "endpoint is not set: the harness's S3 lock client "
          + "needs the fault proxy's endpoint");
    }
    long validitySecs = Long.parseLong(props.getProperty(VALIDITY, "300"));
    long timeoutMs = Math.max(1L, validitySecs / 5) * 1000L;
    this.delegate = S3LockClients.open(lockFileUri, endpoint, setting(props, "region", "us-east-1"),
        setting(props, "access.key", "any"), setting(props, "secret.key", "any"), timeoutMs);
  }

  private static String setting(Properties props, String name, String fallback) {
    String v = props.getProperty(PREFIX + name);
    return v != null ? v : System.getProperty(PREFIX + name, fallback);
  }

  @Override
  public Pair<LockUpsertResult, Option<StorageLockFile>> tryUpsertLockFile(StorageLockData newLockData,
                                                                          Option<StorageLockFile> previousLockFile) {
    return delegate.tryUpsertLockFile(newLockData, previousLockFile);
  }

  @Override
  public Pair<LockGetResult, Option<StorageLockFile>> readCurrentLockFile() {
    return delegate.readCurrentLockFile();
  }

  @Override
  public Option<String> readObject(String filePath, boolean checkExistsFirst) {
    return delegate.readObject(filePath, checkExistsFirst);
  }

  @Override
  public boolean writeObject(String filePath, String content) {
    return delegate.writeObject(filePath, content);
  }

  @Override
  public void close() throws Exception {
    delegate.close();
  }
}
