package io.parambus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * C and Java on one live instance (tests/java/fixtures/xlang.pbs), each side checking
 * every value it reads: a C writer with Java readers, a Java writer with a C reader, 10 s
 * each, with zero torn reads and visible progress; and a Java writer killed with SIGKILL
 * in the middle of its writes, which blocks no C or Java reader or writer. The values
 * are made so that a torn one shows (tests/java/c/xlang-common.h): every element of a
 * value is the version its write produced.
 */
class CrossLanguageTest {
    private static final double SECONDS = 10;

    private static Path helper(String name) {
        return TestSupport.program("tests/java/" + name);
    }

    /** What a Java reader counts. */
    private static final class Counts {
        final AtomicLong reads = new AtomicLong(), torn = new AtomicLong(), advanced = new AtomicLong();
        final List<String> firstTorn = java.util.Collections.synchronizedList(new ArrayList<>());

        void torn(String what) {
            torn.incrementAndGet();
            if (firstTorn.size() < 5) {
                firstTorn.add(what);
            }
        }
    }

    /**
     * Read PREFIX_double, _array and _big until {@code stop}: through read(Sample) (value
     * against version), getDouble and getLongArray (never going back, equal elements).
     */
    private static void readLoop(ParamTable t, String prefix, AtomicBoolean stop, Counts c, boolean versionRule) {
        int d = t.index(prefix + "_double"), a = t.index(prefix + "_array"), b = t.index(prefix + "_big");
        int[] idx = {d, a, b};
        long[] previous = new long[3];
        Sample s = new Sample();
        double lastDouble = -1;
        long lastBig = Long.MIN_VALUE;
        while (!stop.get()) {
            for (int k = 0; k < 3; k++) {
                t.read(idx[k], s);
                c.reads.incrementAndGet();
                long version = s.version();
                boolean ok;
                if (k == 0) {
                    ok = s.doubleValue() == (double) version;
                } else {
                    int n = s.length() / 8;
                    ok = version == 0 || n == t.param(idx[k]).valueSize() / 8;
                    long first = n > 0 ? java.nio.ByteBuffer.wrap(s.bytes()).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                            .getLong(0) : 0;
                    for (int e = 0; ok && e < n; e++) {
                        long v = java.nio.ByteBuffer.wrap(s.bytes()).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                                .getLong(8 * e);
                        ok = v == (versionRule || k == 1 ? version : first);
                    }
                }
                if (!ok) {
                    c.torn(t.param(idx[k]).name() + " at version " + version);
                }
                if (version != previous[k]) {
                    c.advanced.incrementAndGet();
                    previous[k] = version;
                }
            }
            double v = t.getDouble(d);
            if (v < lastDouble) {
                c.torn("getDouble went back from " + lastDouble + " to " + v);
            }
            lastDouble = v;
            long[] big = t.getLongArray(b);
            for (long e : big) {
                if (e != big[0]) {
                    c.torn("getLongArray with unequal elements " + Arrays.toString(big));
                    break;
                }
            }
            if (versionRule && big.length > 0) {
                if (big[0] < lastBig) {
                    c.torn("getLongArray went back");
                }
                lastBig = big[0];
            }
            c.reads.addAndGet(2);
        }
    }

    private static final Pattern C_READER = Pattern.compile("reads (\\d+) torn (\\d+) advanced (\\d+) last (\\d+)");

