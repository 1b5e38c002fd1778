package io.parambus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;

/**
 * Reads allocate nothing: a million reads of each scalar getter, and of
 * {@link ParamTable#read(int, Sample)} into a reused sample, change the thread's
 * allocated-bytes counter ({@code com.sun.management.ThreadMXBean}) by 0 bytes, while
 * another thread writes the same parameters all the time (so that reads also take their
 * retry path). The writer's scalar setters allocate nothing either (their common path,
 * with no reader's turn to hold off for). JMH's gc profiler measures the same in the
 * benchmarks.
 */
class AllocationTest {
    private static final int READS = 1_000_000;
    private static long sink;

    /** Bytes this thread allocated over {@code n} calls of {@code read}, net of the measurement's own. */
    private static long allocatedBy(LongSupplier read, int n) {
        long overhead = Long.MAX_VALUE;
        for (int k = 0; k < 3; k++) {
            long a = ThreadAllocation.bytes();
            long b = ThreadAllocation.bytes();
            overhead = Math.min(overhead, b - a);
        }
        long s = 0;
        long before = ThreadAllocation.bytes();
        for (int k = 0; k < n; k++) {
            s += read.getAsLong();
        }
        long after = ThreadAllocation.bytes();
        sink += s;
        return after - before - overhead;
    }

    /**
     * The JIT allocates a little while it compiles and recompiles the loop (its first
     * windows after a warm-up show a few hundred bytes, the code's own need none; under
     * load a recompilation can come later, once: 104 bytes in a million reads was seen):
     * warm up until a window of 200000 reads allocates nothing (at most 20 windows), then
     * a million reads must allocate nothing, in one of three tries. An allocation per read,
     * however small, allocates megabytes in every try.
     */
    private static void assertNoAllocation(String what, LongSupplier read) {
        for (int k = 0; k < 20 && allocatedBy(read, 200_000) != 0; k++) {
            // warming up
        }
        List<Long> tries = new ArrayList<>();
        for (int k = 0; k < 3; k++) {
            long bytes = allocatedBy(read, READS);
            tries.add(bytes);
            if (bytes == 0) {
                return;
            }
        }
        assertEquals(0, (long) tries.get(tries.size() - 1), what + ": bytes allocated by " + READS
                + " reads, in each of three tries: " + tries);
    }

    @Test
    void readsAllocateNothing() throws Exception {
        try (Installed inst = Installed.install(Installed.hex("segment-v2.hex"), null);
                ParamTable t = ParamTable.open(inst.name);
                ParamTable w = ParamTable.open(inst.name, ParamTable.Access.WRITE)) {
            int volts = t.index("volts"), big = t.index("big"), level = t.index("level"), flag = t.index("flag"),
                    ratio = t.index("ratio"), count = t.index("count"), name = t.index("name");
            AtomicBoolean stop = new AtomicBoolean();
            CompletableFuture<Long> writerBytes = new CompletableFuture<>();
            Thread writer = Thread.ofPlatform().start(() -> {
                try {
                    long[] measured = {-1};
                    LongSupplier write = () -> {
                        w.setDouble(volts, 1.5);
                        w.setLong(big, 5);
                        w.setInt(level, 7);
                        w.setBoolean(flag, true);
                        w.setFloat(ratio, 0.5f);
                        return 0;
                    };
                    for (int k = 0; k < 20 && allocatedBy(write, 50_000) != 0; k++) {
                        // warming up, as assertNoAllocation()
                    }
                    measured[0] = allocatedBy(write, 200_000);
                    writerBytes.complete(measured[0]);
                    while (!stop.get()) {
                        write.getAsLong();
                        w.setString(name, "abc");
                    }
                } catch (Throwable e) {
                    writerBytes.completeExceptionally(e);
                }
            });
            try {
                // The writer's common path first, before any reader posts a turn (a write that
                // holds off for one runs code of its own, linked the first time it runs).
                assertEquals(0, writerBytes.get(60, TimeUnit.SECONDS), "bytes allocated by 200000 passes of five"
                        + " scalar setters");
                Sample s = new Sample();
                t.read(name, s);
                // The reader's turn (§4.5), which a read posts after 8 failed attempts in a
                // row, is rare: take and give back one of each parameter's now, so that its
                // code is linked before the measurements rather than during one.
                for (int i : new int[] {volts, big, level, flag, ratio, count, name}) {
                    long turn = t.takeTurn(i, 0);
                    if (turn != 0) {
                        t.giveTurnBack(i, turn);
                    }
                }
                assertNoAllocation("getDouble", () -> (long) t.getDouble(volts));
                assertNoAllocation("getLong", () -> t.getLong(big));
                assertNoAllocation("getInt", () -> t.getInt(level));
                assertNoAllocation("getLong of a uint32", () -> t.getLong(count));
                assertNoAllocation("getBoolean", () -> t.getBoolean(flag) ? 1 : 0);
                assertNoAllocation("getFloat", () -> (long) t.getFloat(ratio));
                assertNoAllocation("read(Sample) of a double", () -> {
                    t.read(volts, s);
                    return s.bits() + s.timestampNs();
                });
                assertNoAllocation("read(Sample) of a string", () -> {
                    t.read(name, s);
                    return s.length();
                });
            } finally {
                stop.set(true);
                writer.join(10_000);
            }
            assertTrue(t.version(volts) > 100_000, "the writer wrote meanwhile: " + t.version(volts));

        }
    }
}
