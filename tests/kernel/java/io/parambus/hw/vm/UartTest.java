package io.parambus.hw.vm;

import io.parambus.hw.HwException;
import io.parambus.hw.Uart;
import io.parambus.hw.UartConfig;
import io.parambus.hw.UartFlowControl;
import io.parambus.hw.UartParity;
import io.parambus.internal.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;

/**
 * io.parambus.hw.Uart on the guest's two emulated 16550s cross-linked by the host
 * (/dev/ttyS1 to /dev/ttyS2, tests/kernel/ENVIRONMENT.md section 7) and on a
 * pseudo-terminal pair (any baud rate stored exactly). The Java counterpart of
 * suite/test-uart.c. The link is a datagram socket on the host: bytes arrive, timing
 * is not the line's.
 */
public class UartTest implements AutoCloseable {
    public static void main(String[] args) {
        VmSuite.main(UartTest.class, args);
    }

    private static final Duration LONG = Duration.ofSeconds(10);
    private final List<Uart> opened = new ArrayList<>();

    @Override
    public void close() {
        opened.forEach(Uart::close);
    }

    private Uart open(String path, UartConfig c, Uart.Option... options) {
        Uart u = Uart.open(path, c, options);
        opened.add(u);
        return u;
    }

    /** ttyS1 and ttyS2 at c, their queues emptied. */
    private Uart[] pair(UartConfig c) {
        Uart a = open("/dev/ttyS1", c);
        Uart b = open("/dev/ttyS2", c);
        a.flush(Uart.Queue.BOTH);
        b.flush(Uart.Queue.BOTH);
        return new Uart[] {a, b};
    }

    private static byte[] readN(Uart u, int n, Duration timeout) {
        byte[] b = new byte[n];
        int got = u.readFrame(b, 0, n, timeout, timeout);
        return Arrays.copyOf(b, got);
    }

    private static long ms(long t0) {
        return (System.nanoTime() - t0) / 1_000_000;
    }

    @VmSuite.Case
    public void bytes_cross_both_ways_115200_8N1() {
        Uart[] p = pair(UartConfig.of(115_200));
        byte[] all = new byte[256];
        for (int i = 0; i < 256; i++) {
            all[i] = (byte) (i * 37); // every value: NUL, CR, LF, XON, XOFF, ^C... raw mode passes them
        }
        // in bursts of 128: the host's link holds about 256 bytes in flight (see write_all_of_a_long_buffer)
        for (int off = 0; off < 256; off += 128) {
            p[0].writeAll(all, off, 128, LONG);
            p[0].drain(LONG);
            VmSuite.check(Arrays.equals(Arrays.copyOfRange(all, off, off + 128), readN(p[1], 128, LONG)),
                    "ttyS1 -> ttyS2: bytes %d to %d differ", off, off + 127);
        }
        byte[] pong = "pong from ttyS2".getBytes();
        p[1].writeAll(pong, 0, pong.length, LONG);
        VmSuite.check(Arrays.equals(pong, readN(p[0], pong.length, LONG)), "ttyS2 -> ttyS1: bytes differ");
        VmSuite.equal(UartConfig.of(115_200), p[0].config(), "ttyS1 configuration");
    }

    @VmSuite.Case
    public void bytes_cross_both_ways_9600_7E2() {
        UartConfig c = new UartConfig(9600, 7, UartParity.EVEN, 2, UartFlowControl.NONE);
        Uart[] p = pair(c);
        VmSuite.equal(c, p[0].config(), "ttyS1 read back");
        VmSuite.equal(c, p[1].config(), "ttyS2 read back");
        VmSuite.equal("9600 7E2", p[1].config().toString(), "short form");
        byte[] seven = new byte[128];
        for (int i = 0; i < 128; i++) {
            seven[i] = (byte) i;
        }
        for (int off = 0; off < 128; off += 64) {
            byte[] part = Arrays.copyOfRange(seven, off, off + 64);
            p[1].writeAll(part, 0, 64, LONG);
            VmSuite.check(Arrays.equals(part, readN(p[0], 64, LONG)), "ttyS2 -> ttyS1 at 9600 7E2: bytes differ");
            p[0].writeAll(part, 0, 64, LONG);
            VmSuite.check(Arrays.equals(part, readN(p[1], 64, LONG)), "ttyS1 -> ttyS2 at 9600 7E2: bytes differ");
        }
    }

