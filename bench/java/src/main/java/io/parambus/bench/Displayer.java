// SPDX-License-Identifier: MIT
package io.parambus.bench;

import io.parambus.ParamTable;
import io.parambus.ParambusException;
import io.parambus.Sample;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The Displayer of scenario 1's 2 + 2 run in Java (docs/benchmarks.md,
 * Scenario 5): the same process as bench/param-table.c's {@code run --role
 * displayer}, reading through {@link ParamTable} while the C Randomizers of
 * {@code param-table-parambus} write, so that bench/run-java.py reads its
 * figures with bench/run-param-table.py's code.
 *
 * <pre>
 *   Displayer run --role displayer --n N --id K --target INSTANCE
 *                 --start-ns T --windows W [--record 0|1] --out FILE
 * </pre>
 *
 * <p>One iteration reads p000 … p(N-1) with {@link ParamTable#getDouble(int)},
 * then the 64-byte record {@code rec} with {@link ParamTable#read(int, Sample)}:
 * N + 1 operations. Every value is checked as the C Displayer checks it: a
 * double whose two 32-bit halves differ, or a record whose eight 8-byte words
 * differ (or that is not 64 bytes long), is a torn read. Nothing is allocated
 * per iteration.
 *
 * <p>Windows: T is a {@code CLOCK_MONOTONIC} time (ns), the same for every
 * process of the run; window k covers [T + k·100 ms, T + (k+1)·100 ms), and an
 * iteration's operations count in the window in which it ended; an iteration
 * that ends after the last window is not counted. {@code System.nanoTime()}
 * is tied to {@code CLOCK_MONOTONIC} by an offset measured at start
 * ({@code clock_gettime} through the FFM API). Until T the Displayer reads as
 * it will afterwards, uncounted, so that the JIT has compiled its loop when
 * the run begins (the C Displayer, compiled ahead of time, sleeps); torn
 * reads are counted there too.
 *
 * <p>Output: one JSON object in FILE with the C Displayer's fields (variant
 * {@code "java"}). An error of the library ends the run, counted in
 * {@code errors} (the first one on stderr), as in C. Exit status 2 on bad
 * arguments or if the instance cannot be opened.
 *
 * <p>Thread-safety: a program with one thread.
 */
public final class Displayer {
    private static final long WINDOW_NS = 100_000_000L;
    private static final int RECORD_BYTES = 64;
    private static final VarHandle WORDS =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final int CLOCK_MONOTONIC = 1;
    private static final int CLOCK_PROCESS_CPUTIME_ID = 2;
    private static final int SC_CLK_TCK = 2;
    private static final MethodHandle CLOCK_GETTIME;
    private static final MethodHandle SYSCONF;

    static {
        Linker linker = Linker.nativeLinker();
        CLOCK_GETTIME = downcall(linker, "clock_gettime",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
        SYSCONF = downcall(linker, "sysconf",
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    }

    private final ParamTable table;
    private final int[] doubles;
    private final int record;
    private final Sample sample = new Sample();
    private long tornDouble;
    private long tornRecord;
    private long errors;

    private Displayer(ParamTable table, int n, boolean withRecord) {
        this.table = table;
        this.doubles = new int[n];
        for (int i = 0; i < n; i++) {
            doubles[i] = table.index(String.format("p%03d", i));
        }
        this.record = withRecord ? table.index("rec") : -1;
    }

    @SuppressWarnings("restricted")
    private static MethodHandle downcall(Linker linker, String name, FunctionDescriptor fd) {
        MemorySegment f = linker.defaultLookup().find(name)
                .orElseThrow(() -> new IllegalStateException(name + " is not in the C library"));
        return linker.downcallHandle(f, fd);
    }

    /** clock_gettime(clock) in ns. */
    private static long clockNs(int clock) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ts = arena.allocate(16, 8);
            int r = (int) CLOCK_GETTIME.invokeExact(clock, ts);
            if (r != 0) {
                throw new IllegalStateException("clock_gettime(" + clock + ") failed");
            }
            return ts.get(ValueLayout.JAVA_LONG, 0) * 1_000_000_000L + ts.get(ValueLayout.JAVA_LONG, 8);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("clock_gettime: " + t, t);
        }
    }

    private static long clockTicksPerSecond() {
        try {
            return (long) SYSCONF.invokeExact(SC_CLK_TCK);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("sysconf: " + t, t);
        }
    }

    /** utime + stime of this process in clock ticks (/proc/self/stat), or -1. */
    private static long procCpuTicks() {
        try {
            String s = Files.readString(Path.of("/proc/self/stat"), StandardCharsets.US_ASCII);
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The offset to add to System.nanoTime() for CLOCK_MONOTONIC (the tightest of a few tries). */
    private static long monotonicOffset() {
        long best = Long.MAX_VALUE;
        long offset = 0;
        for (int i = 0; i < 20; i++) {
            long a = System.nanoTime();
            long m = clockNs(CLOCK_MONOTONIC);
            long b = System.nanoTime();
            if (b - a < best) {
                best = b - a;
                offset = m - (a + (b - a) / 2);
            }
        }
        return offset;
    }

    /** One iteration; false if the library failed (the run ends, as in C). */
    private boolean iteration() {
        try {
            long torn = 0;
            for (int index : doubles) {
                long bits = Double.doubleToRawLongBits(table.getDouble(index));
                torn += (int) (bits >>> 32) != (int) bits ? 1 : 0;
            }
            tornDouble += torn;
            if (record >= 0) {
                table.read(record, sample);
                tornRecord += recordOk(sample) ? 0 : 1;
            }
            return true;
        } catch (ParambusException e) {
            if (errors++ == 0) {
                System.err.println("Displayer: " + e.getMessage());
            }
            return false;
        }
    }

    private static boolean recordOk(Sample s) {
        if (s.length() != RECORD_BYTES) {
            return false;
        }
        byte[] b = s.bytes();
        long w0 = (long) WORDS.get(b, 0);
        long diff = 0;
        for (int j = 8; j < RECORD_BYTES; j += 8) {
            diff |= (long) WORDS.get(b, j) ^ w0;
        }
        return diff == 0;
    }

    private static void usage() {
        System.err.println("usage: Displayer run --role displayer --n N --id K --target INSTANCE "
                + "--start-ns T --windows W [--record 0|1] --out FILE");
        System.exit(2);
    }

    /**
     * Runs the Displayer (see the class comment).
     *
     * @param args the command line
     * @throws IOException if the output cannot be written
     */
    public static void main(String[] args) throws IOException {
        int n = 200;
        int id = 0;
        int windows = 0;
        long startNs = 0;
        boolean withRecord = true;
        String target = null;
        String out = null;
        if (args.length < 1 || !args[0].equals("run")) {
            usage();
        }
        for (int i = 1; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                usage();
            }
            String v = args[i + 1];
            switch (args[i]) {
                case "--role" -> {
                    if (!v.equals("displayer")) {
                        usage();
                    }
                }
                case "--n" -> n = Integer.parseInt(v);
                case "--id" -> id = Integer.parseInt(v);
                case "--target" -> target = v;
                case "--start-ns" -> startNs = Long.parseLong(v);
                case "--windows" -> windows = Integer.parseInt(v);
                case "--record" -> withRecord = !v.equals("0");
                case "--out" -> out = v;
                default -> usage();
            }
        }
        if (target == null || out == null || windows <= 0 || windows > 100_000 || n <= 0 || n > 200
                || startNs <= 0) {
            usage();
        }
        ParamTable table;
        try {
            table = ParamTable.open(target);
        } catch (ParambusException e) {
            System.err.println("Displayer: " + e.getMessage());
            System.exit(2);
            return;
        }
        try (table) {
            new Displayer(table, n, withRecord).run(n, id, withRecord, startNs, windows, out);
        }
    }

    private void run(int n, int id, boolean withRecord, long startNs, int nwindows, String out)
            throws IOException {
        long perIteration = n + (withRecord ? 1 : 0);
        long[] win = new long[nwindows];
        long offset = monotonicOffset();
        long start = startNs - offset; // in System.nanoTime()'s terms
        long end = start + nwindows * WINDOW_NS;

        // Until the start: the same reads, uncounted (the JIT's warm-up).
        long now = System.nanoTime();
        boolean failed = false;
        while (now < start && !failed) {
            failed = !iteration();
            now = System.nanoTime();
        }
        long lateNs = now - start;
        long ticks0 = procCpuTicks();
        long cpu0 = clockNs(CLOCK_PROCESS_CPUTIME_ID);
        long t0 = now;

        long ops = 0;
        long base = 0;
        long iterations = 0;
        int seen = 0;
        while (!failed) {
            if (!iteration()) {
                break;
            }
            now = System.nanoTime();
            if (now >= end) {
                break; // ended after the run: not counted
            }
            ops += perIteration;
            iterations++;
            int t = (int) ((now - start) / WINDOW_NS);
            if (t != seen && seen < nwindows) {
                win[seen] = ops - base; // later windows up to t stay 0
                base = ops;
                seen = Math.min(t, nwindows);
            }
        }
        if (seen < nwindows) {
            win[seen] = ops - base;
        }
        long t1 = System.nanoTime();
        long ticks1 = procCpuTicks();
        long cpu1 = clockNs(CLOCK_PROCESS_CPUTIME_ID);

        StringBuilder b = new StringBuilder();
        b.append("{\"variant\": \"java\", \"role\": \"displayer\", \"n\": ").append(n)
                .append(", \"record\": ").append(withRecord ? 1 : 0)
                .append(", \"id\": ").append(id).append(", \"hz\": 0,\n \"ops\": ").append(ops)
                .append(", \"iterations\": ").append(iterations)
                .append(", \"ops_per_iteration\": ").append(perIteration)
                .append(",\n \"torn_double\": ").append(tornDouble)
                .append(", \"torn_record\": ").append(tornRecord)
                .append(", \"errors\": ").append(errors)
                .append(",\n \"late_start_ns\": ").append(lateNs)
                .append(", \"elapsed_ns\": ").append(t1 - t0)
                .append(", \"cpu_ticks\": ").append(ticks0 >= 0 && ticks1 >= 0 ? ticks1 - ticks0 : -1)
                .append(", \"clk_tck\": ").append(clockTicksPerSecond())
                .append(", \"cpu_ns\": ").append(cpu1 - cpu0)
                .append(",\n \"windows\": [");
        for (int i = 0; i < nwindows; i++) {
            b.append(i == 0 ? "" : ", ").append(win[i]);
        }
        b.append("]}\n");
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(Path.of(out), StandardCharsets.UTF_8))) {
            w.print(b);
        }
    }
}
