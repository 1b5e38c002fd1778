package io.parambus.client;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import jdk.jfr.Recording;

/**
 * The programs that the tests run in a JVM of their own (on the class path, without JUnit):
 *
 * <ul>
 * <li>{@code rights INSTANCE SOCKET_DIR}: run as an unprivileged user, it reads and tries
 * to write through the socket client and prints what pbusd answered
 * ({@link WriteRightsTest}).
 * <li>{@code pinning INSTANCE SOCKET_DIR N JFR}: after a warm-up (one virtual thread doing
 * what the waiters do), a JFR recording of {@code jdk.VirtualThreadPinned} (every event, with
 * its stack) of a control that pins on purpose (a virtual thread named {@code control} that
 * sleeps inside an upcall from native code), then of N virtual threads that each wait for a
 * change through the client; dumped to JFR ({@link PinningTest} reads it).
 * </ul>
 */
public final class ChildMain {
    private ChildMain() {
    }

    /** Runs one of the programs; prints its results on stdout, one {@code key value} a line. */
    public static void main(String[] args) throws Throwable {
        switch (args[0]) {
            case "rights" -> rights(args[1], Path.of(args[2]));
            case "pinning" -> pinning(args[1], Path.of(args[2]), Integer.parseInt(args[3]), Path.of(args[4]));
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    private static String errno(Runnable r) {
        try {
            r.run();
            return "ok";
        } catch (io.parambus.ParambusException e) {
            return e.errno();
        }
    }

    private static void rights(String instance, Path socketDir) {
        try (PbusClient c = PbusClient.connect(instance, ClientOptions.defaults().withSocketDir(socketDir).withName("rights"))) {
            System.out.println("uid " + SocketAccess.processUids()[1]);
            System.out.println("get " + errno(() -> c.get("level")));
            System.out.println("set-level " + errno(() -> c.batch().setDouble("level", 1).commit()));
            System.out.println("set-measured_voltage " + errno(() -> c.batch().setDouble("measured_voltage", 1).commit()));
            System.out.println("set-shared " + errno(() -> c.batch().setLong("shared", 1).commit()));
            try {
                c.batch().setLong("shared", 2).setLong("trim", 1).setDouble("measured_voltage", 0).commit();
                System.out.println("batch ok");
            } catch (SetRefusedException e) {
                System.out.println("batch " + e.errno() + " " + java.util.Arrays.toString(e.results()));
                System.out.println("message " + e.getMessage());
            }
            System.out.println("subscribe " + errno(() -> c.subscribe(new int[] {c.schema().find("trim")},
                    SubscribeOptions.defaults()).close()));
        }
    }

    /** The comparator of the control: sleeps inside an upcall, where a virtual thread cannot unmount. */
    static int compareSlowly(MemorySegment a, MemorySegment b) {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return Integer.compare(a.get(ValueLayout.JAVA_INT, 0), b.get(ValueLayout.JAVA_INT, 0));
    }

    @SuppressWarnings("restricted")
    private static void pinOnPurpose() throws Throwable {
        Linker linker = Linker.nativeLinker();
        MethodHandle qsort = linker.downcallHandle(linker.defaultLookup().find("qsort").orElseThrow(),
                FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
        MethodHandle compare = MethodHandles.lookup().findStatic(ChildMain.class, "compareSlowly",
                MethodType.methodType(int.class, MemorySegment.class, MemorySegment.class));
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = Thread.ofVirtual().name("control").start(() -> {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment stub = linker.upcallStub(compare, FunctionDescriptor.of(ValueLayout.JAVA_INT,
                        ValueLayout.ADDRESS.withTargetLayout(ValueLayout.JAVA_INT),
                        ValueLayout.ADDRESS.withTargetLayout(ValueLayout.JAVA_INT)), arena);
                MemorySegment array = arena.allocateFrom(ValueLayout.JAVA_INT, 3, 1, 2);
                qsort.invokeExact(array, 3L, 4L, stub);
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.join();
        if (failure.get() != null) {
            throw failure.get();
        }
    }

    private static void pinning(String instance, Path socketDir, int n, Path jfr) throws Throwable {
        AtomicInteger woke = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        ClientOptions o = ClientOptions.defaults().withSocketDir(socketDir).withName("pinning")
                .withTimeout(Duration.ofSeconds(30)).withDispatcherFactory(Thread.ofVirtual().name("pbus-dispatcher").factory());
        try (PbusClient c = PbusClient.connect(instance, o); Recording recording = new Recording()) {
            int level = c.schema().find("level");
            c.batch().setDouble(level, 1).commit();
            // What the waiters do, once on a virtual thread before the recording starts, so
            // that the classes they use are loaded and initialised and the JDK's poller for
            // virtual threads' I/O is set up: a virtual thread that initialises a class, or
            // waits for another to, is pinned meanwhile (the JVM's doing, not the client's;
            // seen under load), and would hide what is measured here.
            Thread warmUp = Thread.ofVirtual().name("warm-up").start(() -> {
                try {
                    c.get(level).asDouble();
                    try (Subscription s = c.subscribe(new int[] {level}, SubscribeOptions.defaults())) {
                        s.next(Duration.ofSeconds(30));
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            warmUp.join();
            if (failure.get() != null) {
                throw failure.get();
            }
            recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
            recording.start();
            pinOnPurpose();
            System.out.println("control done");
            CountDownLatch ready = new CountDownLatch(n);
            List<Thread> threads = new ArrayList<>();
            for (int k = 0; k < n; k++) {
                threads.add(Thread.ofVirtual().name("waiter-" + k).start(() -> {
                    boolean counted = false;
                    try {
                        if (c.get(level).asDouble() != 1) {
                            throw new AssertionError("get: not the value written");
                        }
                        try (Subscription s = c.subscribe(new int[] {level}, SubscribeOptions.defaults())) {
                            s.next(Duration.ofSeconds(30));
                            ready.countDown();
                            counted = true;
                            List<Value> change;
                            do {
                                change = s.next(Duration.ofSeconds(30));
                            } while (!change.isEmpty() && change.get(0).asDouble() != 42.5);
                            if (!change.isEmpty()) {
                                woke.incrementAndGet();
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    } finally {
                        if (!counted) {
                            ready.countDown();
                        }
                    }
                }));
            }
            if (!ready.await(60, TimeUnit.SECONDS)) {
                throw new AssertionError("the waiters did not all subscribe within 60 s");
            }
            System.out.println("waiting " + n);
            c.batch().setDouble(level, 42.5).commit();
            for (Thread t : threads) {
                t.join(Duration.ofSeconds(60));
            }
            recording.stop();
            recording.dump(jfr);
        }
        if (failure.get() != null) {
            System.out.println("failure " + failure.get());
        }
        System.out.println("woke " + woke.get());
    }
}