    @VmSuite.Case
    public void every_framing_is_read_back_from_the_16550() {
        Uart u = open("/dev/ttyS1", UartConfig.of(38_400));
        for (int data = 5; data <= 8; data++) {
            for (UartParity parity : UartParity.values()) {
                for (int stop = 1; stop <= 2; stop++) {
                    for (UartFlowControl flow : UartFlowControl.values()) {
                        UartConfig c = new UartConfig(38_400, data, parity, stop, flow);
                        u.configure(c);
                        VmSuite.equal(c, u.config(), "read back of " + c);
                    }
                }
            }
        }
    }

    @VmSuite.Case
    public void rate_is_what_the_driver_made() {
        // The emulated 16550 tops out at 115200: the 8250 driver refuses 250000 and keeps
        // a rate it can make; config() tells the rate in effect, not the one asked for.
        Uart u = open("/dev/ttyS2", UartConfig.of(9600));
        VmSuite.equal(9600, u.config().baudRate(), "9600");
        u.configure(UartConfig.of(250_000));
        VmSuite.equal(9600, u.config().baudRate(), "after asking for 250000 at 9600");
        u.configure(UartConfig.of(115_200));
        u.configure(UartConfig.of(250_000));
        VmSuite.equal(115_200, u.config().baudRate(), "after asking for 250000 at 115200");
        u.configure(UartConfig.of(57_600));
        VmSuite.equal(57_600, u.config().baudRate(), "57600");
    }

    @VmSuite.Case
    public void read_timeout_is_honoured() throws Exception {
        Uart[] p = pair(UartConfig.of(115_200));
        byte[] b = new byte[8];
        long t0 = System.nanoTime();
        VmSuite.equal(0, p[1].read(b, 0, 8, Duration.ofMillis(300)), "bytes read from a silent line");
        long platform = ms(t0);
        long virtual;
        try (var ex = Executors.newVirtualThreadPerTaskExecutor()) {
            virtual = ex.submit(() -> {
                long s = System.nanoTime();
                VmSuite.equal(0, p[1].read(MemorySegment.ofArray(new byte[8]), Duration.ofMillis(300)), "bytes");
                return ms(s);
            }).get();
        }
        System.out.println("# read(300 ms) took " + platform + " ms on a platform thread, " + virtual
                + " ms on a virtual thread");
        VmSuite.check(platform >= 300 && platform < 1300, "platform thread: read(300 ms) took %d ms", platform);
        VmSuite.check(virtual >= 300 && virtual < 1300, "virtual thread: read(300 ms) took %d ms", virtual);
        // data arriving during the wait ends it at once
        Future<Integer> f;
        try (var ex = Executors.newVirtualThreadPerTaskExecutor()) {
            f = ex.submit(() -> p[1].read(b, 0, 8, LONG));
            Thread.sleep(200);
            t0 = System.nanoTime();
            p[0].writeAll(new byte[] {7}, 0, 1, LONG);
            VmSuite.equal(1, (int) f.get(), "bytes");
        }
        System.out.println("# a waiting read returned " + ms(t0) + " ms after the write");
    }

