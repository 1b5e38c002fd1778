// SPDX-License-Identifier: MIT
package io.parambus.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A null call into C, three ways (docs/benchmarks.md, Scenario 5): an FFM
 * downcall, the same downcall linked with {@code Linker.Option.critical(false)}
 * (no thread-state transition: allowed for short calls that do not call back
 * into Java and take no heap memory, as every call the binding makes for a
 * read would be), and a JNI native method. All three call an empty C
 * function of {@code libpbus-bench-null.so}, so what differs is only the
 * transition. The handles are static finals, as a binding declares them, so
 * that the JIT treats them as constants.
 *
 * <p>Thread-safety: the state is read-only after setup.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
public class CallBench {
    // The global arena: the library stays loaded for the life of the JVM,
    // and a symbol of a closeable arena would make every call keep that
    // arena alive (an acquire and a release of its scope per call).
    private static final Arena ARENA = Arena.global();
    private static final MethodHandle NULL_CALL;
    private static final MethodHandle NULL_CALL_CRITICAL;

    static {
        String path = NativeLibrary.path();
        MemorySegment target = lookup(path);
        NULL_CALL = link(target);
        NULL_CALL_CRITICAL = link(target, Linker.Option.critical(false));
        NullJni.load(path);
    }

    // Restricted methods: the benchmark runs with --enable-native-access.
    @SuppressWarnings("restricted")
    private static MemorySegment lookup(String path) {
        return SymbolLookup.libraryLookup(path, ARENA).find("pbus_bench_null")
                .orElseThrow(() -> new IllegalStateException("pbus_bench_null is not in " + path));
    }

    @SuppressWarnings("restricted")
    private static MethodHandle link(MemorySegment target, Linker.Option... options) {
        return Linker.nativeLinker().downcallHandle(target, FunctionDescriptor.ofVoid(), options);
    }

    /** Creates the state (JMH does). */
    public CallBench() {
    }

    /** Calls each function once, so that a missing symbol fails before any timing. */
    @Setup(Level.Trial)
    public void check() {
        try {
            NULL_CALL.invokeExact();
            NULL_CALL_CRITICAL.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException("calling pbus_bench_null: " + t, t);
        }
        NullJni.nothing();
    }

    /** Nothing to release: the library stays loaded for the life of the JVM. */
    @TearDown(Level.Trial)
    public void done() {
    }

    /**
     * The FFM downcall, with the thread-state transition.
     *
     * @throws Throwable never (what {@code invokeExact} declares)
     */
    @Benchmark
    public void ffmNull() throws Throwable {
        NULL_CALL.invokeExact();
    }

    /**
     * The FFM downcall linked as critical (no thread-state transition).
     *
     * @throws Throwable never (what {@code invokeExact} declares)
     */
    @Benchmark
    public void ffmCriticalNull() throws Throwable {
        NULL_CALL_CRITICAL.invokeExact();
    }

    /** The JNI native method. */
    @Benchmark
    public void jniNull() {
        NullJni.nothing();
    }
}
