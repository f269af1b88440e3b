import com.almworks.sqlite4java.SQLiteConnection;
import com.almworks.sqlite4java.SQLiteJob;
import com.almworks.sqlite4java.SQLiteQueue;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * DynamoDB Local on 127.0.0.1 only, and durable before it answers. Its jar binds every interface
 * and has no option for it, so this launcher builds the server exactly as the jar's own main does
 * (same command-line options), then sets the host of its Jetty connector before starting it. It
 * also ends when the process that started it does. Committed compiled for Java 17 in launcher/ (a
 * JRE runs it; Java's source launcher would need a JDK and a second per start): after a change,
 * `npm run build:launcher`.
 *
 * <p>Durable: DynamoDB Local answers a write before its SQLite COMMIT has run (the commit is queued
 * on its SQLite thread, not waited for), so a kill -9 right after an answer lost what it had
 * acknowledged: a credit whose queue message was then deleted, gone. Each write's answer now waits
 * until that thread has run everything queued before it, the COMMIT included.
 */
public class LoopbackDynamoDb {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Server server = (Server) read(proxy, DynamoDBProxyServer.class, "server");
    for (Connector connector : server.getConnectors()) {
      if (connector instanceof ServerConnector) ((ServerConnector) connector).setHost("127.0.0.1");
    }
    Object requests = read(read(proxy, DynamoDBProxyServer.class, "serverHandler"), "primaryHandler");
    server.setHandler(new CommittedBeforeAnswer(server.getHandler(), requests));
    // The process that started this one (npm start, a test run) holds its standard input open:
    // when that process ends, however it ended (a kill -9 too), so does this one, instead of
    // holding the port and the data folder for the next start.
    Thread parentWatch =
        new Thread(
            () -> {
              try {
                while (System.in.read() != -1) {}
              } catch (java.io.IOException ignored) {
                // A closed input is the same end.
              }
              System.exit(0);
            });
    parentWatch.setDaemon(true);
    parentWatch.start();
    proxy.start();
  }

  /** Answers a write only once DynamoDB Local's SQLite threads have run what it queued. */
  static final class CommittedBeforeAnswer extends Handler.Wrapper {
    private final Object requests;

    CommittedBeforeAnswer(Handler handler, Object requests) {
      super(handler);
      this.requests = requests;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
      String target = String.valueOf(request.getHeaders().get("X-Amz-Target"));
      // Reads queue nothing that must be on disk before their answer.
      if (!target.matches(".*\\.(Put|Update|Delete|BatchWrite|TransactWrite|Create|ExecuteStatement|ExecuteTransaction|BatchExecuteStatement).*")) {
        return super.handle(request, response, callback);
      }
      Response durable =
          new Response.Wrapper(request, response) {
            private boolean drained;

            @Override
            public void write(boolean last, ByteBuffer content, Callback written) {
              if (!drained) {
                drained = true;
                try {
                  drainQueues();
                } catch (Exception error) {
                  written.failed(error);
                  return;
                }
              }
              super.write(last, content, written);
            }
          };
      return super.handle(request, durable, callback);
    }

    /** Runs an empty job on each SQLite queue and waits for it: all queued before it has run. */
    private void drainQueues() throws Exception {
      for (SQLiteQueue queue : queues()) {
        queue
            .execute(
                new SQLiteJob<Object>() {
                  @Override
                  protected Object job(SQLiteConnection connection) {
                    return null;
                  }
                })
            .complete();
      }
    }

    /** The SQLite queue of each database DynamoDB Local has opened so far (one with -sharedDb). */
    private List<SQLiteQueue> queues() throws Exception {
      List<SQLiteQueue> queues = new ArrayList<>();
      Map<?, ?> databases = (Map<?, ?>) read(requests, "dbRequestHandlers");
      for (Object database : databases.values().toArray()) {
        Object access = read(database, "dbAccess");
        queues.add((SQLiteQueue) read(access, "queue"));
      }
      return queues;
    }
  }

  /** A field of `target`, declared by its class or one of its superclasses. */
  static Object read(Object target, String name) throws Exception {
    for (Class<?> type = target.getClass(); type != null; type = type.getSuperclass()) {
      try {
        return read(target, type, name);
      } catch (NoSuchFieldException ignored) {
        // Declared higher up.
      }
    }
    throw new NoSuchFieldException(target.getClass().getName() + "." + name);
  }

  static Object read(Object target, Class<?> type, String name) throws Exception {
    Field field = type.getDeclaredField(name);
    field.setAccessible(true);
    return field.get(target);
  }
}
