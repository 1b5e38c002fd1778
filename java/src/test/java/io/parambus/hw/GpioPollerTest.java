package io.parambus.hw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * {@link GpioEventPoller} on the host, fed the kernel's exact 48-byte edge records through
 * a pipe adopted as a request's descriptor ({@link PipeRequest}): the same epoll, read
 * and delivery path as with a GPIO chip (the VM tests run it against gpio-sim).
 */
class GpioPollerTest {
    /** Checks one registration's stream: every event once, in order, none missed. */
    private static final class Checker implements GpioEdgeListener {
        final int line; // chip offset, or -1 for all lines
        final AtomicLong count = new AtomicLong();
        final AtomicReference<String> problem = new AtomicReference<>();
        long next = 1; // the listener runs one call at a time: plain fields are enough
        final CountDownLatch done;
        final long expected;

        Checker(int line, long expected) {
            this.line = line;
            this.expected = expected;
            this.done = new CountDownLatch(1);
        }

        @Override
        public void onEdge(GpioEdgeEvent e) {
            long seq = line < 0 ? e.seqno() : e.lineSeqno();
            if (seq != next || (line >= 0 && e.offset() != line) || e.missed() != 0) {
                problem.compareAndSet(null, "event " + e + " where seq " + next + " was due");
            }
            next = seq + 1;
            if (count.incrementAndGet() == expected) {
                done.countDown();
            }
        }

        void await(long seconds) throws InterruptedException {
            assertTrue(done.await(seconds, TimeUnit.SECONDS), "listener of line " + line + " got " + count.get()
                    + " of " + expected + " events");
            assertNull(problem.get());
        }
    }

