// SPDX-License-Identifier: MIT
package io.parambus.bench;

import io.parambus.ParamTable;
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
 * <li>{@code javaRead}: {@link ParamTable#getDouble(int)} of parameter p000
 * on a table opened read-only, the binding's read in place (the contender);
 * <li>{@code arrayRead}: an element of a plain {@code double[]}, the floor;
 * <li>{@code segmentAcquireRead}: one acquire load of a word of parameter
 * p000's slot in the segment, mapped read-only by the benchmark: the least
 * an in-place read of the segment costs (a consistent read takes at least
 * this load, the value's and a second look at the version);
 * <li>{@code segmentSeqlockRead}: the protocol's read of a scalar double
 * (docs/segment-format.md §4.1: the version with acquire, the value from
 * copy {@code seq & 1}, an acquire fence, the version again, retried while
 * it changed) written by hand on the same mapping, without the binding's
 * index and type checks or its reader's turns: what a Java reader of the
 * segment costs before any API is put around it.
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
    // docs/segment-format.md §2.5: a slot's copies start at 16, a copy's
    // value at 16 within it, a scalar's copies are 24 bytes apart.
    private static final long SLOT_VALUE0 = 16 + 16;
    private static final long SCALAR_COPY_STRIDE = 24;

    private final double[] values = new double[200];
    private int arrayIndex;
    private MappedSegment mapped;
    private MemorySegment segment;
    private long slot;
    private ParamTable table;
    private int index;

    /** Creates the state (JMH does). */
    public ReadBench() {
    }

    /**
     * Opens the instance read-only, maps its segment, and finds p000 in both.
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
        table = ParamTable.open(instance);
        index = table.index("p000");
    }

    /** Closes the table and unmaps the segment. */
    @TearDown(Level.Trial)
    public void close() {
        if (table != null) {
            table.close();
        }
        if (mapped != null) {
            mapped.close();
        }
    }

    /**
     * The protocol's read of p000 by hand (§4.1), retried while a write
     * completed meanwhile.
     *
     * @return the value
     */
    @Benchmark
    public double segmentSeqlockRead() {
        final MemorySegment seg = segment;
        final long s = slot;
        for (;;) {
            long seq = (long) SEGMENT_LONG.getAcquire(seg, s);
            long word = (long) SEGMENT_LONG.getOpaque(seg, s + SLOT_VALUE0 + (seq & 1) * SCALAR_COPY_STRIDE);
            VarHandle.acquireFence();
            if ((long) SEGMENT_LONG.getOpaque(seg, s) == seq) {
                return Double.longBitsToDouble(word);
            }
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
     * The binding's read of one double, in place.
     *
     * @return the value
     */
    @Benchmark
    public double javaRead() {
        return table.getDouble(index);
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
