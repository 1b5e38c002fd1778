package io.parambus;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The table against a real pbusd serving tests/cli/fixtures/test.pbs: what it reads of
 * the schema, values round-tripped with the C command line ({@code pbus get},
 * {@code pbus set}), every refusal of a write, waiting woken by C writes, batches, the
 * schema check, and the owner checks of docs/security.md.
 */
class LiveTableTest {
    private static Daemon pbusd;

    @BeforeAll
    static void startPbusd() {
        pbusd = Daemon.start(Daemon.cliSchema());
    }

    @AfterAll
    static void stopPbusd() {
        if (pbusd != null) {
            pbusd.close();
        }
    }

    private static void pbusSet(String... assignments) {
        String[] args = new String[assignments.length + 1];
        args[0] = "set";
        System.arraycopy(assignments, 0, args, 1, assignments.length);
        Daemon.Result r = pbusd.pbus(args);
        assertEquals(0, r.status(), "pbus set: " + r.err());
    }

    private static String pbusGet(String name) {
        Daemon.Result r = pbusd.pbus("get", name);
        assertEquals(0, r.status(), "pbus get: " + r.err());
        return r.out().strip();
    }

    @Test
    void opensAndDescribesTheSchema() {
        try (ParamTable t = ParamTable.open(pbusd.instance)) {
            assertEquals("com.example.test.CliTest", t.interfaceName());
            assertEquals(1, t.interfaceMajor());
            assertEquals(2, t.interfaceMinor());
            assertEquals(21, t.paramCount());
            assertEquals(TableState.LIVE, t.state());
            assertEquals(pbusd.pid(), t.ownerPid());
            assertFalse(t.wakeIsStandIn());
            assertEquals(ParamTable.Access.READ, t.access());
            Param trim = t.param("trim");
            assertEquals(3, trim.index());
            assertEquals(ParamType.INT8, trim.type());
            assertTrue(trim.hasMin() && trim.hasMax());
            assertEquals(-10, trim.minBits());
            assertEquals(10, trim.maxBits());
            Param v = t.param("voltage_setpoint");
            assertEquals("V", v.unit());
            assertEquals("operators", v.group());
            assertTrue(v.isPersistent());
            assertEquals(UpdateClass.SETTING, v.updateClass());
            assertEquals(30.0, Double.longBitsToDouble(v.maxBits()));
            assertEquals("Target voltage \"set\" \\ tab\tend", v.description());
            Param mode = t.param("mode");
            assertEquals(ParamType.ENUM, mode.type());
            assertEquals("com.example.test.CliTest.Mode", mode.enumName());
            assertEquals(List.of(new Enumerator(0, "OFF"), new Enumerator(1, "ON"), new Enumerator(2, "TRIPPED"),
                    new Enumerator(-1, "STANDBY")), mode.enumerators());
            assertEquals(-1, mode.valueOf("STANDBY"));
            assertEquals("TRIPPED", mode.label(2));
            assertNull(mode.label(7));
            assertTrue(t.param("measured_voltage").isReadOnly());
            assertTrue(t.param("secret").isNoRead());
            assertEquals(ParamType.DOUBLE_ARRAY, t.param("limits").type());
            assertEquals(32, t.param("limits").valueSize());
            assertEquals(8, t.param("limits").elementSize());
            assertArrayEquals(new byte[] {0, (byte) 0xff}, t.param("calibration").defaultValue());
            assertEquals("°C", t.param("temperature").unit());
            // The defaults, through the typed getters.
            assertEquals("ACME Instruments", t.getString(0));
            assertEquals(-5, t.getInt("offset_counts"));
            assertEquals(-1234567890123L, t.getLong("energy_uj"));
            assertEquals(25.5, t.getDouble("temperature"));
            assertEquals(1.0f, t.getFloat("gain"));
            assertEquals(42, t.getLong("secret"));
            assertArrayEquals(new double[] {1.5, -2, 3}, t.getDoubleArray("limits"));
            assertArrayEquals(new int[0], t.getIntArray(t.index("counters")));
            ParambusException e = assertThrows(ParambusException.class, () -> t.index("no_such"));
            assertEquals("ENOENT", e.errno());
            assertTrue(e.getMessage().contains("no_such"), e.getMessage());
            assertEquals("ENOENT", assertThrows(ParambusException.class, () -> t.getDouble(21)).errno());
            assertEquals("ENOENT", assertThrows(ParambusException.class, () -> t.param(-1)).errno());
            ParambusException te = assertThrows(ParambusException.class, () -> t.getDouble("trim"));
            assertEquals("EINVAL", te.errno());
            assertTrue(te.getMessage().contains("int8") && te.getMessage().contains("trim"), te.getMessage());
            // The read-only view of the mapping.
            assertTrue(t.segment().isReadOnly());
            assertEquals(0x5355424d41524150L, t.segment().get(ValueLayout.JAVA_LONG, 0)); // "PARAMBUS"
        }
    }