    @Test
    void aCWriterAndJavaReaders() throws Exception {
        try (Daemon d = Daemon.start(Daemon.crossSchema()); ParamTable t = ParamTable.open(d.instance)) {
            AtomicBoolean stop = new AtomicBoolean();
            Counts platform = new Counts(), virtual = new Counts();
            CompletableFuture<Daemon.Result> writer = CompletableFuture.supplyAsync(() -> d.run(
                    List.of(helper("java-xlang-writer").toString(), d.instance, "c", Double.toString(SECONDS))));
            Thread p = Thread.ofPlatform().start(() -> readLoop(t, "c", stop, platform, true));
            Thread v = Thread.ofVirtual().start(() -> readLoop(t, "c", stop, virtual, true));
            Daemon.Result w;
            try {
                w = writer.get((long) SECONDS + 60, TimeUnit.SECONDS);
            } finally {
                stop.set(true);
                p.join(10_000);
                v.join(10_000);
            }
            assertEquals(0, w.status(), "the C writer: " + w.err());
            Matcher m = Pattern.compile("writes (\\d+)").matcher(w.out());
            assertTrue(m.find(), w.out());
            long writes = Long.parseLong(m.group(1));
            for (Counts c : List.of(platform, virtual)) {
                assertEquals(0, c.torn.get(), "torn reads: " + c.firstTorn);
                assertTrue(c.reads.get() > 10_000, c.reads.get() + " reads");
                assertTrue(c.advanced.get() > 1000, "progress: " + c.advanced.get() + " of " + writes + " writes seen");
            }
            assertTrue(writes > 10_000, writes + " writes");
            assertEquals((double) t.version(t.index("c_double")), t.getDouble("c_double"));
            System.out.printf("C writer: %d writes in %.0f s; Java readers: %d reads (platform), %d (virtual), "
                    + "0 torn%n", writes, SECONDS, platform.reads.get(), virtual.reads.get());
        }
    }

