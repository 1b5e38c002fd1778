package io.parambus.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * pbusd killed (SIGKILL, as in a crash) and started again: the client notices, reconnects
 * with backoff, checks the schema and subscribes again; requests while pbusd is down fail
 * fast; another schema ends the reconnecting ({@code ESTALE}).
 */
class ReconnectTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private static <T> T poll(BlockingQueue<T> q, String what) throws InterruptedException {
        T v = q.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertNotNull(v, what + " did not come within " + WAIT);
        return v;
    }

    @Test
    void afterARestartTheClientReconnectsAndSubscribesAgain() throws Exception {
        try (Pbusd pbusd = Pbusd.start(Pbusd.fixture("tests/server/fixtures/server.pbs"));
                PbusClient client = pbusd.client()) {
            int level = client.schema().find("level");
            int trim = client.schema().find("trim");
            BlockingQueue<String> states = new LinkedBlockingQueue<>();
            client.addConnectionListener((state, cause) -> states.add(state + (cause != null ? " " + cause.errno() : "")));
            SubscriptionTest.Recorder r = new SubscriptionTest.Recorder();
            Subscription listened = client.subscribe(new int[] {level}, SubscribeOptions.defaults(), r);
            Subscription pulled = client.subscribe(new int[] {trim}, SubscribeOptions.defaults());
            r.next();
            pulled.next(WAIT);
            client.batch().setDouble(level, 7).setLong(trim, 3).commit();
            assertEquals(7.0, r.next().get(0).asDouble());
            assertEquals(3, pulled.next(WAIT).get(0).asInt());
            long oldPid = client.serverInfo().pid();

            pbusd.kill();
            assertEquals("DISCONNECTED ECONNRESET", poll(states, "DISCONNECTED"));
            assertEquals("disconnected", poll(r.events, "onDisconnected"));
            assertTrue(!client.isConnected() && !listened.isActive());
            // pbusd is down: a request tries once at once and fails fast.
            long t0 = System.nanoTime();
            ConnectionException down = assertThrows(ConnectionException.class, () -> client.get(level));
            assertEquals("ENOTCONN", down.errno());
            assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(1).toNanos(), "failed fast");
            assertTrue(down.getMessage().contains("ECONNREFUSED") || down.getMessage().contains("ENOENT"), down.getMessage());

            pbusd.start();
            assertEquals("CONNECTED", poll(states, "CONNECTED"));
            assertEquals("resubscribed", poll(r.events, "onResubscribed"));
            List<Value> fresh = r.next();
            assertEquals(0.0, fresh.get(0).asDouble(), "the new pbusd's value (level is not persistent)");
            assertEquals(0, pulled.next(WAIT).get(0).asInt(), "a pull subscription gets the values again");
            assertTrue(listened.isActive() && pulled.isActive());
            assertTrue(client.serverInfo().pid() != oldPid && client.serverInfo().pid() == pbusd.pid());
            client.batch().setDouble(level, 8).commit();
            assertEquals(8.0, r.next().get(0).asDouble());
            assertEquals(0, states.size(), "more connection events: " + states);
        }
    }

    @Test
    void withoutListenersARequestReconnectsAtOnce() throws Exception {
        try (Pbusd pbusd = Pbusd.start(Pbusd.fixture("tests/server/fixtures/server.pbs"));
                PbusClient client = PbusClient.connect(pbusd.instance,
                        pbusd.options().withReconnectDelay(Duration.ofSeconds(30), Duration.ofSeconds(30)))) {
            assertEquals(25.5, client.get("temperature").asDouble());
            pbusd.kill();
            pbusd.start();
            // No dispatcher runs (no subscription, no listener) and the schedule is 30 s away:
            // the request itself reconnects (its frame went to a closed socket, or it finds
            // the connection gone), at once.
            long t0 = System.nanoTime();
            assertEquals(25.5, client.get("temperature").asDouble());
            assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(2).toNanos());
            assertTrue(client.isConnected());
            assertEquals(pbusd.pid(), client.serverInfo().pid());
            assertTrue(!client.hasEvents(), "events kept for listeners that do not exist");
        }
    }

    @Test
    void anotherSchemaEndsTheReconnecting() throws Exception {
        try (Pbusd pbusd = Pbusd.start(Pbusd.fixture("tests/server/fixtures/server.pbs"));
                PbusClient client = pbusd.client()) {
            BlockingQueue<String> states = new LinkedBlockingQueue<>();
            client.addConnectionListener((state, cause) -> states.add(state + (cause != null ? " " + cause.errno() : "")));
            pbusd.kill();
            assertEquals("DISCONNECTED ECONNRESET", poll(states, "DISCONNECTED"));
            pbusd.useSchema(Pbusd.fixture("tests/cli/fixtures/test.pbs"));
            pbusd.start();
            assertEquals("CLOSED ESTALE", poll(states, "CLOSED"));
            ConnectionException e = assertThrows(ConnectionException.class, () -> client.get("level"));
            assertEquals("ENOTCONN", e.errno());
            assertTrue(e.getMessage().contains("schema hash differs"), e.getMessage());
        }
    }

    @Test
    void withoutReconnectingALostConnectionStaysLost() throws Exception {
        try (Pbusd pbusd = Pbusd.start(Pbusd.fixture("tests/server/fixtures/server.pbs"));
                PbusClient client = PbusClient.connect(pbusd.instance, pbusd.options().withReconnect(false))) {
            Subscription s = client.subscribe(new int[] {client.schema().find("trim")}, SubscribeOptions.defaults());
            s.next(WAIT);
            pbusd.stop();
            pbusd.start();
            ConnectionException e = assertThrows(ConnectionException.class, () -> client.get("trim"));
            assertEquals("ENOTCONN", e.errno());
            assertEquals(List.of(), s.next(Duration.ofMillis(300)), "no resubscription");
        }
    }
}
