package io.parambus.hw;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.parambus.ThreadAllocation;
import io.parambus.internal.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Uart} on a pseudo-terminal pair of the host (the slave opened as the port, the
 * master driven by {@link UartPty}): a pty keeps any baud rate and framing exactly, so
 * termios2 with BOTHER is checked end to end here; the real UARTs (ttyS1/ttyS2) are in
 * the VM's UartTest.
 */
class UartPtyTest {
    private static final Duration SECOND = Duration.ofSeconds(1);
    private UartPty pty;
    private Uart uart;

    @BeforeEach
    void open() throws Exception {
        pty = new UartPty();
        uart = Uart.open(pty.slavePath(), UartConfig.of(115200));
    }

    @AfterEach
    void close() {
        uart.close();
        pty.close();
    }

    @Test
    void arbitraryRatesAreStoredExactly() {
        for (int rate : new int[] {250_000, 31_250, 1_000_000, 1, 50, 3_000_000, 12_345_678, 115_200}) {
            uart.configure(UartConfig.of(rate));
            assertEquals(rate, uart.config().baudRate(), "rate " + rate);
        }
        try (Uart u = Uart.open(pty.slavePath(), UartConfig.of(76_800))) {
            assertEquals(76_800, u.config().baudRate());
        }
        // Opening without a configuration keeps what the port has.
        try (Uart u = Uart.open(pty.slavePath())) {
            assertEquals(76_800, u.config().baudRate());
        }
    }

    @Test
    void framingIsReadBackAsThePtyDriverKeepsIt() {
        // The pty driver keeps stop bits and flow control but forces CS8 and clears PARENB
        // (drivers/tty/pty.c, pty_set_termios): what config() reads back is that, the
        // driver's truth, not what was asked. UartTermiosTest checks the encoding of every
        // framing, the VM's UartTest reads them all back from a 16550.
        for (int data = 5; data <= 8; data++) {
            for (UartParity parity : UartParity.values()) {
                for (int stop = 1; stop <= 2; stop++) {
                    for (UartFlowControl flow : UartFlowControl.values()) {
                        UartConfig c = new UartConfig(9600, data, parity, stop, flow);
                        uart.configure(c);
                        assertEquals(c.withDataBits(8).withParity(UartParity.NONE), uart.config(), c.toString());
                    }
                }
            }
        }
        assertEquals("9600 8N2 XON_XOFF", uart.config().toString());
    }

    @Test
    void everyByteValueCrossesBothWaysUnchanged() {
        byte[] all = new byte[256];
        for (int i = 0; i < 256; i++) {
            all[i] = (byte) i; // CR, LF, ^C, ^D, XON, XOFF, DEL...: raw mode passes them all
        }
        pty.write(all);
        byte[] got = new byte[256];
        assertEquals(256, uart.readFrame(got, 0, 256, SECOND, SECOND));
        assertArrayEquals(all, got);
        uart.writeAll(all, 0, 256, SECOND);
        assertArrayEquals(all, pty.read(256, SECOND));
        // the same through native segments
        try (Arena a = Arena.ofConfined()) {
            MemorySegment seg = a.allocateFrom(ValueLayout.JAVA_BYTE, all);
            uart.writeAll(seg, SECOND);
            assertArrayEquals(all, pty.read(256, SECOND));
            pty.write(all);
            MemorySegment in = a.allocate(256);
            assertEquals(256, uart.readFrame(in, SECOND, SECOND));
            assertArrayEquals(all, in.toArray(ValueLayout.JAVA_BYTE));
        }
        // and a heap segment
        MemorySegment heap = MemorySegment.ofArray(new byte[256]);
        pty.write(all);
        assertEquals(256, uart.readFrame(heap, SECOND, SECOND));
        assertArrayEquals(all, heap.toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void readTimeoutIsHonoured() throws Exception {
        byte[] b = new byte[8];
        for (Duration t : new Duration[] {Duration.ofMillis(50), Duration.ofMillis(300)}) {
            long t0 = System.nanoTime();
            assertEquals(0, uart.read(b, 0, 8, t));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms >= t.toMillis() && ms < t.toMillis() + 1000, "read(" + t + ") took " + ms + " ms");
        }
        long t0 = System.nanoTime();
        assertEquals(0, uart.read(b, 0, 8, Duration.ZERO));
        assertTrue(System.nanoTime() - t0 < 500_000_000L);
        // from a virtual thread: the port's waiter thread polls, the virtual thread parks
        try (var ex = Executors.newVirtualThreadPerTaskExecutor()) {
            long v = ex.submit(() -> {
                long s = System.nanoTime();
                assertEquals(0, uart.read(MemorySegment.ofArray(new byte[8]), Duration.ofMillis(300)));
                return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - s);
            }).get();
            assertTrue(v >= 300 && v < 1300, "virtual thread's read(300 ms) took " + v + " ms");
        }
    }

