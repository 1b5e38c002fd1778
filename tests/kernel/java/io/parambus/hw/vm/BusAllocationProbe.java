package io.parambus.hw.vm;

import io.parambus.hw.I2cDevice;
import io.parambus.hw.SpiDevice;
import io.parambus.hw.SpiPreparedMessage;
import io.parambus.hw.SpiTransfer;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * A child JVM of {@link I2cMemoryTest} and {@link SpiTest} that makes many calls of one
 * kind and reports, on one line {@code probe key=value ...}, what they cost: Java bytes
 * allocated per call (the thread's counter, {@code com.sun.management.ThreadMXBean}),
 * heap after a full GC and resident memory before and after, and the rate.
 *
 * <p>Why a child: the guest's test JVMs run with {@code -XX:TieredStopAtLevel=1} (C1
 * only, for start-up time under TCG), and with C1 every FFM downcall that captures errno
 * allocates 40 bytes (the JDK's {@code SharedUtils.checkCaptureSegment} slices the
 * capture segment per call; C2's escape analysis removes it). The child runs with the
 * JIT users run, so what it measures is the binding's cost, not the test runtime's.
 *
 * <p>The calls are run up to three times (n each, stopping at the first run that
 * allocates nothing): {@code allocated} is the smallest, {@code allocated_tries} all of
 * them; the heap and RSS figures span all the runs.
 *
 * <p>Arguments: {@code smbus PATH ADDRESS BUDGET_S MAX_CALLS} (SMBus read byte data of
 * register 0x10, which must read 0xab) or {@code spi PATH BUDGET_S MAX_CALLS} (a prepared
 * 24-byte full-duplex message on the loopback controller, the first byte checked). The
 * calls are as many as fit in BUDGET_S seconds at the rate measured during the warm-up,
 * at most MAX_CALLS.
 */
public final class BusAllocationProbe {
    private BusAllocationProbe() {
    }

    /** Runs call n times; throws if a result is wrong. Returns the elapsed ns. */
    static long run(IntSupplier call, int expected, long n) {
        long t0 = System.nanoTime();
        for (long i = 0; i < n; i++) {
            int v = call.getAsInt();
            if (v != expected) {
                throw new IllegalStateException("call " + i + " returned " + v + ", expected " + expected);
            }
        }
        return System.nanoTime() - t0;
    }

    /** Runs this probe in a child JVM (the default JIT) with args; its "probe" line as a map. */
    public static Map<String, String> inChild(int timeoutS, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("/opt/jre/bin/java"));
        cmd.addAll(List.of("-XX:+UseSerialGC", "-Xmx64m", "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), BusAllocationProbe.class.getName()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out;
        try (InputStream in = p.getInputStream()) {
            if (!p.waitFor(timeoutS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("the probe " + String.join(" ", args) + " took more than " + timeoutS + " s");
            }
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        System.out.print(out.replaceAll("(?m)^", "# "));
        VmSuite.equal(0, p.exitValue(), "probe exit status");
        for (String line : out.split("\n")) {
            if (line.startsWith("probe ")) {
                Map<String, String> m = new HashMap<>();
                for (String kv : line.substring(6).trim().split(" ")) {
                    String[] f = kv.split("=", 2);
                    m.put(f[0], f[1]);
                }
                return m;
            }
        }
        throw new AssertionError("the probe printed no result: " + out);
    }

    static long num(Map<String, String> m, String key) {
        return Long.parseLong(m.get(key));
    }

    /** Checks a probe's report: 0 bytes per call, flat heap and RSS. */
    public static void assertFlat(Map<String, String> r, String what) {
        long calls = num(r, "calls");
        VmSuite.equal(0L, num(r, "allocated"), what + ": bytes allocated over " + calls + " calls");
        long heap = num(r, "heap_after") - num(r, "heap_before");
        VmSuite.check(heap < 256 * 1024, "%s: heap after GC grew by %d bytes over %d calls", what, heap, calls);
        long rss = num(r, "rss_after_kib") - num(r, "rss_before_kib");
        VmSuite.check(rss < 1024, "%s: resident memory grew by %d KiB over %d calls", what, rss, calls);
    }

    public static void main(String[] args) throws Exception {
        String kind = args[0];
        AutoCloseable resource;
        IntSupplier call;
        int expected;
        int budgetS, arg = 2;
        long maxCalls;
        if (kind.equals("smbus")) {
            I2cDevice d = I2cDevice.open(args[1], Integer.decode(args[arg]));
            arg++;
            d.smbusWriteByteData(0x10, 0xab);
            resource = d;
            call = () -> d.smbusReadByteData(0x10);
            expected = 0xab;
        } else if (kind.equals("spi")) {
            SpiDevice spi = SpiDevice.open(args[1]);
            SpiPreparedMessage m = spi.prepare(SpiTransfer.duplex(24));
            MemorySegment tx = m.tx(0), rx = m.rx(0);
            resource = () -> {
                m.close();
                spi.close();
            };
            call = () -> {
                byte b = (byte) (tx.get(ValueLayout.JAVA_BYTE, 0) + 1);
                tx.set(ValueLayout.JAVA_BYTE, 0, b);
                int r = m.run();
                return r == 24 && rx.get(ValueLayout.JAVA_BYTE, 0) == b ? 24 : -1;
            };
            expected = 24;
        } else {
            throw new IllegalArgumentException("probe kind " + kind);
        }
        budgetS = Integer.parseInt(args[arg]);
        maxCalls = Long.parseLong(args[arg + 1]);
        try (resource) {
            // warm up until a batch allocates nothing (the JIT has compiled the path), at most 60 s
            long warmCalls = 0, batch = 10_000, lastAlloc = -1, lastNs = 1;
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (System.nanoTime() < deadline) {
                long a = Kenv.allocatedBytes();
                lastNs = run(call, expected, batch);
                lastAlloc = Kenv.allocatedBytes() - a;
                warmCalls += batch;
                if (lastAlloc == 0) {
                    break;
                }
            }
            double nsPerCall = (double) lastNs / batch;
            long n = Math.max(batch, Math.min(maxCalls, (long) (budgetS * 1e9 / nsPerCall)));
            long heap0 = Kenv.heapAfterGc();
            long rss0 = Kenv.rssKiB();
            long overhead = Long.MAX_VALUE;
            for (int k = 0; k < 3; k++) {
                long a = Kenv.allocatedBytes();
                overhead = Math.min(overhead, Kenv.allocatedBytes() - a);
            }
            // Up to three runs of n calls: a run in which the JIT recompiles something may
            // allocate a few hundred bytes once (not per call); one clean run shows the path.
            long bytes = Long.MAX_VALUE, ns = 0;
            StringBuilder tries = new StringBuilder();
            for (int k = 0; k < 3 && bytes != 0; k++) {
                long a0 = Kenv.allocatedBytes();
                ns = run(call, expected, n);
                long b = Kenv.allocatedBytes() - a0 - overhead;
                bytes = Math.min(bytes, b);
                tries.append(k == 0 ? "" : ",").append(b);
            }
            long rss1 = Kenv.rssKiB();
            long heap1 = Kenv.heapAfterGc();
            System.out.printf("probe kind=%s calls=%d allocated=%d allocated_tries=%s warmup_calls=%d "
                    + "warmup_last_batch_allocated=%d ns_per_call=%.0f heap_before=%d heap_after=%d rss_before_kib=%d "
                    + "rss_after_kib=%d%n", kind, n, bytes, tries, warmCalls, lastAlloc, (double) ns / n, heap0, heap1,
                    rss0, rss1);
        }
    }
}