    @VmSuite.Case
    public void a_frame_ends_at_the_gap_between_bytes() throws Exception {
        Uart[] p = pair(UartConfig.of(115_200));
        CompletableFuture<Void> w = CompletableFuture.runAsync(() -> {
            p[0].writeAll("abc".getBytes(), 0, 3, LONG);
            p[0].drain(LONG);
            try {
                Thread.sleep(800);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            p[0].writeAll("defg".getBytes(), 0, 4, LONG);
        });
        byte[] b = new byte[32];
        int n = p[1].readFrame(b, 0, 32, LONG, Duration.ofMillis(300));
        VmSuite.equal("abc", new String(b, 0, n), "first frame");
        n = p[1].readFrame(b, 0, 32, LONG, Duration.ofMillis(300));
        VmSuite.equal("defg", new String(b, 0, n), "second frame");
        w.get();
    }

    /** Sets (or clears) the 16550's loopback bit (MCR LOOP, TIOCM_LOOP) of path through a descriptor of its own. */
    private static void loopback(String path, boolean on) throws Native.Errno {
        int fd = Native.open(path, Native.O_RDWR | Native.O_NOCTTY | Native.O_NONBLOCK | Native.O_CLOEXEC);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment bits = a.allocate(ValueLayout.JAVA_INT);
            bits.set(ValueLayout.JAVA_INT, 0, 0x8000); // TIOCM_LOOP
            int r = Native.ioctl(fd, on ? 0x5416L : 0x5417L, bits, a.allocate(Native.captureLayout())); // TIOCMBIS/BIC
            VmSuite.equal(0, r, on ? "TIOCMBIS TIOCM_LOOP" : "TIOCMBIC TIOCM_LOOP");
        } finally {
            Native.close(fd);
        }
    }

    @VmSuite.Case
    public void write_all_of_a_long_buffer() throws Exception {
        // The host's link between ttyS1 and ttyS2 is a UDP socket per direction that holds
        // about 256 one-byte datagrams: a longer burst than the guest receives meanwhile is
        // dropped by the host (measured: of 512 bytes written at once, ~260 arrive). So the
        // long buffer goes through the 16550's own loopback (MCR LOOP, emulated by qemu:
        // every transmitted byte enters the same port's receive FIFO), read back by a
        // second thread on the same Uart while the first writes.
        Uart u = open("/dev/ttyS1", UartConfig.of(115_200));
        loopback("/dev/ttyS1", true);
        try {
            u.flush(Uart.Queue.BOTH);
            byte[] data = new byte[12 * 1024]; // three times the serial core's 4 KiB transmit buffer
            new SplittableRandom(18).nextBytes(data);
            for (boolean virtual : new boolean[] {false, true}) {
                CompletableFuture<byte[]> r = CompletableFuture.supplyAsync(() -> readN(u, data.length,
                        Duration.ofSeconds(20)));
                long t0 = System.nanoTime();
                if (virtual) {
                    try (var ex = Executors.newVirtualThreadPerTaskExecutor()) {
                        ex.submit(() -> u.writeAll(data, 0, data.length, Duration.ofSeconds(20))).get();
                    }
                } else {
                    try (Arena a = Arena.ofConfined()) {
                        u.writeAll(a.allocateFrom(ValueLayout.JAVA_BYTE, data), Duration.ofSeconds(20));
                    }
                }
                long written = ms(t0);
                u.drain(Duration.ofSeconds(20));
                VmSuite.equal(0, u.outputPending(), "output pending after drain");
                long drained = ms(t0);
                byte[] got = r.get();
                System.out.println("# " + data.length + " bytes from a " + (virtual ? "virtual" : "platform")
                        + " thread: written in " + written + " ms, drained in " + drained + " ms, received in "
                        + ms(t0) + " ms");
                VmSuite.equal(data.length, got.length, "bytes received");
                VmSuite.check(Arrays.equals(data, got), "bytes differ");
            }
        } finally {
            loopback("/dev/ttyS1", false);
        }
    }

