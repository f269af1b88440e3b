import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * DynamoDB Local on 127.0.0.1 only. Its jar binds every interface and has no option for it, so this
 * launcher builds the server exactly as the jar's own main does (same command-line options), then
 * sets the host of its Jetty connector before starting it. It also ends when the process that
 * started it does. Committed compiled for Java 17 in launcher/ (a JRE runs it; Java's source
 * launcher would need a JDK and a second per start): after a change, `npm run build:launcher`.
 */
public class LoopbackDynamoDb {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    for (Connector connector : server.getConnectors()) {
      if (connector instanceof ServerConnector) ((ServerConnector) connector).setHost("127.0.0.1");
    }
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
}
