package hcc.driver;

import org.apache.hudi.client.transaction.lock.HarnessLockProviders;
import org.apache.hudi.client.transaction.lock.StorageBasedLockProvider;
import org.apache.hudi.client.transaction.lock.StorageLockClient;
import org.apache.hudi.client.transaction.lock.models.StorageLockFile;
import org.apache.hudi.common.config.TypedProperties;
import org.apache.hudi.common.util.Functions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One node of the harness's {@code hudi} world: Hudi's own {@link StorageBasedLockProvider}s, driven over
 * JSON lines (stdin: commands, stdout: replies and events; Hudi's log goes to stderr).
 *
 * <p>Every provider call runs on one thread, the node's writer thread, as a Hudi writer calls its
 * {@code LockManager} from its own thread: {@code tryLock} hands that thread to Hudi's heartbeat manager,
 * which interrupts it when a renewal finds the lock taken. The thread waits for its next command in
 * {@code take()}, so such an interrupt ends that wait and is reported at once as
 * {@code {"event": "interrupted"}}; an interrupt during a call is reported in the call's reply. The
 * flag is then cleared here: the harness's writer task carries it (its interrupt policy decides where it
 * is seen), as the writer's own code would.
 *
 * <p>Commands: {@code new} (provider, owner, props, clock_offset_ms, client), {@code tryLock}
 * (provider, wait_ms: result {@code {before, acquired, after}}, the provider's lock before and after),
 * {@code unlock}, {@code close}, {@code getLock} (provider), {@code writer-death}
 * (the writer thread ends after its current call; Hudi's heartbeat sees it dead). Each command has an
 * {@code id}; its reply {@code {"id", "ok", "result" | "error", "message", "causes", "interrupted",
 * "t0", "t1"}} comes when the call returns, times in epoch ms of the machine's clock.
 */
public final class LockDriver {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNode STOP = JSON.createObjectNode();

  private final PrintStream out;
  private final Map<String, StorageBasedLockProvider> providers = new HashMap<>();
  private final LinkedBlockingQueue<JsonNode> commands = new LinkedBlockingQueue<>();
  private volatile Thread writer;
  private volatile boolean writerDead;

  private LockDriver(PrintStream out) {
    this.out = out;
  }

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    System.setOut(System.err);  // anything else printed goes to the log, never to the protocol
    new LockDriver(out).serve(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)));
  }

  private void serve(BufferedReader in) throws Exception {
    emit(event("ready"));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) {
        continue;
      }
      JsonNode cmd = JSON.readTree(line);
      if ("writer-death".equals(cmd.path("op").asText())) {
        Thread w = writer;
        writerDead = true;
        if (w != null) {
          w.interrupt();  // a waiting writer thread ends now; a busy one after its call
        }
        emit(reply(cmd).put("ok", true));
        continue;
      }
      if (writer == null || !writer.isAlive()) {
        writerDead = false;
        commands.clear();
        Thread w = new Thread(this::writerLoop, "hcc-writer");
        w.setDaemon(true);
        writer = w;
        w.start();
      }
      commands.put(cmd);
    }
    commands.put(STOP);  // stdin closed: the harness is gone
  }

  private void writerLoop() {
    while (true) {
      JsonNode cmd;
      try {
        cmd = commands.take();
      } catch (InterruptedException e) {
        if (writerDead) {
          return;
        }
        emit(event("interrupted"));
        continue;
      }
      if (cmd == STOP) {
        return;
      }
      ObjectNode reply = reply(cmd);
      reply.put("t0", System.currentTimeMillis());
      try {
        reply.set("result", call(cmd));
        reply.put("ok", true);
      } catch (Throwable e) {
        reply.put("ok", false);
        reply.put("error", e.getClass().getName());
        reply.put("message", String.valueOf(e.getMessage()));
        StringBuilder causes = new StringBuilder();
        for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
          causes.append(causes.length() == 0 ? "" : " <- ").append(c.getClass().getName());
        }
        reply.put("causes", causes.toString());
      }
      reply.put("t1", System.currentTimeMillis());
      reply.put("interrupted", Thread.interrupted());
      emit(reply);
      if (writerDead) {
        return;
      }
    }
  }

  private JsonNode call(JsonNode cmd) {
    String op = cmd.path("op").asText();
    String id = cmd.path("provider").asText();
    if ("new".equals(op)) {
      providers.put(id, newProvider(cmd));
      return JSON.getNodeFactory().nullNode();
    }
    StorageBasedLockProvider provider = providers.get(id);
    if (provider == null) {
      throw new IllegalArgumentException("no provider " + id);
    }
    switch (op) {
      case "tryLock": {
        // the lock the provider held before and after: equal versions mean tryLock's reentrant branch
        ObjectNode result = JSON.createObjectNode();
        result.set("before", lockFile(provider.getLock()));
        result.put("acquired", provider.tryLock(cmd.path("wait_ms").asLong(), TimeUnit.MILLISECONDS));
        result.set("after", lockFile(provider.getLock()));
        return result;
      }
      case "unlock":
        provider.unlock();
        return JSON.getNodeFactory().nullNode();
      case "close":
        providers.remove(id);
        provider.close();
        return JSON.getNodeFactory().nullNode();
      case "getLock":
        return lockFile(provider.getLock());
      default:
        throw new IllegalArgumentException("unknown op " + op);
    }
  }

  private static StorageBasedLockProvider newProvider(JsonNode cmd) {
    TypedProperties props = new TypedProperties();
    for (Iterator<Map.Entry<String, JsonNode>> it = cmd.path("props").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      props.setProperty(e.getKey(), e.getValue().asText());
    }
    JsonNode client = cmd.path("client");
    String kind = client.path("kind").asText();
    String endpoint = client.path("endpoint").asText();
    long timeoutMs = client.path("timeout_ms").asLong();
    Functions.Function3<String, String, TypedProperties, StorageLockClient> loader;
    if ("s3".equals(kind)) {
      loader = (ownerId, lockFileUri, p) -> new S3LockClient(lockFileUri, endpoint,
          client.path("region").asText(), client.path("access_key").asText(), client.path("secret_key").asText(),
          timeoutMs);
    } else if ("azure".equals(kind)) {
      loader = (ownerId, lockFileUri, p) -> new AzureLockClient(lockFileUri, endpoint,
          client.path("account").asText(), client.path("key").asText(), timeoutMs);
    } else if ("gcs".equals(kind)) {
      loader = (ownerId, lockFileUri, p) -> new GcsLockClient(ownerId, lockFileUri, endpoint,
          client.path("project").asText(), timeoutMs);
    } else {
      throw new IllegalArgumentException("no lock client of kind " + kind);
    }
    return HarnessLockProviders.create(cmd.path("owner").asText(), props, loader,
        cmd.path("clock_offset_ms").asLong());
  }

  private static JsonNode lockFile(StorageLockFile lock) {
    if (lock == null) {
      return JSON.getNodeFactory().nullNode();
    }
    ObjectNode node = JSON.createObjectNode();
    node.put("owner", lock.getOwner());
    node.put("valid_until", lock.getValidUntilMs());
    node.put("expired", lock.isExpired());
    node.put("version", lock.getVersionId());
    return node;
  }

  private static ObjectNode reply(JsonNode cmd) {
    ObjectNode r = JSON.createObjectNode();
    r.set("id", cmd.path("id"));
    return r;
  }

  private static ObjectNode event(String name) {
    ObjectNode e = JSON.createObjectNode();
    e.put("event", name);
    e.put("t", System.currentTimeMillis());
    return e;
  }

  private synchronized void emit(JsonNode message) {
    try {
      out.println(JSON.writeValueAsString(message));
      out.flush();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