    @Test
    void javaReadsWhatCWrote() {
        try (ParamTable t = ParamTable.open(pbusd.instance)) {
            long before = t.version(t.index("trim"));
            pbusSet("trim=-7", "voltage_setpoint=12.25", "label=héllo", "limits=1,-2.5", "mode=STANDBY",
                    "calibration=0102ff", "fan_level=5", "output_enable=true",
                    "counters=1,-2,3", "gain=2.5");
            assertEquals(before + 1, t.version(t.index("trim")));
            assertEquals(-7, t.getInt("trim"));
            assertEquals(12.25, t.getDouble("voltage_setpoint"));
            assertEquals("héllo", t.getString("label"));
            assertArrayEquals(new double[] {1, -2.5}, t.getDoubleArray("limits"));
            assertEquals(-1, t.getInt("mode"));
            assertArrayEquals(new byte[] {1, 2, (byte) 0xff}, t.getBytes("calibration"));
            assertEquals(5, t.getInt("fan_level"));
            assertTrue(t.getBoolean("output_enable"));
            assertArrayEquals(new int[] {1, -2, 3}, t.getIntArray(t.index("counters")));
            assertEquals(2.5f, t.getFloat("gain"));
            Sample s = new Sample();
            t.read("voltage_setpoint", s);
            assertEquals(Status.OK, s.status());
            assertEquals(12.25, s.doubleValue());
            assertEquals(8, s.length());
            long now = System.currentTimeMillis() * 1_000_000L;
            assertTrue(Math.abs(now - s.timestampNs()) < 60_000_000_000L, "timestamp " + s.timestampNs());
            t.read("label", s);
            assertEquals("héllo", s.stringValue());
            assertEquals(6, s.length());
        }
    }

    @Test
    void cReadsWhatJavaWrote() {
        try (ParamTable t = ParamTable.open(pbusd.instance, ParamTable.Access.WRITE)) {
            t.setInt("trim", 4);
            t.setDouble("voltage_setpoint", 3.3);
            t.setString("label", "µ-x");
            t.setDoubleArray("limits", new double[] {-1.5, 99});
            t.setInt("mode", t.param("mode").valueOf("TRIPPED"));
            t.setBytes("calibration", new byte[] {(byte) 0xca, (byte) 0xfe});
            t.setLong("energy_uj", Long.MIN_VALUE);
            t.setLong("sample_rate", 1_000_000);
            t.setBoolean("output_enable", false);
            t.setIntArray(t.index("counters"), new int[] {7});
            t.setFloat("gain", 0.5f);
            t.setInt("averaging", 1024);
            assertEquals("4", pbusGet("trim"));
            assertEquals("3.3", pbusGet("voltage_setpoint"));
            assertEquals("µ-x", pbusGet("label"));
            assertEquals("-1.5,99", pbusGet("limits"));
            assertEquals("TRIPPED", pbusGet("mode"));
            assertEquals("cafe", pbusGet("calibration"));
            assertEquals(Long.toString(Long.MIN_VALUE), pbusGet("energy_uj"));
            assertEquals("1000000", pbusGet("sample_rate"));
            assertEquals("false", pbusGet("output_enable"));
            assertEquals("7", pbusGet("counters"));
            assertEquals("0.5", pbusGet("gain"));
            assertEquals("1024", pbusGet("averaging"));
            // The version and timestamp C sees are the ones Java wrote.
            Sample s = new Sample();
            t.read("trim", s);
            Daemon.Result v = pbusd.pbus("get", "-v", "trim");
            assertTrue(v.out().contains("seq=" + Long.toUnsignedString(s.version())), v.out());
        }
    }