    private static long heapAfterGc() {
        Runtime rt = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            used = Math.min(used, rt.totalMemory() - rt.freeMemory());
        }
        return used;
    }

    private static int platformThreads() {
        return Thread.getAllStackTraces().size();
    }

    private static long openFds() throws IOException {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    private static boolean pollerThreadsAlive() {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().startsWith("gpio-poller-"));
    }

    /**
     * 10^7 events through one request of 8 lines, to a listener of all lines and one per
     * line (2 * 10^7 deliveries, on virtual threads): every event arrives once and in
     * order, and the heap after GC and the platform thread count at the end are those
     * after the first 10^6: nothing is kept per event (Pi4J's listeners ran a JVM out of
     * memory after a day of events).
     */
    @Test
    void tenMillionEventsWithFlatHeapAndThreads() throws Exception {
        final long total = 10_000_000, warm = 1_000_000;
        int[] offsets = {0, 1, 2, 3, 4, 5, 6, 7};
        try (PipeRequest p = PipeRequest.open(offsets); GpioEventPoller poller = GpioEventPoller.start()) {
            Checker all = new Checker(-1, total);
            poller.listen(p.request, all);
            List<Checker> perLine = new ArrayList<>();
            for (int o : offsets) {
                Checker c = new Checker(o, total / 8);
                perLine.add(c);
                poller.listen(p.request, o, c);
            }
            long t0 = System.nanoTime();
            p.writeEvents(1, warm);
            while (all.count.get() < warm) {
                Thread.sleep(10);
                assertNull(all.problem.get());
            }
            long heap0 = heapAfterGc();
            int threads0 = platformThreads();
            Thread writer = Thread.ofPlatform().start(() -> p.writeEvents(warm + 1, total - warm));
            all.await(300);
            for (Checker c : perLine) {
                c.await(60);
            }
            writer.join();
            double seconds = (System.nanoTime() - t0) / 1e9;
            long heap1 = heapAfterGc();
            int threads1 = platformThreads();
            System.out.printf("GpioPollerTest: %d events (x2 deliveries) in %.1f s (%.0f events/s); heap after GC"
                    + " %d KiB after 10^6, %d KiB after 10^7; platform threads %d, %d%n", total, seconds,
                    total / seconds, heap0 / 1024, heap1 / 1024, threads0, threads1);
            assertEquals(total, poller.eventCount());
            assertEquals(0, poller.lostEvents());
            assertTrue(heap1 - heap0 < 4 << 20, "heap after GC grew by " + (heap1 - heap0) / 1024 + " KiB over "
                    + (total - warm) + " events");
            assertTrue(threads1 <= threads0 + 1, "platform threads: " + threads0 + " after 10^6 events, " + threads1
                    + " after 10^7");
        }
        assertFalse(pollerThreadsAlive(), "a gpio-poller thread outlived close()");
    }

    /** 64 listeners on 8 lines (8 each) on a platform pool: every one gets all of its line's events, in order. */
    @Test
    void sixtyFourListenersOnEightLinesOnAPlatformPool() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        int[] offsets = {10, 11, 12, 13, 14, 15, 16, 17};
        final long perLineEvents = 1000;
        try (PipeRequest p = PipeRequest.open(offsets);
                GpioEventPoller poller = GpioEventPoller.builder().executor(pool).start()) {
            List<Checker> checkers = new ArrayList<>();
            for (int k = 0; k < 64; k++) {
                Checker c = new Checker(offsets[k % 8], perLineEvents);
                checkers.add(c);
                poller.listen(p.request, c.line, c);
            }
            p.writeEvents(1, perLineEvents * 8);
            for (Checker c : checkers) {
                c.await(60);
            }
        } finally {
            pool.shutdown();
        }
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    /** A listener that throws is reported, once per throw, and gets the following events all the same. */
    @Test
    void aThrowingListenerIsReportedAndDeliveryGoesOn() throws Exception {
        ConcurrentLinkedQueue<Throwable> reported = new ConcurrentLinkedQueue<>();
        try (PipeRequest p = PipeRequest.open(new int[] {1});
                GpioEventPoller poller = GpioEventPoller.builder().uncaughtExceptionHandler((t, e) -> reported.add(e))
                        .start()) {
            CountDownLatch ten = new CountDownLatch(10);
            poller.listen(p.request, e -> {
                ten.countDown();
                if (e.seqno() % 3 == 0) {
                    throw new IllegalStateException("listener failed at " + e.seqno());
                }
            });
            p.writeEvents(1, 10);
            assertTrue(ten.await(10, TimeUnit.SECONDS));
        }
        assertEquals(List.of("listener failed at 3", "listener failed at 6", "listener failed at 9"),
                reported.stream().map(Throwable::getMessage).toList());
    }

    /** A gap in the sequence numbers (the kernel's buffer overflowed) is counted and shown on the line's next event. */
    @Test
    void kernelBufferOverflowIsReportedNotSilent() throws Exception {
        try (PipeRequest p = PipeRequest.open(new int[] {4, 5}); GpioEventPoller poller = GpioEventPoller.start()) {
            ConcurrentLinkedQueue<GpioEdgeEvent> got = new ConcurrentLinkedQueue<>();
            CountDownLatch four = new CountDownLatch(4);
            poller.listen(p.request, e -> {
                got.add(e);
                four.countDown();
            });
            p.writeEvent(1, 4, 1, 1);
            p.writeEvent(2, 5, 1, 1);
            // seqno 3..5 were dropped: 4's events 2 and 3, 5's event 2.
            p.writeEvent(6, 4, 4, 2);
            p.writeEvent(7, 5, 3, 2);
            assertTrue(four.await(10, TimeUnit.SECONDS));
            assertEquals(List.of(0L, 0L, 2L, 1L), got.stream().map(GpioEdgeEvent::missed).toList());
            assertEquals(3, poller.lostEvents());
        }
    }

    /**
     * A listener far slower than its events, with a small queue: the poller stops reading
     * the request while the queue is full (the events wait in the pipe, as they would in
     * the kernel's buffer), and every event arrives, in order.
     */
    @Test
    void aSlowListenerHoldsBackReadingAndLosesNothing() throws Exception {
        final long total = 3000; // more than the pipe holds (64 KiB: 1365 events): the writer waits too
        try (PipeRequest p = PipeRequest.open(new int[] {0, 1, 2});
                GpioEventPoller poller = GpioEventPoller.builder().queueCapacity(64).start()) {
            Checker slow = new Checker(-1, total);
            poller.listen(p.request, e -> {
                if (e.seqno() < 100) {
                    try {
                        Thread.sleep(2);
                    } catch (InterruptedException x) {
                        Thread.currentThread().interrupt();
                    }
                }
                slow.onEdge(e);
            });
            Checker fast = new Checker(2, total / 3);
            poller.listen(p.request, 2, fast);
            Thread writer = Thread.ofPlatform().start(() -> p.writeEvents(1, total));
            slow.await(60);
            fast.await(60);
            writer.join();
            assertEquals(0, poller.lostEvents());
        }
    }

    /**
     * A failed read (here end of file: the pipe's writer closed) goes to the request's
     * listeners' onError after the events read before it; the poller goes on serving
     * other requests.
     */
    @Test
    void aFailedRequestIsReportedAndThePollerSurvives() throws Exception {
        try (PipeRequest bad = PipeRequest.open(new int[] {0}); PipeRequest good = PipeRequest.open(new int[] {3});
                GpioEventPoller poller = GpioEventPoller.start()) {
            AtomicInteger before = new AtomicInteger();
            AtomicReference<HwException> error = new AtomicReference<>();
            CountDownLatch failed = new CountDownLatch(1);
            poller.listen(bad.request, new GpioEdgeListener() {
                @Override
                public void onEdge(GpioEdgeEvent e) {
                    before.incrementAndGet();
                }

                @Override
                public void onError(HwException e) {
                    error.set(e);
                    failed.countDown();
                }
            });
            Checker c = new Checker(-1, 200);
            poller.listen(good.request, c);
            bad.writeEvents(1, 5);
            bad.closeWriteEnd();
            assertTrue(failed.await(10, TimeUnit.SECONDS));
            assertEquals(5, before.get());
            assertEquals("GPIO edge event read", error.get().operation());
            assertEquals("EIO", error.get().errno());
            assertTrue(error.get().getMessage().contains("end of file"), error.get().getMessage());
            good.writeEvents(1, 200);
            c.await(10);
            assertTrue(poller.thread().isAlive());
            // The failed request left the poller: it can be read directly again.
            try (GpioEventBuffer b = new GpioEventBuffer(1)) {
                assertThrows(HwException.class, () -> bad.request.readEvents(b, Duration.ZERO));
            }
        }
    }

    @Test
    void misuseIsRefused() throws Exception {
        GpioEventPoller a = GpioEventPoller.start();
        try (PipeRequest p = PipeRequest.open(new int[] {0, 1}); GpioEventPoller b = GpioEventPoller.start();
                GpioEventBuffer buf = new GpioEventBuffer(2)) {
            GpioEventPoller.Registration r = a.listen(p.request, e -> { });
            assertTrue(assertThrows(IllegalStateException.class, () -> b.listen(p.request, e -> { })).getMessage()
                    .contains("another GpioEventPoller"));
            assertTrue(assertThrows(IllegalStateException.class, () -> p.request.readEvents(buf, Duration.ZERO))
                    .getMessage().contains("a GpioEventPoller reads this request's events"));
            assertThrows(IllegalArgumentException.class, () -> a.listen(p.request, 7, e -> { }));
            r.close();
            r.close();
            assertEquals(0, p.request.readEvents(buf, Duration.ZERO), "direct reads again once nobody listens");
            b.listen(p.request, e -> { }); // and another poller may take it
            p.request.close();
            HwException e = assertThrows(HwException.class, () -> a.listen(p.request, x -> { }));
            assertEquals("EBADF", e.errno());
            a.close();
            try (PipeRequest q = PipeRequest.open(new int[] {0})) {
                assertTrue(assertThrows(IllegalStateException.class, () -> a.listen(q.request, x -> { })).getMessage()
                        .contains("the poller is closed"));
            }
        } finally {
            a.close(); // idempotent
        }
    }

    /** Closing the poller from one of its listeners, with a direct executor (listeners on the poller thread). */
    @Test
    void closeFromAListenerOnThePollerThread() throws Exception {
        try (PipeRequest p = PipeRequest.open(new int[] {0})) {
            GpioEventPoller poller = GpioEventPoller.builder().executor(Runnable::run).start();
            CountDownLatch closed = new CountDownLatch(1);
            poller.listen(p.request, e -> {
                poller.close();
                closed.countDown();
            });
            p.writeEvents(1, 1);
            assertTrue(closed.await(10, TimeUnit.SECONDS));
            poller.thread().join(10_000);
            assertFalse(poller.thread().isAlive());
        }
    }

    /**
     * Requests opened, listened to and closed 2000 times on one poller, and pollers
     * started and closed 200 times: descriptors and threads back to where they were.
     */
    @Test
    void openAndCloseLeavesNoDescriptorOrThread() throws Exception {
        // Warm up: the virtual-thread scheduler's carriers start with the first listener.
        try (PipeRequest p = PipeRequest.open(new int[] {0}); GpioEventPoller poller = GpioEventPoller.start()) {
            Checker c = new Checker(-1, 1);
            poller.listen(p.request, c);
            p.writeEvents(1, 1);
            c.await(10);
        }
        long fds0 = openFds();
        int threads0 = platformThreads();
        try (GpioEventPoller poller = GpioEventPoller.start()) {
            for (int i = 0; i < 2000; i++) {
                try (PipeRequest p = PipeRequest.open(new int[] {0, 1})) {
                    Checker c = new Checker(-1, 2);
                    poller.listen(p.request, c);
                    p.writeEvents(1, 2);
                    c.await(10);
                }
            }
        }
        for (int i = 0; i < 200; i++) {
            GpioEventPoller.start().close();
        }
        assertFalse(pollerThreadsAlive());
        // A descriptor or thread per request would show 2000; allow the odd one of another
        // test's background activity in this JVM.
        long fds1 = openFds();
        assertTrue(fds1 <= fds0 + 2, "open descriptors " + fds0 + " -> " + fds1);
        assertTrue(platformThreads() <= threads0 + 2, "platform threads " + threads0 + " -> " + platformThreads());
    }
}
