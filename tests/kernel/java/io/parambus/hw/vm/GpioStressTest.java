package io.parambus.hw.vm;

import static io.parambus.hw.vm.GpioTest.SIM1;
import static io.parambus.hw.vm.GpioTest.in;
import static io.parambus.hw.vm.GpioTest.out;
import static io.parambus.hw.vm.VmSuite.check;
import static io.parambus.hw.vm.VmSuite.equal;

import io.parambus.hw.GpioChip;
import io.parambus.hw.GpioEdgeEvent;
import io.parambus.hw.GpioEdgeListener;
import io.parambus.hw.GpioEventPoller;
import io.parambus.hw.GpioLineSettings.Edge;
import io.parambus.hw.GpioRequest;
import io.parambus.hw.GpioRequestConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The long runs of io.parambus.hw's GPIO against gpio-sim: get and set allocate nothing;
 * 10,000 requests opened, listened to and closed with flat threads, descriptors and
 * memory; 10,000 edges on 8 lines at once with none lost; real events for about 15 s
 * with a flat heap (the rate is printed).
 */
public class GpioStressTest implements AutoCloseable {
    public static void main(String[] args) {
        VmSuite.main(GpioStressTest.class, args);
    }

    @Override
    public void close() {
        GpioTest.bringBack(SIM1);
        try (GpioSimLines sim = new GpioSimLines(SIM1, 8)) {
            for (int k = 0; k < 8; k++) {
                sim.pull(k, false);
            }
        }
    }

    private interface Calls {
        long run(int n);
    }

    private static long sink;

    /** Bytes this thread allocated over n calls. */
    private static long allocatedBy(Calls calls, int n) {
        long before = Kenv.allocatedBytes();
        long s = calls.run(n);
        long after = Kenv.allocatedBytes();
        sink += s;
        return after - before;
    }

    /**
     * Warm up until a window of 20000 calls allocates nothing (at most 20 windows), then
     * one of three windows of 100000 calls must allocate nothing: an allocation per call,
     * however small, shows as megabytes in each.
     */
    private static void assertNoAllocation(String what, Calls calls) {
        for (int k = 0; k < 20 && allocatedBy(calls, 20_000) != 0; k++) {
            // warming up
        }
        List<Long> tries = new ArrayList<>();
        for (int k = 0; k < 3; k++) {
            long t0 = System.nanoTime();
            long bytes = allocatedBy(calls, 100_000);
            tries.add(bytes);
            System.out.printf("# %s: 100000 calls in %.0f ms, %d bytes allocated%n", what,
                    (System.nanoTime() - t0) / 1e6, bytes);
            if (bytes == 0) {
                return;
            }
        }
        throw new AssertionError(what + ": bytes allocated by 100000 calls, in each of three tries: " + tries);
    }

    /** Get and set, bulk and by offset, allocate nothing (their structs live in the request). */
    @VmSuite.Case
    public void get_and_set_allocate_nothing() {
        try (GpioChip chip = GpioChip.openByLabel(SIM1); GpioRequest req = chip.request(GpioRequestConfig.builder()
                .line(2, out(false)).line(3, out(true)).line(6, in(Edge.NONE)).build())) {
            assertNoAllocation("setValue+getValue by offset", n -> {
                long s = 0;
                for (int i = 0; i < n; i++) {
                    req.setValue(2, (i & 1) != 0);
                    s += req.getValue(6) ? 1 : 0;
                }
                return s;
            });
            assertNoAllocation("setValues+getValues by mask", n -> {
                long s = 0;
                for (int i = 0; i < n; i++) {
                    req.setValues(0b011, i);
                    s += req.getValues(0b111);
                }
                return s;
            });
            equal(1, Kenv.simValue(SIM1, 3), "line 3 after the last set (index 1 of an odd i)");
        }
    }