    @Test
    void everyRefusalWritesNothing() {
        try (ParamTable t = ParamTable.open(pbusd.instance, ParamTable.Access.WRITE);
                ParamTable ro = ParamTable.open(pbusd.instance)) {
            int trim = t.index("trim");
            long v0 = t.version(trim);
            assertRefused("ERANGE", () -> t.setInt(trim, 11));
            assertRefused("ERANGE", () -> t.setInt(trim, 200));
            assertRefused("EINVAL", () -> t.setDouble(trim, 1.0));
            assertRefused("ERANGE", () -> t.setDouble("voltage_setpoint", 30.5));
            assertRefused("ERANGE", () -> t.setDouble("voltage_setpoint", Double.NaN));
            assertRefused("ERANGE", () -> t.setFloat("gain", 0.25f));
            assertRefused("ERANGE", () -> t.setInt("fan_level", 6));
            assertRefused("ERANGE", () -> t.setInt("fan_level", -1));
            assertRefused("ERANGE", () -> t.setLong("sample_rate", 0));
            assertRefused("ERANGE", () -> t.setInt("mode", 5));
            assertRefused("EMSGSIZE", () -> t.setString("label", "123456789"));
            assertRefused("EINVAL", () -> t.setString("label", "a\0b"));
            assertRefused("EINVAL", () -> t.setString("label", "\ud800"));
            assertRefused("EMSGSIZE", () -> t.setBytes("calibration", new byte[5]));
            assertRefused("EMSGSIZE", () -> t.setDoubleArray("limits", new double[5]));
            assertRefused("ERANGE", () -> t.setDoubleArray("limits", new double[] {1, 101}));
            assertRefused("EINVAL", () -> t.setIntArray(t.index("limits"), new int[] {1}));
            assertRefused("EACCES", () -> t.setDouble("measured_voltage", 1.0));
            assertRefused("EACCES", () -> t.setString("identity.serial", "x"));
            assertRefused("EACCES", () -> ro.setInt(trim, 1));
            assertRefused("ENOENT", () -> t.setInt("no_such", 1));
            assertRefused("ENOENT", () -> t.setInt(99, 1));
            assertEquals(v0, t.version(trim));
            assertEquals(0.0, t.getDouble("measured_voltage"));
            // A provider writes read-only parameters.
            try (ParamTable p = ParamTable.open(pbusd.instance, ParamTable.Access.PROVIDER)) {
                p.setDouble("measured_voltage", 4.75);
                assertEquals("4.75", pbusGet("measured_voltage"));
            }
        }
    }

    private static void assertRefused(String errno, Runnable r) {
        ParambusException e = assertThrows(ParambusException.class, r::run);
        assertEquals(errno, e.errno(), e.getMessage());
        assertTrue(e.getMessage().contains(errno) && !e.getMessage().contains("\n"), e.getMessage());
    }

    @Test
    void savesAreAwaited() throws Exception {
        try (ParamTable t = ParamTable.open(pbusd.instance, ParamTable.Access.WRITE)) {
            int v = t.index("voltage_setpoint");
            t.setDouble(v, 7.5);
            long version = t.version(v);
            assertTrue(t.awaitSaved(v, version, Duration.ofSeconds(10)));
            assertTrue(Long.compareUnsigned(t.savedVersion(v), version) >= 0);
            long t0 = System.nanoTime();
            assertFalse(t.awaitSaved(v, version + 1000, Duration.ofMillis(100)));
            assertTrue(System.nanoTime() - t0 >= 100_000_000L);
            assertRefused("EINVAL", () -> t.awaitSaved(t.index("trim"), 1, Duration.ofSeconds(1)));
            // On a virtual thread (its sleep is a platform thread's).
            t.setDouble(v, 8.5);
            long next = t.version(v);
            CompletableFuture<Boolean> saved = new CompletableFuture<>();
            Thread.ofVirtual().start(() -> saved.complete(t.awaitSaved(v, next, Duration.ofSeconds(10))));
            assertTrue(saved.get(20, TimeUnit.SECONDS));
        }
    }