    @Test
    void aReadReturnsAsSoonAsDataArrives() throws Exception {
        byte[] b = new byte[16];
        for (boolean virtual : new boolean[] {false, true}) {
            var ex = virtual ? Executors.newVirtualThreadPerTaskExecutor() : Executors.newSingleThreadExecutor();
            try (ex) {
                Future<Integer> f = ex.submit(() -> uart.read(b, 0, 16, Duration.ofSeconds(10)));
                Thread.sleep(100);
                long t0 = System.nanoTime();
                pty.write("hello".getBytes());
                assertEquals(5, f.get());
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertTrue(ms < 1000, "read returned " + ms + " ms after the data");
                assertEquals("hello", new String(b, 0, 5));
            }
        }
    }

    @Test
    void readFrameEndsAtTheGapBetweenBytes() throws Exception {
        byte[] b = new byte[32];
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            pty.write("abc".getBytes());
            sleep(400);
            pty.write("defg".getBytes());
        });
        assertEquals(3, uart.readFrame(b, 0, 32, Duration.ofSeconds(5), Duration.ofMillis(150)));
        assertEquals("abc", new String(b, 0, 3));
        assertEquals(4, uart.readFrame(b, 0, 32, Duration.ofSeconds(5), Duration.ofMillis(150)));
        assertEquals("defg", new String(b, 0, 4));
        writer.get();
        // a full buffer ends the frame before the gap
        pty.write("0123456789".getBytes());
        assertEquals(4, uart.readFrame(b, 0, 4, SECOND, SECOND));
        assertEquals(6, uart.readFrame(b, 4, 28, SECOND, Duration.ofMillis(100)));
        assertEquals("0123456789", new String(b, 0, 10));
        // nothing at all: 0 after the first-byte timeout
        assertEquals(0, uart.readFrame(b, 0, 4, Duration.ofMillis(100), SECOND));
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void writeAllWritesALongBufferThroughPartialWrites() throws Exception {
        byte[] data = new byte[1 << 20];
        new SplittableRandom(7).nextBytes(data);
        for (int mode = 0; mode < 3; mode++) {
            CompletableFuture<byte[]> reader = CompletableFuture.supplyAsync(() -> pty.read(data.length,
                    Duration.ofSeconds(30)));
            try (Arena a = Arena.ofConfined()) {
                switch (mode) {
                    case 0 -> uart.writeAll(data, 0, data.length, Duration.ofSeconds(30));
                    case 1 -> uart.writeAll(a.allocateFrom(ValueLayout.JAVA_BYTE, data), Duration.ofSeconds(30));
                    default -> uart.writeAll(MemorySegment.ofArray(data));
                }
            }
            assertArrayEquals(data, reader.get(), "mode " + mode);
        }
        // From a virtual thread, whose waits for room go through the waiter thread.
        CompletableFuture<byte[]> reader = CompletableFuture.supplyAsync(() -> pty.read(data.length,
                Duration.ofSeconds(30)));
        try (var ex = Executors.newVirtualThreadPerTaskExecutor()) {
            ex.submit(() -> uart.writeAll(data, 0, data.length, Duration.ofSeconds(30))).get();
        }
        assertArrayEquals(data, reader.get());
    }

    @Test
    void writeAllGivesUpAtItsTimeoutSayingHowFarItGot() {
        byte[] data = new byte[1 << 20];
        HwException e = assertThrows(HwException.class, () -> uart.writeAll(data, 0, data.length,
                Duration.ofMillis(200)));
        assertEquals(Native.ETIMEDOUT, e.errnoValue());
        assertTrue(e.getMessage().matches("UART write on /dev/pts/\\d+: ETIMEDOUT .*: \\d+ of 1048576 bytes written "
                + "in PT0.2S"), e.getMessage());
        uart.flush(Uart.Queue.OUTPUT);
        assertEquals(0, uart.write(MemorySegment.ofArray(new byte[0])));
    }

    @Test
    void pendingFlushDrainAndBreak() throws Exception {
        pty.write("0123456789".getBytes());
        long deadline = System.nanoTime() + 2_000_000_000L;
        while (uart.inputPending() < 10 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(10, uart.inputPending());
        uart.flush(Uart.Queue.INPUT);
        assertEquals(0, uart.inputPending());
        assertEquals(0, uart.read(new byte[4], 0, 4, Duration.ofMillis(50)));
        uart.writeAll("abc".getBytes(), 0, 3, SECOND);
        uart.drain(SECOND);
        assertEquals(0, uart.outputPending());
        assertArrayEquals("abc".getBytes(), pty.read(3, SECOND));
        long t0 = System.nanoTime();
        uart.sendBreak(Duration.ofMillis(100));
        assertTrue(System.nanoTime() - t0 >= 100_000_000L);
        uart.setExclusive(true);
        uart.setExclusive(false);
    }

    private static List<Thread> waiterThreads() {
        List<Thread> l = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("parambus-uart ")) {
                l.add(t);
            }
        }
        return l;
    }

    @Test
    void waitingVirtualThreadsLeaveTheirCarriersFree() throws Exception {
        // Four times as many waiting readers as there are carriers: if each pinned its
        // carrier in poll(2), nothing else would run until their reads time out.
        int n = 4 * Runtime.getRuntime().availableProcessors();
        List<UartPty> ptys = new ArrayList<>();
        List<Uart> ports = new ArrayList<>();
        try (var ex = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < n; i++) {
                UartPty p = new UartPty();
                ptys.add(p);
                ports.add(Uart.open(p.slavePath(), UartConfig.of(9600)));
            }
            List<Future<Integer>> reads = new ArrayList<>();
            for (Uart u : ports) {
                reads.add(ex.submit(() -> u.read(new byte[1], 0, 1, Duration.ofSeconds(3))));
            }
            Thread.sleep(300);
            long t0 = System.nanoTime();
            ex.submit(() -> Math.sqrt(2)).get();
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms < 1000, "another virtual thread waited " + ms + " ms for a carrier");
            assertEquals(n, waiterThreads().size(), "one waiter thread per port");
            ptys.get(0).write(new byte[] {42});
            assertEquals(1, reads.get(0).get());
            for (Future<Integer> f : reads.subList(1, n)) {
                assertEquals(0, f.get());
            }
        } finally {
            ports.forEach(Uart::close);
            ptys.forEach(UartPty::close);
        }
        assertEquals(List.of(), waiterThreads(), "waiter threads left after close");
    }

    @Test
    void closeEndsAWaitingReadOrWrite() throws Exception {
        for (boolean virtual : new boolean[] {false, true}) {
            Uart u = Uart.open(pty.slavePath(), UartConfig.of(9600));
            var ex = virtual ? Executors.newVirtualThreadPerTaskExecutor() : Executors.newCachedThreadPool();
            try (ex) {
                Future<Integer> r = ex.submit(() -> u.read(new byte[1], 0, 1, Duration.ofSeconds(30)));
                byte[] big = new byte[1 << 20];
                Future<?> w = ex.submit(() -> u.writeAll(big, 0, big.length, Duration.ofSeconds(30)));
                Thread.sleep(200);
                long t0 = System.nanoTime();
                u.close();
                for (Future<?> f : List.of(r, w)) {
                    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
                    HwException h = (HwException) e.getCause();
                    assertEquals(9, h.errnoValue(), h.getMessage());
                    assertTrue(h.getMessage().endsWith(": EBADF (Bad file descriptor): closed"), h.getMessage());
                }
                assertTrue(System.nanoTime() - t0 < 2_000_000_000L);
            }
            uart.flush(Uart.Queue.BOTH);
            while (pty.read(65536, Duration.ofMillis(50)).length > 0) {
                // drop what the closed port had written
            }
        }
        assertEquals(List.of(), waiterThreads());
    }

    @Test
    void errorsNameTheOperationThePortAndTheErrno() {
        HwException e = assertThrows(HwException.class, () -> Uart.open("/dev/null"));
        assertEquals("UART open (TCGETS2) on /dev/null: ENOTTY (Inappropriate ioctl for device)", e.getMessage());
        e = assertThrows(HwException.class, () -> Uart.open("/dev/ttyNOSUCH", UartConfig.of(9600)));
        assertEquals("UART open on /dev/ttyNOSUCH: ENOENT (No such file or directory)", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> UartConfig.of(0));
        assertThrows(IllegalArgumentException.class, () -> UartConfig.of(9600).withDataBits(9));
        assertThrows(IllegalArgumentException.class, () -> UartConfig.of(9600).withDataBits(4));
        assertThrows(IllegalArgumentException.class, () -> UartConfig.of(9600).withStopBits(3));
        assertThrows(IllegalArgumentException.class, () -> uart.read(new byte[1], 0, 1, Duration.ofMillis(-1)));
        assertThrows(IndexOutOfBoundsException.class, () -> uart.read(new byte[1], 0, 2, SECOND));
        uart.close();
        uart.close(); // idempotent
        e = assertThrows(HwException.class, () -> uart.read(new byte[1], 0, 1, SECOND));
        assertEquals("UART read on " + pty.slavePath() + ": EBADF (Bad file descriptor): closed", e.getMessage());
        e = assertThrows(HwException.class, () -> uart.config());
        assertEquals(9, e.errnoValue());
        assertThrows(HwException.class, () -> uart.writeAll(new byte[1], 0, 1, SECOND));
        assertThrows(HwException.class, () -> uart.drain(SECOND));
    }

    @Test
    void aHungUpLineIsAnError() {
        pty.close();
        HwException e = assertThrows(HwException.class, () -> uart.read(new byte[1], 0, 1, SECOND));
        assertEquals(5, e.errnoValue(), e.getMessage());
        assertTrue(e.getMessage().startsWith("UART read on " + pty.slavePath() + ": EIO"), e.getMessage());
    }

    @Test
    void openAndCloseLeaveNoDescriptorOrThread() throws Exception {
        int fds = openFds();
        for (int i = 0; i < 200; i++) {
            try (Uart u = Uart.open(pty.slavePath(), UartConfig.of(4800))) {
                if (i % 20 == 0) {
                    Thread.ofVirtual().start(() -> u.read(new byte[1], 0, 1, Duration.ofMillis(1))).join();
                }
            }
        }
        assertEquals(fds, openFds());
        assertEquals(List.of(), waiterThreads());
    }

    private static int openFds() {
        String[] l = new java.io.File("/proc/self/fd").list();
        return l == null ? -1 : l.length;
    }

    // ---- allocation ----

    @Test
    void readsAndWritesOfANativeSegmentAllocateNothing() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(8);
            MemorySegment in = a.allocate(8);
            MemorySegment master = a.allocate(8);
            MemorySegment capture = a.allocate(Native.captureLayout());
            byte[] heap = new byte[8];
            int fd = pty.masterFd();
            long[] bytes = new long[3];
            for (int round = 0; round < 3; round++) {
                for (int k = 0; k < 20_000; k++) { // warm up
                    roundTrip(fd, out, in, master, capture, heap);
                }
                long before = ThreadAllocation.bytes();
                for (int k = 0; k < 10_000; k++) {
                    roundTrip(fd, out, in, master, capture, heap);
                }
                bytes[round] = ThreadAllocation.bytes() - before;
                if (bytes[round] < 512) {
                    return;
                }
            }
            assertFalse(true, "10,000 round trips allocated " + Arrays.toString(bytes) + " bytes");
        }
    }

    private void roundTrip(int fd, MemorySegment out, MemorySegment in, MemorySegment master, MemorySegment capture,
            byte[] heap) {
        uart.writeAll(out, SECOND);
        long got = 0;
        while (got < 8) {
            got += Math.max(0, Native.read(fd, master, 8 - got, capture));
        }
        Native.write(fd, master, 8, capture);
        int n = uart.read(in, SECOND); // straight into the caller's segment
        if (n < 8 && uart.readFrame(heap, 0, 8 - n, SECOND, SECOND) != 8 - n) {
            throw new IllegalStateException("short read");
        }
        Native.write(fd, master, 8, capture);
        if (uart.readFrame(heap, 0, 8, SECOND, SECOND) != 8) {
            throw new IllegalStateException("short frame");
        }
    }
}
