package io.parambus.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Subscriptions against a real pbusd (tests/server/fixtures/server.pbs): the first values,
 * changes made by another client, the deadband, the rate limit, closing, prefixes, the
 * dispatcher thread's callbacks (which may make requests) and pull-mode {@code next}.
 */
class SubscriptionTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static Pbusd pbusd;
    private static PbusClient client;
    private static PbusClient writer;

    @BeforeAll
    static void start() throws IOException {
        pbusd = Pbusd.start(Pbusd.fixture("tests/server/fixtures/server.pbs"));
        client = pbusd.client();
        writer = PbusClient.connect(pbusd.instance, pbusd.options().withName("writer"));
    }

    @AfterAll
    static void stop() throws IOException {
        for (AutoCloseable c : new AutoCloseable[] {client, writer, pbusd}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                throw new IOException(e);
            }
        }
    }

    private static int i(String name) {
        return client.schema().find(name);
    }

    /** A listener that queues what it gets, with the thread it ran on. */
    static final class Recorder implements SubscriptionListener {
        final BlockingQueue<List<Value>> values = new LinkedBlockingQueue<>();
        final BlockingQueue<String> events = new LinkedBlockingQueue<>();
        volatile Thread thread;

        @Override
        public void onValues(Subscription subscription, List<Value> v) {
            thread = Thread.currentThread();
            values.add(v);
        }

        @Override
        public void onDisconnected(Subscription subscription) {
            events.add("disconnected");
        }

        @Override
        public void onResubscribed(Subscription subscription) {
            events.add("resubscribed");
        }

        List<Value> next() throws InterruptedException {
            List<Value> v = values.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertNotNull(v, "no notification within " + WAIT);
            return v;
        }
    }

    @Test
    void aListenerGetsTheValuesThenEveryChange() throws Exception {
        Recorder r = new Recorder();
        try (Subscription s = client.subscribe(new int[] {i("offset_counts"), i("label")}, SubscribeOptions.defaults(), r)) {
            List<Value> first = r.next();
            assertEquals(List.of("offset_counts", "label"), first.stream().map(Value::name).toList());
            assertTrue(s.isActive());
            assertTrue(r.thread.getName().startsWith("pbus-client-"), r.thread.getName());
            long[] versions = writer.batch().setLong("offset_counts", 77).commit();
            List<Value> change = r.next();
            assertEquals(1, change.size(), "only what changed: " + change);
            assertEquals(77, change.get(0).asInt());
            assertEquals(versions[0], change.get(0).version());
            writer.batch().setString("label", "x").setLong("offset_counts", 78).commit();
            List<Value> both = new ArrayList<>(r.next());
            while (both.size() < 2) {
                both.addAll(r.next());
            }
            assertEquals("x", both.stream().filter(v -> v.name().equals("label")).findFirst().orElseThrow().asString());
        }
    }

    @Test
    void nextCoalescesAndWaits() throws Exception {
        try (Subscription s = client.subscribe(new int[] {i("trim"), i("averaging")}, SubscribeOptions.defaults())) {
            List<Value> first = s.next(WAIT);
            assertEquals(2, first.size());
            assertEquals(List.of(), s.next(Duration.ofMillis(50)), "nothing changed: an empty list after the timeout");
            for (int k = 1; k <= 5; k++) {
                writer.batch().setLong("trim", k).commit();
            }
            int last = 0;
            while (last != 5) {
                List<Value> v = s.next(WAIT);
                assertFalse(v.isEmpty(), "the last write's value never came");
                assertEquals(1, v.size(), "one value per parameter, the latest: " + v);
                assertEquals("trim", v.get(0).name());
                assertTrue(v.get(0).asInt() > last, "values go forward: " + v);
                last = v.get(0).asInt();
            }
            assertThrows(IllegalStateException.class, () -> client.subscribe(new int[] {i("trim")}, SubscribeOptions.defaults(),
                    (sub, v) -> { }).next(Duration.ZERO));
        }
    }

    /**
     * The deadband (socket-protocol.md §3.4): each step writes, then a marker (bytes, which
     * the deadband ignores); once the marker is seen, everything the step could cause was
     * notified, so a value that did not come was dropped by pbusd.
     */
    @Test
    void theDeadbandDropsSmallChanges() throws Exception {
        writer.batch().setDouble("level", 0).commit();
        try (Subscription s = client.subscribe(new int[] {i("level"), i("calibration")},
                SubscribeOptions.defaults().withDeadband(1.0))) {
            s.next(WAIT);
            double[][] steps = {{0.5, Double.NaN}, {0.9, Double.NaN}, {1.2, 1.2}, {2.1, Double.NaN}, {0.1, 0.1},
                {-0.899, Double.NaN}, {-0.9, -0.9}};
            byte marker = 0;
            for (double[] step : steps) {
                writer.batch().setDouble("level", step[0]).commit();
                marker++;
                writer.batch().setBytes("calibration", new byte[] {marker}).commit();
                List<Double> levels = new ArrayList<>();
                boolean seen = false;
                while (!seen) {
                    List<Value> v = s.next(WAIT);
                    assertFalse(v.isEmpty(), "the marker of level " + step[0] + " never came");
                    for (Value x : v) {
                        if (x.name().equals("level")) {
                            levels.add(x.asDouble());
                        } else if (Arrays.equals(x.asBytes(), new byte[] {marker})) {
                            seen = true;
                        }
                    }
                }
                if (Double.isNaN(step[1])) {
                    assertEquals(List.of(), levels, "level " + step[0] + " is within the deadband of the last sent");
                } else {
                    assertEquals(List.of(step[1]), levels, "level " + step[0] + " is beyond the deadband");
                }
            }
        }
    }

    /** At most one notification per interval, and the last value comes (§3.4's min_interval_us). */
    @Test
    void theRateIsLimited() throws Exception {
        Duration interval = Duration.ofMillis(200);
        BlockingQueue<long[]> arrivals = new LinkedBlockingQueue<>();
        try (Subscription s = client.subscribe(new int[] {i("sample_rate")}, SubscribeOptions.defaults().withMaxRate(5),
                (sub, values) -> arrivals.add(new long[] {System.nanoTime(), values.get(0).asLong()}))) {
            assertEquals(200_000, s.options().minIntervalMicros());
            long[] first = arrivals.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertNotNull(first);
            List<long[]> got = new ArrayList<>();
            got.add(first);
            long end = System.nanoTime() + Duration.ofMillis(1200).toNanos();
            long value = 100;
            while (System.nanoTime() < end) {
                writer.batch().setLong("sample_rate", ++value).commit();
                long[] a = arrivals.poll(10, TimeUnit.MILLISECONDS);
                if (a != null) {
                    got.add(a);
                }
            }
            while (got.get(got.size() - 1)[1] != value) {
                long[] a = arrivals.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                assertNotNull(a, "the last value " + value + " never came");
                got.add(a);
            }
            List<Long> gaps = new ArrayList<>();
            for (int k = 1; k < got.size(); k++) {
                gaps.add((got.get(k)[0] - got.get(k - 1)[0]) / 1_000_000);
            }
            // Arrival times jitter by a scheduling delay: 25 % tolerance.
            assertTrue(gaps.stream().allMatch(g -> g >= interval.toMillis() * 3 / 4), "notifications closer than 200 ms: " + gaps);
            assertTrue(got.size() >= 4 && got.size() <= 9, got.size() + " notifications for " + (value - 100)
                    + " changes in 1.2 s: " + gaps);
        }
    }

    @Test
    void aClosedSubscriptionGetsNothingMore() throws Exception {
        Recorder a = new Recorder();
        Subscription sa = client.subscribe(new int[] {i("energy_uj")}, SubscribeOptions.defaults(), a);
        a.next();
        Subscription marker = client.subscribe(new int[] {i("calibration")}, SubscribeOptions.defaults());
        marker.next(WAIT);
        sa.close();
        assertTrue(sa.isClosed());
        assertFalse(sa.isActive());
        sa.close();
        writer.batch().setLong("energy_uj", 5).commit();
        writer.batch().setBytes("calibration", new byte[] {42}).commit();
        List<Value> m = marker.next(WAIT);
        assertEquals(42, m.get(0).asBytes()[0]);
        marker.close();
        // Deliveries happen in order on the dispatcher: one more round trip through it.
        Recorder b = new Recorder();
        try (Subscription sb = client.subscribe(new int[] {i("energy_uj")}, SubscribeOptions.defaults(), b)) {
            assertEquals(5, b.next().get(0).asLong());
            assertTrue(sb.isActive());
        }
        assertEquals(0, a.values.size(), "notified after close: " + a.values);
    }

    @Test
    void prefixesAndCallbacksThatMakeRequests() throws Exception {
        BlockingQueue<String> got = new LinkedBlockingQueue<>();
        try (Subscription s = client.subscribePrefix("identity.", SubscribeOptions.defaults(), (sub, values) -> {
            // A request from the dispatcher thread: it must not wait for itself.
            got.add(values.size() + " " + sub.client().get("identity.serial").asString());
        })) {
            assertEquals("2 SN-0001", got.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS));
            assertEquals(2, s.indexes().length);
        }
        try (Subscription all = client.subscribePrefix("", SubscribeOptions.defaults())) {
            assertEquals(24, all.next(WAIT).size(), "every parameter but noread and nosubscriptions");
        }
    }

    @Test
    void anExceptionOfACallbackDoesNotStopDelivery() throws Exception {
        BlockingQueue<Throwable> uncaught = new LinkedBlockingQueue<>();
        ClientOptions o = pbusd.options().withDispatcherFactory(r -> {
            Thread t = Thread.ofPlatform().daemon().name("custom-dispatcher").unstarted(r);
            t.setUncaughtExceptionHandler((th, e) -> uncaught.add(e));
            return t;
        });
        try (PbusClient c = PbusClient.connect(pbusd.instance, o)) {
            Recorder r = new Recorder();
            c.subscribe(new int[] {i("gain")}, SubscribeOptions.defaults(), (sub, v) -> {
                throw new IllegalStateException("callback fails");
            });
            c.subscribe(new int[] {i("gain")}, SubscribeOptions.defaults(), r);
            r.next();
            assertEquals("custom-dispatcher", r.thread.getName());
            Throwable t = uncaught.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertNotNull(t);
            assertEquals("callback fails", t.getMessage());
        }
    }
}