    /**
     * 10,000 requests of 2 lines with edge detection opened, listened to by one poller and
     * closed, and a poller of their own started and closed for every 100th: the threads,
     * the descriptors, the heap after GC and the resident memory are what they were after
     * the first 500, and no poller thread is left.
     */
    @VmSuite.Case
    public void open_and_close_10000_requests() throws Exception {
        final int warm = 500, total = 10_000;
        GpioRequestConfig config = GpioRequestConfig.builder().lines(in(Edge.BOTH), 4, 7).build();
        GpioEdgeListener ignore = e -> { };
        int threads0 = 0, fds0 = 0;
        long heap0 = 0, rss0 = 0;
        long t0 = 0;
        try (GpioChip chip = GpioChip.openByLabel(SIM1); GpioEventPoller poller = GpioEventPoller.start()) {
            for (int i = 0; i < total; i++) {
                if (i == warm) {
                    threads0 = Kenv.threads();
                    fds0 = Kenv.openFds();
                    heap0 = Kenv.heapAfterGc();
                    rss0 = Kenv.rssKiB();
                    t0 = System.nanoTime();
                }
                try (GpioRequest r = chip.request(config)) {
                    poller.listen(r, ignore);
                    poller.listen(r, 7, ignore);
                }
                if (i % 100 == 0) {
                    try (GpioEventPoller own = GpioEventPoller.start(); GpioRequest r = chip.request(config)) {
                        check(own.thread().isAlive(), "poller %d not started", i);
                        own.listen(r, ignore);
                    }
                }
            }
            double ms = (System.nanoTime() - t0) / 1e6 / (total - warm);
            int threads1 = Kenv.threads(), fds1 = Kenv.openFds();
            long heap1 = Kenv.heapAfterGc(), rss1 = Kenv.rssKiB();
            System.out.printf("# %d requests: %.2f ms each; threads %d -> %d, fds %d -> %d, heap after GC %d -> %d"
                    + " KiB, RSS %d -> %d KiB%n", total - warm, ms, threads0, threads1, fds0, fds1, heap0 / 1024,
                    heap1 / 1024, rss0, rss1);
            // Every thread of the process (the JVM's own included) is counted: none may be added;
            // one fewer is an idle virtual-thread carrier of an earlier case ending.
            check(threads1 <= threads0, "threads: %d after %d requests, %d after %d", threads0, warm, threads1, total);
            equal(1L, Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("gpio-poller-"))
                    .count(), "gpio-poller threads while one poller is open");
            equal(fds0, fds1, "open descriptors");
            check(heap1 - heap0 < 1 << 20, "heap after GC grew by %d KiB", (heap1 - heap0) / 1024);
            check(rss1 - rss0 < 4096, "resident memory grew by %d KiB", rss1 - rss0);
        }
        check(Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().startsWith("gpio-poller-")),
                "a gpio-poller thread outlived close()");
    }

    /** Counts one line's events and checks they are contiguous (line_seqno), of alternating type, none missed. */
    private static final class LineCounter implements GpioEdgeListener {
        final int offset;
        final AtomicLong count = new AtomicLong();
        final AtomicLong total;
        final AtomicReference<String> problem = new AtomicReference<>();
        long next = 1;

        LineCounter(int offset, AtomicLong total) {
            this.offset = offset;
            this.total = total;
        }

        @Override
        public void onEdge(GpioEdgeEvent e) {
            if (e.offset() != offset || e.lineSeqno() != next || e.missed() != 0
                    || e.type() != (next % 2 == 1 ? GpioEdgeEvent.Type.RISING : GpioEdgeEvent.Type.FALLING)) {
                problem.compareAndSet(null, "line " + offset + ": " + e + " where line seqno " + next + " was due");
            }
            next = e.lineSeqno() + 1;
            count.incrementAndGet();
            total.incrementAndGet();
        }
    }

    /** 8 inputs (all of pbus-sim1), both edges, the kernel's largest event buffer (1024). */
    private static GpioRequest eightInputs(GpioChip chip) {
        GpioRequestConfig.Builder b = GpioRequestConfig.builder().eventBufferSize(1024);
        for (int i = 0; i < 8; i++) {
            b.line(i, in(Edge.BOTH));
        }
        return chip.request(b.build());
    }

    /** Events driven but not yet delivered at most: half the kernel's buffer (see {@link #drive}). */
    private static final long WINDOW = 512;

    /**
     * Drives edges on the 8 lines of pbus-sim1 in turn, with a listener per line (virtual
     * threads), until {@code edges} were driven or {@code seconds} passed (then up to a
     * multiple of 16, so that every line ends low); runs {@code hook} after edge
     * {@code hookAt}; returns the number of edges once every one has arrived, checking
     * that none was lost.
     *
     * <p>The driver is paced like a signal source of bounded rate: it stays at most
     * {@link #WINDOW} edges ahead of the listeners. Unpaced, the emulated CPU writes the
     * sysfs pulls about twice as fast as one JVM takes the events in (and the first
     * virtual thread of a JVM takes most of a second to start under TCG), so the kernel's
     * buffer would overflow: the kernel then drops events, which kernel_overflow_is_reported
     * shows the poller reporting. Pacing on delivered events (not on events read) means
     * a loss anywhere in the binding, poller queue or executor, shows here.
     */
    private static long drive(GpioSimLines sim, GpioEventPoller poller, List<LineCounter> counters, AtomicLong total,
            long edges, double seconds, long hookAt, Runnable hook) throws InterruptedException {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        boolean[] level = new boolean[8];
        long n = 0;
        while ((n < edges && System.nanoTime() < end) || n % 16 != 0) {
            while (n - total.get() >= WINDOW) {
                Thread.yield();
            }
            int k = (int) (n % 8);
            level[k] = !level[k];
            sim.pull(k, level[k]);
            n++;
            if (n == hookAt) {
                hook.run();
            }
        }
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (total.get() < n && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        for (LineCounter c : counters) {
            check(c.problem.get() == null, "%s", c.problem.get());
            equal(n / 8, c.count.get(), "events of line " + c.offset);
        }
        equal(0L, poller.lostEvents(), "events lost (seqno gaps)");
        equal(n, poller.eventCount(), "events read");
        return n;
    }

    private static List<LineCounter> listenToEach(GpioEventPoller poller, GpioRequest req, AtomicLong total) {
        List<LineCounter> counters = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            LineCounter c = new LineCounter(i, total);
            counters.add(c);
            poller.listen(req, i, c);
        }
        return counters;
    }

    /** The target: 0 events lost over 10,000 edges on 8 lines at once. */
    @VmSuite.Case
    public void edges_10000_on_8_lines_none_lost() throws Exception {
        try (GpioChip chip = GpioChip.openByLabel(SIM1); GpioSimLines sim = new GpioSimLines(SIM1, 8);
                GpioRequest req = eightInputs(chip); GpioEventPoller poller = GpioEventPoller.start()) {
            AtomicLong total = new AtomicLong();
            List<LineCounter> counters = listenToEach(poller, req, total);
            long t0 = System.nanoTime();
            long n = drive(sim, poller, counters, total, 10_000, 40, -1, () -> { });
            double s = (System.nanoTime() - t0) / 1e9;
            System.out.printf("# %d edges on 8 lines in %.1f s: %.0f events/s, 0 lost%n", n, s, n / s);
            equal(10_000L, n, "edges driven");
        }
    }

    /**
     * Real gpio-sim events for about 15 s on 8 lines (as many as the VM drives: the rate is
     * printed), one listener per line: every event arrives, and the heap after GC at the
     * end is what it was after the first 4000 events.
     */
    @VmSuite.Case
    public void real_events_for_15_s_with_flat_heap() throws Exception {
        try (GpioChip chip = GpioChip.openByLabel(SIM1); GpioSimLines sim = new GpioSimLines(SIM1, 8);
                GpioRequest req = eightInputs(chip); GpioEventPoller poller = GpioEventPoller.start()) {
            AtomicLong total = new AtomicLong();
            List<LineCounter> counters = listenToEach(poller, req, total);
            long[] heap0 = new long[1];
            long t0 = System.nanoTime();
            long n = drive(sim, poller, counters, total, Long.MAX_VALUE, 15, 4000, () -> heap0[0] = Kenv.heapAfterGc());
            double s = (System.nanoTime() - t0) / 1e9;
            long heap1 = Kenv.heapAfterGc();
            System.out.printf("# %d real events in %.1f s (%.0f events/s); heap after GC %d KiB after 4000, %d KiB"
                    + " at the end%n", n, s, n / s, heap0[0] / 1024, heap1 / 1024);
            check(n >= 20_000, "only %d events in 15 s", n);
            check(heap1 - heap0[0] < 1 << 20, "heap after GC grew by %d KiB over %d events", (heap1 - heap0[0]) / 1024,
                    n - 4000);
        }
    }

    /**
     * The kernel's buffer overflowing is reported, never silent: a listener held up, a
     * small poller queue and a 16-event kernel buffer, 400 edges driven at full speed.
     * The kernel drops the oldest events; once the listener goes on, the events that
     * arrive plus those the poller counts as lost (seqno gaps) are exactly the edges
     * driven, and each line's missed events show on its next event.
     */
    @VmSuite.Case
    public void kernel_overflow_is_reported() throws Exception {
        GpioRequestConfig.Builder b = GpioRequestConfig.builder().eventBufferSize(16);
        for (int i = 0; i < 8; i++) {
            b.line(i, in(Edge.BOTH));
        }
        try (GpioChip chip = GpioChip.openByLabel(SIM1); GpioSimLines sim = new GpioSimLines(SIM1, 8);
                GpioRequest req = chip.request(b.build());
                GpioEventPoller poller = GpioEventPoller.builder().queueCapacity(64).start()) {
            CountDownLatch hold = new CountDownLatch(1);
            AtomicLong delivered = new AtomicLong(), missed = new AtomicLong();
            poller.listen(req, e -> {
                try {
                    hold.await();
                } catch (InterruptedException x) {
                    Thread.currentThread().interrupt();
                }
                delivered.incrementAndGet();
                missed.addAndGet(e.missed());
            });
            boolean[] level = new boolean[8];
            final int edges = 400;
            for (int n = 0; n < edges; n++) {
                level[n % 8] = !level[n % 8];
                sim.pull(n % 8, level[n % 8]);
            }
            hold.countDown();
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (delivered.get() + poller.lostEvents() < edges && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            System.out.printf("# %d edges: %d delivered, %d lost (reported), %d missed on the lines' next events%n",
                    edges, delivered.get(), poller.lostEvents(), missed.get());
            check(poller.lostEvents() > 0, "no overflow with a 16-event buffer and a held-up listener");
            equal((long) edges, delivered.get() + poller.lostEvents(), "delivered + lost");
            equal(poller.lostEvents(), missed.get(), "lost = missed over the lines");
        }
    }
}