    @Test
    void aJavaWriterAndACReader() throws Exception {
        try (Daemon d = Daemon.start(Daemon.crossSchema());
                ParamTable t = ParamTable.open(d.instance, ParamTable.Access.WRITE)) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong writes = new AtomicLong();
            Counts javaReader = new Counts();
            int jd = t.index("j_double"), ja = t.index("j_array"), jb = t.index("j_big");
            CompletableFuture<Throwable> writerDone = new CompletableFuture<>();
            Thread writer = Thread.ofPlatform().start(() -> {
                try {
                    long[] small = new long[16], big = new long[64];
                    while (!stop.get()) {
                        t.setDouble(jd, t.version(jd) + 1);
                        Arrays.fill(small, t.version(ja) + 1);
                        t.setLongArray(ja, small);
                        Arrays.fill(big, t.version(jb) + 1);
                        t.setLongArray(jb, big);
                        writes.addAndGet(3);
                    }
                    writerDone.complete(null);
                } catch (Throwable e) {
                    writerDone.complete(e);
                }
            });
            Thread reader = Thread.ofPlatform().start(() -> readLoop(t, "j", stop, javaReader, true));
            Daemon.Result r;
            try {
                r = d.run(List.of(helper("java-xlang-reader").toString(), d.instance, "j", Double.toString(SECONDS)));
            } finally {
                stop.set(true);
                writer.join(10_000);
                reader.join(10_000);
            }
            assertEquals(null, writerDone.get(10, TimeUnit.SECONDS));
            assertEquals(0, r.status(), "the C reader: " + r.err());
            Matcher m = C_READER.matcher(r.out());
            assertTrue(m.find(), r.out());
            assertEquals(0, Long.parseLong(m.group(2)), "torn reads in C: " + r.out());
            assertTrue(Long.parseLong(m.group(1)) > 10_000, r.out());
            assertTrue(Long.parseLong(m.group(3)) > 1000, "progress seen by C: " + r.out());
            assertEquals(0, javaReader.torn.get(), "torn reads in Java: " + javaReader.firstTorn);
            assertTrue(writes.get() > 10_000, writes.get() + " writes");
            System.out.printf("Java writer: %d writes in %.0f s; C reader: %s; Java reader: %d reads, 0 torn%n",
                    writes.get(), SECONDS, r.out().strip(), javaReader.reads.get());
        }
    }

    /** The JVM that runs these tests, and this project's classes, for a child JVM. */
    private static List<String> childJvm(String mainClass, String... args) throws Exception {
        String javaBin = ProcessHandle.current().info().command().orElseThrow();
        String classes = Path.of(ParamTable.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                .toString();
        String testClasses = Path.of(KillableWriter.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                .toString();
        List<String> argv = new ArrayList<>(List.of(javaBin, "--enable-native-access=ALL-UNNAMED", "-cp",
                classes + java.io.File.pathSeparator + testClasses, mainClass));
        argv.addAll(List.of(args));
        return argv;
    }

    @Test
    void aJavaWriterKilledMidWriteBlocksNobody() throws Exception {
        try (Daemon d = Daemon.start(Daemon.crossSchema()); ParamTable t = ParamTable.open(d.instance)) {
            int jb = t.index("j_big");
            long lock = t.slot[jb] + 8;
            boolean killedHolding = false;
            long deadHolder = 0;
            for (int attempt = 1; attempt <= 3 && !killedHolding; attempt++) {
                ProcessBuilder pb = new ProcessBuilder(childJvm("io.parambus.KillableWriter", d.instance));
                pb.redirectError(ProcessBuilder.Redirect.DISCARD);
                Process child = pb.start();
                try {
                    BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                            StandardCharsets.UTF_8));
                    CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
                        try {
                            return out.readLine();
                        } catch (java.io.IOException e) {
                            return null;
                        }
                    });
                    assertEquals("writing", line.get(60, TimeUnit.SECONDS), "the child writer did not start");
                    // Kill it the moment one of its threads holds j_big's word (two of them
                    // take turns on it, so it is held most of the time).
                    long end = System.nanoTime() + 2_000_000_000L;
                    long word;
                    do {
                        word = t.segment().get(ValueLayout.JAVA_LONG, lock);
                    } while (((word >>> 62) != 0 || (word & WriterThread.TOKEN_MASK) == 0) && System.nanoTime() < end);
                    long before = t.version(jb);
                    child.destroyForcibly();
                    assertTrue(child.waitFor(30, TimeUnit.SECONDS));
                    assertTrue(t.version(jb) > 0 && before > 0, "the child wrote nothing");
                } finally {
                    child.destroyForcibly();
                }
                long left = t.segment().get(ValueLayout.JAVA_LONG, lock);
                if ((left >>> 62) == 0 && (left & WriterThread.TOKEN_MASK) != 0) {
                    killedHolding = true;
                    deadHolder = left & WriterThread.TOKEN_MASK;
                }
            }
            assertTrue(killedHolding, "the writer was never killed while it held j_big");
            assertTrue(!WriterThread.alive(deadHolder));
            // Java readers read at once, consistent values.
            Counts c = new Counts();
            AtomicBoolean stop = new AtomicBoolean();
            Thread reader = Thread.ofPlatform().start(() -> readLoop(t, "j", stop, c, false));
            // A C reader reads (arrays: equal elements; j_big had two writers).
            Daemon.Result r = d.run(List.of(helper("java-xlang-reader").toString(), d.instance, "j", "0.5", "equal"));
            stop.set(true);
            reader.join(10_000);
            assertEquals(0, r.status(), r.err());
            Matcher m = C_READER.matcher(r.out());
            assertTrue(m.find() && m.group(2).equals("0") && Long.parseLong(m.group(1)) > 0, r.out());
            assertEquals(0, c.torn.get(), "torn: " + c.firstTorn);
            assertTrue(c.reads.get() > 0);
            // A C writer's next write takes the dead holder's word over, well within a second.
            Daemon.Result w = d.run(List.of(helper("java-xlang-writer").toString(), d.instance, "j", "once"));
            assertEquals(0, w.status(), w.err());
            Matcher e = Pattern.compile("elapsed_ns (\\d+)").matcher(w.out());
            assertTrue(e.find(), w.out());
            long ns = Long.parseLong(e.group(1));
            assertTrue(ns < 1_000_000_000L, "the C writer took " + ns + " ns");
            long word = t.segment().get(ValueLayout.JAVA_LONG, lock);
            assertTrue((word & WriterThread.TOKEN_MASK) != deadHolder, "the dead holder still holds j_big");
            // And a Java writer writes at once too.
            try (ParamTable jw = ParamTable.open(d.instance, ParamTable.Access.WRITE)) {
                long t0 = System.nanoTime();
                long[] v = new long[64];
                Arrays.fill(v, 7);
                jw.setLongArray(jb, v);
                jw.setDouble("j_double", jw.version(jw.index("j_double")) + 1);
                assertTrue(System.nanoTime() - t0 < 1_000_000_000L);
                assertEquals(7, jw.getLongArray(jb)[63]);
            }
            System.out.printf("Java writer killed holding j_big (token %x): the C writer's next writes took %d ns%n",
                    deadHolder, ns);
        }
    }
}
