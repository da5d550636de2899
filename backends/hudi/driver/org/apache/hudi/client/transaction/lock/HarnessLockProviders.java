package org.apache.hudi.client.transaction.lock;

import org.apache.hudi.client.transaction.lock.models.LockProviderHeartbeatManager;
import org.apache.hudi.common.config.TypedProperties;
import org.apache.hudi.common.util.Functions;

import org.slf4j.LoggerFactory;

/**
 * Builds Hudi's own {@link StorageBasedLockProvider} with a lock client of the harness.
 *
 * <p>It lives in Hudi's package only to reach the provider's package-private constructor, the one
 * Hudi's own tests use to inject a lock client (its public constructors pick the client class by the
 * base path's scheme, and Hudi's S3, GCS and Azure clients are not published on the Maven Central
 * this harness reaches). The heartbeat manager is Hudi's {@code LockProviderHeartbeatManager}, as in
 * the public constructors. The only override is {@code getCurrentEpochMs}, Hudi's own test seam for
 * the provider's clock: it adds the node's clock offset.
 */
public final class HarnessLockProviders {
  private HarnessLockProviders() {
  }

  /** A provider with owner id {@code ownerId} whose clock reads the machine's plus {@code clockOffsetMs}. */
  public static StorageBasedLockProvider create(
      String ownerId,
      TypedProperties props,
      Functions.Function3<String, String, TypedProperties, StorageLockClient> clientLoader,
      long clockOffsetMs) {
    return new StorageBasedLockProvider(
        ownerId,
        props,
        LockProviderHeartbeatManager::new,
        clientLoader,
        LoggerFactory.getLogger(StorageBasedLockProvider.class),
        null) {
      @Override
      long getCurrentEpochMs() {
        return System.currentTimeMillis() + clockOffsetMs;
      }
    };
  }
}
