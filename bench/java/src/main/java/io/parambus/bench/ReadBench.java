// SPDX-License-Identifier: MIT
package io.parambus.bench;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
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
 * One double read, three ways (docs/benchmarks.md, Scenario 5), from the
 * instance that bench/run-java.py starts (system property
 * {@code pbus.bench.instance}, schema bench/schemas/param-table.pbs):
 * <ul>
 * <li>{@code arrayRead}: an element of a plain {@code double[]}, the floor;
 * <li>{@code segmentAcquireRead}: one acquire load of a word of parameter
 * p000's slot in the segment, mapped read-only by the benchmark: the least
 * an in-place read of the segment costs (a consistent read takes at least
 * this load, the value's and a second look at the version);
 * </ul>
 * The C read that the runner times beside them is bench/java/native/read-double.c;
 * every benchmark returns its value, which JMH consumes.
 *
 * <p>Thread-safety: one benchmark thread; the state is read-only after setup.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
public class ReadBench {
    private static final VarHandle SEGMENT_LONG = ValueLayout.JAVA_LONG.varHandle();

    private final double[] values = new double[200];
    private int arrayIndex;
    private MappedSegment mapped;
    private MemorySegment segment;
    private long slot;

    /** Creates the state (JMH does). */
    public ReadBench() {
    }

    /**
     * Maps the instance's segment and finds p000.
     *
     * @throws IOException if the segment cannot be mapped
     */
    @Setup(Level.Trial)
    public void open() throws IOException {
        String instance = Instance.name();
        for (int i = 0; i < values.length; i++) {
            values[i] = i * 0.5;
        }
        arrayIndex = 17;
        mapped = new MappedSegment(instance);
        segment = mapped.segment();
        slot = mapped.slotOffset("p000");
    }

    /** Unmaps the segment. */
    @TearDown(Level.Trial)
    public void close() {
        if (mapped != null) {
            mapped.close();
        }
    }

    /**
     * A plain array read: the floor.
     *
     * @return the element
     */
    @Benchmark
    public double arrayRead() {
        return values[arrayIndex];
    }

    /**
     * One acquire load from the mapped segment (p000's version word).
     *
     * @return the word
     */
    @Benchmark
    public long segmentAcquireRead() {
        return (long) SEGMENT_LONG.getAcquire(segment, slot);
    }
}