    @Test
    void batchesAreAllOrNothing() {
        try (ParamTable t = ParamTable.open(pbusd.instance, ParamTable.Access.WRITE)) {
            int trim = t.index("trim"), avg = t.index("averaging"), label = t.index("label");
            t.batch().setInt(trim, 1).setInt(avg, 2).commit();
            long vt = t.version(trim), va = t.version(avg);
            WriteBatch b = t.batch().setInt(avg, 3).setInt(trim, 2);
            assertRefused("ERANGE", () -> b.setInt(trim, 50));
            assertEquals(2, b.size());
            assertEquals(vt, t.version(trim));
            // The same parameter twice: written twice, in order; out-of-order indexes.
            b.setString(label, "a").setString(label, "b").status(Status.MAJOR).timestamp(1234).setInt(trim, 3).commit();
            assertEquals(0, b.size());
            assertEquals(vt + 2, t.version(trim));
            assertEquals(va + 1, t.version(avg));
            assertEquals(3, t.getInt(trim));
            assertEquals(3, t.getInt(avg));
            assertEquals("b", t.getString(label));
            Sample s = new Sample();
            t.read(trim, s);
            assertEquals(Status.MAJOR, s.status());
            assertEquals(1234, s.timestampNs());
            t.read(avg, s);
            assertEquals(Status.OK, s.status());
            assertEquals("3", pbusGet("trim"));
            // readMany: each parameter into its sample.
            Sample[] many = {new Sample(), new Sample()};
            t.readMany(new int[] {label, avg}, many);
            assertEquals("b", many[0].stringValue());
            assertEquals(3, many[1].longValue());
        }
    }