    @VmSuite.Case
    public void flush_and_pending() throws Exception {
        Uart[] p = pair(UartConfig.of(115_200));
        p[0].writeAll("12345678".getBytes(), 0, 8, LONG);
        p[0].drain(LONG);
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (p[1].inputPending() < 8 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        VmSuite.equal(8, p[1].inputPending(), "input pending");
        p[1].flush(Uart.Queue.INPUT);
        VmSuite.equal(0, p[1].inputPending(), "input pending after flush");
        VmSuite.equal(0, p[1].read(new byte[8], 0, 8, Duration.ofMillis(200)), "bytes read after flush");
        long t0 = System.nanoTime();
        p[0].sendBreak(Duration.ofMillis(100));
        VmSuite.check(ms(t0) >= 100, "break of 100 ms took %d ms", ms(t0));
    }

    // ---- pseudo-terminal ----

    /** A pty pair: the master held here with plain FFM calls, the slave opened as a Uart. */
    private static final class Pty implements AutoCloseable {
        final Arena arena = Arena.ofConfined();
        final MemorySegment capture = arena.allocate(Native.captureLayout());
        final MemorySegment buf = arena.allocate(256);
        final int master;
        final String slave;

        Pty() throws Native.Errno {
            master = Native.open("/dev/ptmx", Native.O_RDWR | Native.O_NOCTTY | Native.O_CLOEXEC);
            MemorySegment n = arena.allocate(ValueLayout.JAVA_INT);
            // TIOCSPTLCK (unlock) and TIOCGPTN (the number): _IOW/_IOR('T', 0x31/0x30, int)
            if (Native.ioctl(master, 0x40045431L, n, capture) < 0 || Native.ioctl(master, 0x80045430L, n, capture) < 0) {
                Native.close(master);
                throw new IllegalStateException("unlocking /dev/ptmx failed");
            }
            slave = "/dev/pts/" + n.get(ValueLayout.JAVA_INT, 0);
        }

        @Override
        public void close() {
            Native.close(master);
            arena.close();
        }
    }

    @VmSuite.Case
    public void any_rate_is_stored_exactly_on_a_pty() throws Exception {
        try (Pty pty = new Pty()) {
            Uart u = open(pty.slave, UartConfig.of(250_000));
            VmSuite.equal(250_000, u.config().baudRate(), "rate after open");
            for (int rate : new int[] {31_250, 1_000_000, 1, 12_345, 3_000_000, 74_880}) {
                u.configure(UartConfig.of(rate));
                VmSuite.equal(rate, u.config().baudRate(), "rate " + rate);
            }
            // Stop bits and flow control are kept; data bits and parity are not: the pty
            // driver forces CS8 and clears PARENB (drivers/tty/pty.c, pty_set_termios), so
            // config() reads back 8 and NONE (every framing is read back from the 16550).
            for (int data = 5; data <= 8; data++) {
                for (UartParity parity : UartParity.values()) {
                    UartConfig c = new UartConfig(31_250, data, parity, 2, UartFlowControl.XON_XOFF);
                    u.configure(c);
                    VmSuite.equal(c.withDataBits(8).withParity(UartParity.NONE), u.config(), "pty read back of " + c);
                }
            }
            // and bytes pass
            pty.buf.set(ValueLayout.JAVA_BYTE, 0, (byte) 'x');
            Native.write(pty.master, pty.buf, 1, pty.capture);
            VmSuite.equal("x", new String(readN(u, 1, LONG)), "byte from the master");
        }
    }

    // ---- exclusive, close, leftovers ----

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle CAPGET = LINKER.downcallHandle(LINKER.defaultLookup().find("capget")
            .orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
    private static final MethodHandle CAPSET = LINKER.downcallHandle(LINKER.defaultLookup().find("capset")
            .orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS));

    /** Drops (or raises again) CAP_SYS_ADMIN in the calling thread's effective set (capset is per thread). */
    private static void sysAdmin(boolean on) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment hdr = a.allocate(8, 4);
            hdr.set(ValueLayout.JAVA_INT, 0, 0x20080522); // _LINUX_CAPABILITY_VERSION_3
            hdr.set(ValueLayout.JAVA_INT, 4, 0);
            MemorySegment data = a.allocate(24, 4); // two {effective, permitted, inheritable}
            int r = (int) CAPGET.invokeExact(hdr, data);
            VmSuite.equal(0, r, "capget");
            int eff = data.get(ValueLayout.JAVA_INT, 0);
            data.set(ValueLayout.JAVA_INT, 0, on ? eff | (1 << 21) : eff & ~(1 << 21)); // CAP_SYS_ADMIN = 21
            r = (int) CAPSET.invokeExact(hdr, data);
            VmSuite.equal(0, r, "capset");
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    @VmSuite.Case
    public void exclusive_refuses_a_second_open() throws Exception {
        Uart u = open("/dev/ttyS1", UartConfig.of(115_200), Uart.Option.EXCLUSIVE);
        AtomicReference<Object> second = new AtomicReference<>();
        Runnable tryOpen = () -> {
            sysAdmin(false);
            try (Uart v = Uart.open("/dev/ttyS1")) {
                second.set(v.path());
            } catch (RuntimeException e) {
                second.set(e);
            } finally {
                sysAdmin(true);
            }
        };
        Thread.ofPlatform().start(tryOpen).join();
        VmSuite.check(second.get() instanceof HwException h && h.errnoValue() == 16,
                "second open of an exclusive port without CAP_SYS_ADMIN: %s", second.get());
        System.out.println("# " + ((HwException) second.get()).getMessage());
        u.setExclusive(false);
        Thread.ofPlatform().start(tryOpen).join();
        VmSuite.equal("/dev/ttyS1", second.get(), "second open once no longer exclusive");
    }

    @VmSuite.Case
    public void close_ends_a_waiting_read() throws Exception {
        for (boolean virtual : new boolean[] {false, true}) {
            Uart u = Uart.open("/dev/ttyS2", UartConfig.of(115_200));
            u.flush(Uart.Queue.INPUT);
            var ex = virtual ? Executors.newVirtualThreadPerTaskExecutor() : Executors.newCachedThreadPool();
            try (ex) {
                Future<Integer> r = ex.submit(() -> u.read(new byte[1], 0, 1, Duration.ofSeconds(30)));
                Thread.sleep(300);
                long t0 = System.nanoTime();
                u.close();
                try {
                    r.get();
                    throw new AssertionError("a read survived close");
                } catch (java.util.concurrent.ExecutionException e) {
                    VmSuite.check(e.getCause() instanceof HwException h && h.errnoValue() == 9,
                            "read ended by close: %s", e.getCause());
                }
                VmSuite.check(ms(t0) < 2000, "close took %d ms to end the read", ms(t0));
            }
        }
    }

    @VmSuite.Case
    public void close_leaves_no_descriptor_or_thread() throws Exception {
        // warm up: classes loaded, the FFM stubs linked, a waiter thread started and ended
        try (Uart u = Uart.open("/dev/ttyS2", UartConfig.of(115_200))) {
            Thread.ofVirtual().start(() -> u.read(new byte[1], 0, 1, Duration.ofMillis(1))).join();
        }
        int fds = Kenv.openFds();
        int threads = platformThreads();
        for (int i = 0; i < 30; i++) {
            try (Uart u = Uart.open(i % 2 == 0 ? "/dev/ttyS1" : "/dev/ttyS2", UartConfig.of(9600 * (1 + i % 12)))) {
                Thread.ofVirtual().start(() -> u.read(new byte[1], 0, 1, Duration.ofMillis(5))).join();
                u.read(new byte[1], 0, 1, Duration.ZERO);
            }
        }
        VmSuite.equal(fds, Kenv.openFds(), "open descriptors after 30 open/read/close");
        VmSuite.equal(threads, platformThreads(), "threads after 30 open/read/close");
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            VmSuite.check(!t.getName().startsWith("parambus-uart "), "thread %s left", t.getName());
        }
    }

    /**
     * The JVM's live threads but for the fork-join pools' workers (the carriers of virtual
     * threads and the common pool, which start and end on their own) and the JIT's (hidden).
     */
    private static int platformThreads() {
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            n += t.getName().startsWith("ForkJoinPool") ? 0 : 1;
        }
        return n;
    }
}