    @Test
    void waitsAreWokenByCWritesAndEndOnTimeout() throws Exception {
        ExecutorService platform = Executors.newSingleThreadExecutor();
        try (ParamTable t = ParamTable.open(pbusd.instance); Watch w = t.watch(t.index("offset_counts"))) {
            int oc = t.index("offset_counts");
            // pbusd itself waits for its persistent parameters: the counts start there.
            int paramWaiters = t.wake.get(ValueLayout.JAVA_INT, SegmentLayout.W_PARAM_WAITERS);
            int anyWaiters = t.wake.get(ValueLayout.JAVA_INT, SegmentLayout.W_ANY_WAITERS);
            long t0 = System.nanoTime();
            assertFalse(w.await(Duration.ofMillis(150)));
            assertTrue(System.nanoTime() - t0 >= 150_000_000L);
            assertFalse(w.await(Duration.ZERO));
            assertEquals(-1, w.next());
            // Woken by a C write while asleep (registered in the wake segment meanwhile).
            Future<Boolean> f = platform.submit(() -> w.await(Duration.ofSeconds(20)));
            waitForWaiters(t, oc, 1);
            pbusSet("offset_counts=250");
            assertTrue(f.get(10, TimeUnit.SECONDS));
            assertEquals(oc, w.next());
            assertEquals(-1, w.next());
            assertEquals(0, t.wake.get(ValueLayout.JAVA_INT, SegmentLayout.W_WAITERS + 4L * oc));
            assertEquals(paramWaiters, t.wake.get(ValueLayout.JAVA_INT, SegmentLayout.W_PARAM_WAITERS));
            // A watch of everything registers as one "any" waiter.
            try (Watch all = t.watchAll()) {
                Future<Boolean> g = platform.submit(() -> all.await(Duration.ofSeconds(20)));
                long end = System.nanoTime() + 10_000_000_000L;
                while (t.wake.get(ValueLayout.JAVA_INT, SegmentLayout.W_ANY_WAITERS) != anyWaiters + 1) {
                    assertTrue(System.nanoTime() < end, "no any-waiter within 10 s");
                    Thread.sleep(1);
                }
                pbusSet("averaging=7");
                assertTrue(g.get(10, TimeUnit.SECONDS));
                assertEquals(t.index("averaging"), all.next());
            }
        } finally {
            platform.shutdownNow();
            assertTrue(platform.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void interruptEndsAWait() throws Exception {
        ExecutorService platform = Executors.newSingleThreadExecutor();
        try (ParamTable t = ParamTable.open(pbusd.instance); Watch w = t.watch(t.index("offset_counts"))) {
            Future<Boolean> f = platform.submit(() -> w.await(Duration.ofSeconds(20)));
            waitForWaiters(t, t.index("offset_counts"), 1);
            long t0 = System.nanoTime();
            w.interrupt();
            assertFalse(f.get(10, TimeUnit.SECONDS));
            assertTrue(System.nanoTime() - t0 < 1_000_000_000L);
        } finally {
            platform.shutdownNow();
            assertTrue(platform.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    /** A Java interrupt ends a platform thread's wait within one 100 ms slice, with EINTR. */
    @Test
    void threadInterruptEndsAPlatformWait() throws Exception {
        try (ParamTable t = ParamTable.open(pbusd.instance); Watch w = t.watch(t.index("offset_counts"))) {
            CompletableFuture<Object> result = new CompletableFuture<>();
            Thread waiter = Thread.ofPlatform().start(() -> {
                try {
                    result.complete(w.await(Duration.ofSeconds(20)));
                } catch (ParambusException e) {
                    result.complete(e.errno() + (Thread.currentThread().isInterrupted() ? " interrupted" : ""));
                }
            });
            waitForWaiters(t, t.index("offset_counts"), 1);
            long t0 = System.nanoTime();
            waiter.interrupt();
            assertEquals("EINTR interrupted", result.get(10, TimeUnit.SECONDS));
            assertTrue(System.nanoTime() - t0 < 1_000_000_000L);
            waiter.join(10_000);
        }
    }

    /**
     * A virtual thread's wait sleeps on a platform thread of the pool, not on its carrier:
     * many virtual waiters at once leave the carriers free (a task on the virtual-thread
     * scheduler still runs), a C write wakes them all, and an interrupt ends one at once.
     */
    @Test
    void virtualThreadsWaitWithoutHoldingTheirCarriers() throws Exception {
        try (ParamTable t = ParamTable.open(pbusd.instance);
                ExecutorService virtual = Executors.newVirtualThreadPerTaskExecutor()) {
            int oc = t.index("offset_counts");
            int n = 2 * Runtime.getRuntime().availableProcessors() + 4;
            List<Watch> watches = new java.util.ArrayList<>();
            List<Future<Boolean>> waits = new java.util.ArrayList<>();
            for (int k = 0; k < n; k++) {
                Watch w = t.watch(oc);
                watches.add(w);
                waits.add(virtual.submit(() -> w.await(Duration.ofSeconds(20))));
            }
            waitForWaiters(t, oc, n);
            // More sleepers than carriers, and another virtual thread still runs.
            assertEquals("ran", virtual.submit(() -> "ran").get(10, TimeUnit.SECONDS));
            pbusSet("offset_counts=500");
            for (Future<Boolean> f : waits) {
                assertTrue(f.get(10, TimeUnit.SECONDS));
            }
            // An interrupted virtual waiter: EINTR at once, its interrupt status kept.
            Watch w = watches.get(0);
            CompletableFuture<String> result = new CompletableFuture<>();
            Thread vt = Thread.ofVirtual().start(() -> {
                try {
                    result.complete("returned " + w.await(Duration.ofSeconds(20)));
                } catch (ParambusException e) {
                    result.complete(e.errno() + (Thread.currentThread().isInterrupted() ? " interrupted" : ""));
                }
            });
            waitForWaiters(t, oc, 1);
            long t0 = System.nanoTime();
            vt.interrupt();
            assertEquals("EINTR interrupted", result.get(10, TimeUnit.SECONDS));
            assertTrue(System.nanoTime() - t0 < 500_000_000L);
            waitForWaiters(t, oc, 0);
            for (Watch x : watches) {
                x.close();
            }
        }
    }

    @Test
    void writesAreRefusedOnVirtualThreadsAndReadsAreNot() throws Exception {
        try (ParamTable t = ParamTable.open(pbusd.instance, ParamTable.Access.WRITE)) {
            int trim = t.index("trim");
            CompletableFuture<String> r = new CompletableFuture<>();
            Thread.ofVirtual().start(() -> {
                try {
                    t.setInt(trim, 1);
                    r.complete("written");
                } catch (ParambusException e) {
                    r.complete(e.errno() + ": " + e.getMessage());
                }
            });
            String got = r.get(10, TimeUnit.SECONDS);
            assertTrue(got.startsWith("EPERM: ") && got.contains("virtual thread"), got);
            CompletableFuture<Integer> read = new CompletableFuture<>();
            Thread.ofVirtual().start(() -> read.complete(t.getInt(trim)));
            assertEquals(t.getInt(trim), read.get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void schemaIsCheckedOnce() {
        ParamTable t = ParamTable.open(pbusd.instance);
        t.checkSchema("com.example.test.CliTest", t.schemaHash(), 21);
        assertEquals(21, t.paramCount());
        SchemaMismatchException e = assertThrows(SchemaMismatchException.class,
                () -> t.checkSchema("com.example.test.CliTest", t.schemaHash() ^ 1, 22));
        assertEquals("EPROTO", e.errno());
        assertTrue(e.getMessage().contains("schema hash") && e.getMessage().contains("compiled against 22"),
                e.getMessage());
        // The table was closed.
        assertThrows(IllegalStateException.class, () -> t.getInt(3));
        t.close();
    }

    /** docs/security.md §3: files under an instance's name that its owner did not make. */
    @Test
    void untrustedFilesAreRefused() throws Exception {
        Path real = Path.of("/dev/shm/pbus." + pbusd.instance);
        String base = Daemon.newInstance();
        Path link = Path.of("/dev/shm/pbus." + base + "-link");
        Path foreign = Path.of("/dev/shm/pbus." + base + "-foreign");
        Path writable = Path.of("/dev/shm/pbus." + base + "-writable");
        Path dir = Path.of("/dev/shm/pbus." + base + "-dir");
        try {
            Files.createSymbolicLink(link, real);
            assertOpenRefused(base + "-link", "EPROTO", "symbolic link");
            Files.copy(real, foreign);
            UserPrincipal nobody = foreign.getFileSystem().getUserPrincipalLookupService()
                    .lookupPrincipalByName("nobody");
            Files.setOwner(foreign, nobody);
            assertOpenRefused(base + "-foreign", "EPERM", "does not trust");
            Files.copy(real, writable);
            Files.setPosixFilePermissions(writable, PosixFilePermissions.fromString("rw-rw-rw-"));
            assertOpenRefused(base + "-writable", "EPERM", "writable by others");
            Files.createDirectory(dir);
            assertOpenRefused(base + "-dir", "EPROTO", "not a regular file");
            assertOpenRefused(base + "-missing", "ENOENT", "no such instance");
            assertOpenRefused("../etc", "EINVAL", "not an instance name");
            assertOpenRefused(".hidden", "EINVAL", "not an instance name");
        } finally {
            Files.deleteIfExists(link);
            Files.deleteIfExists(foreign);
            Files.deleteIfExists(writable);
            Files.deleteIfExists(dir);
        }
    }

    private static void assertOpenRefused(String instance, String errno, String text) {
        ParambusException e = assertThrows(ParambusException.class, () -> ParamTable.open(instance).close());
        assertEquals(errno, e.errno(), e.getMessage());
        assertTrue(e.getMessage().contains(text) && e.getMessage().startsWith("open " + instance + ": " + errno),
                e.getMessage());
    }

    /** Until parameter {@code index} has {@code n} registered waiters (the waiter is asleep). */
    private static void waitForWaiters(ParamTable t, int index, int n) throws InterruptedException {
        long end = System.nanoTime() + 10_000_000_000L;
        while (t.wake.get(ValueLayout.JAVA_INT, SegmentLayout.W_WAITERS + 4L * index) != n) {
            assertTrue(System.nanoTime() < end, "not " + n + " waiters within 10 s but "
                    + t.wake.get(ValueLayout.JAVA_INT, SegmentLayout.W_WAITERS + 4L * index));
            Thread.sleep(1);
        }
    }
}
